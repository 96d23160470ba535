package workload

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/stats"
	"github.com/kvbench/kvbench/config"
)

func init() {
	Register(Kind{Name: config.RandomPrefill, New: newRandomPrefill, Rebuildable: true, Estimate: estimateRandomPrefill})
}

// RandomPrefill sends unique prompts all at once with max_tokens 1: every
// request should be a cold prefill.
type RandomPrefill struct {
	p        Params
	length   int
	n        int
	observed tally
	colds    judge
	agg      stats.PrefillAggregate
}

func newRandomPrefill(ctx context.Context, p Params) (Workload, error) {
	o := config.DecodeAs[rpOptions](p.Config)
	return &RandomPrefill{
		p:      p,
		length: o.RequestLength,
		n:      o.NumRequests,
	}, nil
}

// RandomPrefillPrompt is `Request i: ` + max(L-10, 1) words "hi".
func RandomPrefillPrompt(i, length int) string {
	return randomPrefillPrompt(i, randomPrefillTail(length))
}

// randomPrefillTail is the words every prompt of length tokens ends in.
func randomPrefillTail(length int) string { return repeatWord(wordHi, max(length-10, 1)) }

func randomPrefillPrompt(i int, tail string) string {
	return "Request " + strconv.Itoa(i) + ": " + tail
}

func (w *RandomPrefill) Name() string { return config.RandomPrefill }

func (w *RandomPrefill) Describe() []string {
	return []string{fmt.Sprintf("random-prefill: %d requests of %d tokens, all sent at once, max_tokens 1", w.n, w.length)}
}

func (w *RandomPrefill) Run(ctx context.Context, env Env) error {
	// A shard sends every Nth request; ids stay those of the whole run.
	// Requests are built as they are dispatched, a bounded look-ahead
	// before their turn, so a million of them are never held at once.
	sh := w.p.shard()
	owned := w.p.owned(w.n)
	tail := randomPrefillTail(w.length)
	build := func(i int) *sender.Request {
		if !sh.Owns(i) {
			return nil
		}
		r := &sender.Request{
			ID: "prefill_" + strconv.Itoa(i), Phase: sender.PhaseMeasured, Endpoint: w.p.Endpoint,
			Messages:  []sender.Message{{Role: "user", Content: randomPrefillPrompt(i, tail)}},
			MaxTokens: 1,
		}
		setPrompt(r)
		return r
	}
	env.Phase("measuring", owned, 0)
	runStream(ctx, env, ahead(ctx, w.n, build), owned, func(r sender.Result) { w.Observe(&r) })
	return nil
}

// ShardOf: request prefill_i is sent by the shard i mod count.
func (w *RandomPrefill) ShardOf(id string, count int) (int, bool) {
	n, ok := idNumbers(id, "prefill_")
	if !ok || n[0] >= w.n {
		return 0, false
	}
	return n[0] % count, true
}

// Observe adds one finished request to the outcome.
func (w *RandomPrefill) Observe(r *sender.Result) {
	w.observed.add(r)
	w.colds.add(r, cold)
	w.agg.Add(r)
}

func (w *RandomPrefill) Outcome() Outcome {
	agg := w.agg.Value()
	block := map[string]any{
		"num_requests":   w.n,
		"request_length": w.length,
		"expectation": expect("every request is a cold prefill: no two prompts share a prefix",
			w.colds.verdict(), "requests: "+w.colds.count("cold", " (cached under a tenth of the prompt)")+"; hit ratio "+report.PercentText(w.observed.HitRatio)+interrupted(w.observed.Requests, w.p.owned(w.n))),
		"observed":               &w.observed,
		"aggregate_prefill_tps":  agg,
		"target_prompt_tokens":   w.length,
		"observed_prompt_tokens": w.observed.meanPrompt(),
	}
	rows := []report.Row{
		{Label: "Target / observed prompt tokens", Value: fmt.Sprintf("%d / %s", w.length, report.Tokens(w.observed.meanPrompt()))},
	}
	rows = append(rows, w.observed.rows("Observed ")...)
	rows = append(rows, report.Row{Label: "Aggregate prefill (tok/s)", Value: report.OptFloat(agg)})
	return Outcome{Block: block, Sections: []report.Section{{Title: "Random Prefill", Rows: rows}}}
}

// PlanWarnings checks the prompts against the engine's context.
func (w *RandomPrefill) PlanWarnings(_ context.Context, pc PlanCheck) []string {
	longest := w.length + templatePerMessage + templatePerRequest + pc.SaltTokens
	if msg := contextWarning("random-prefill", longest, "its prompts", pc.ContextLength); msg != "" {
		return []string{msg}
	}
	return nil
}

// PlanStreams: every request at once, unless the cap or the rate holds
// fewer in flight.
func (w *RandomPrefill) PlanStreams(ls load.Settings) StreamPlan {
	return measuredStreams(ls, w.p.owned(w.n), "--rp-num-requests", expectedLatency(w.length, 1))
}

// estimateRandomPrefill sizes its plan from its settings.
func estimateRandomPrefill(c *config.Config, tokensPerGB int) Plan {
	o := config.DecodeAs[rpOptions](c)
	// Prompts are built as they are dispatched: those in flight and
	// the look-ahead are held at once (every one when all go at once).
	n, l := float64(o.NumRequests), float64(o.RequestLength)
	ls, _ := load.FromConfig(c) // an invalid load is refused later, naming its flag
	held := math.Min(n, float64(measuredStreams(ls, int(min(n, math.MaxInt32)), "", expectedLatency(int(min(l, math.MaxInt32)), 1)).Streams)+lookAhead)
	return Plan{Requests: n, Tokens: held * l, Flags: []string{"--rp-num-requests", "--rp-request-length"}}
}

// rpOptions are its settings (its rows in config), decoded once.
type rpOptions struct {
	RequestLength int `setting:"rp_request_length"`
	NumRequests   int `setting:"rp_num_requests"`
}
