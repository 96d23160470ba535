package workload

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/pyrandom"
)

func init() {
	Register(Kind{Name: config.KVTierPressure, New: newKVTierPressure, Estimate: estimateKVTierPressure,
		WorkingSet: (*KVTierPressure)(nil),
		// A pool of 0 is derived from the LMCache server's first tier.
		NeedsL1: func(c *config.Config) bool { return config.DecodeAs[ktpOptions](c).PoolSize == 0 },
		// It needs a second tier to exercise.
		BuiltinLowerTierGB: 4,
	})
}

// KVTierVocabSize is the number of one-token words documents are drawn
// from.
const KVTierVocabSize = 8000

// KVTierPoolSize is the pool: explicit when > 0, else
// max(ceil(overflow x L1_GB x tokens_per_gb / context_length), 1). Without
// either, the error names both ways to give it.
func KVTierPoolSize(explicit int, overflow, l1GB float64, tokensPerGB, contextLength int) (int, error) {
	if explicit > 0 {
		return explicit, nil
	}
	if l1GB <= 0 || tokensPerGB <= 0 {
		return 0, errors.New("kv-tier-pressure needs a pool size: give --ktp-pool-size, or --lmcache-url of an LMCache server whose /status reports storage_manager.l1_manager.memory_total_bytes (with --tokens-per-gb-kvcache)")
	}
	n := math.Ceil(overflow * l1GB * float64(tokensPerGB) / float64(contextLength))
	if n > config.MaxCount {
		return 0, fmt.Errorf("kv-tier-pressure: a pool of %.0f documents (--ktp-overflow-factor %g x L1 %.1f GB) is over the limit of %d; give --ktp-pool-size", n, overflow, l1GB, config.MaxCount)
	}
	return max(int(n), 1), nil
}

// KVTierWarmupGroups cuts the pool into consecutive groups of per
// documents, the last one back-filled from the start (pool 10, 4 per
// request: 0-3, 4-7, 8 9 0 1).
func KVTierWarmupGroups(pool, per int) [][]int {
	var groups [][]int
	for start := 0; start < pool; start += per {
		g := make([]int, per)
		for k := range g {
			g[k] = (start + k) % pool
		}
		groups = append(groups, g)
	}
	return groups
}

// kvTierAccess draws each request's documents as LMCache does, from one
// random.Random(seed) for the whole run: sample(range(pool), k) when skew
// is 0; else, k times, choices(range(len(remaining)), weights=remaining)
// with weight 1/(i+1)^skew for document i (document 0 hottest), the
// drawn document taken out of the remaining ones. The order within a
// request is the draw order.
type kvTierAccess struct {
	rng     *pyrandom.Random
	pool    int
	weights []float64 // nil when uniform
	left    []int
	w       []float64
}

func newKVTierAccess(pool int, skew float64, seed int64) *kvTierAccess {
	a := &kvTierAccess{rng: pyrandom.New(seed), pool: pool}
	if skew > 0 {
		a.weights = make([]float64, pool)
		for i := range a.weights {
			// Python's 1.0 / ((i + 1) ** skew).
			a.weights[i] = 1 / math.Pow(float64(i+1), skew)
		}
	}
	return a
}

// draw returns k distinct documents.
func (a *kvTierAccess) draw(k int) []int {
	if a.weights == nil {
		return a.rng.Sample(a.pool, k)
	}
	a.left = a.left[:0]
	for i := 0; i < a.pool; i++ {
		a.left = append(a.left, i)
	}
	a.w = append(a.w[:0], a.weights...)
	out := make([]int, 0, k)
	for j := 0; j < k; j++ {
		c := a.rng.WeightedChoices(a.w, 1)[0]
		out = append(out, a.left[c])
		a.left = slices.Delete(a.left, c, c+1)
		a.w = slices.Delete(a.w, c, c+1)
	}
	return out
}

// KVTierWords is n words of pool drawn with random.Random(seed+off).choice,
// joined by the pool's convention: LMCache's _generate_text.
func KVTierWords(pool TokenPool, n int, seed, off int64) string {
	rng := pyrandom.NewSum(seed, off)
	words := make([]string, n)
	for k := range words {
		words[k] = pyrandom.ChoiceOf(rng, pool.Words)
	}
	return pool.Join(words)
}

// KVTierPressure keeps a working set of documents larger than the first
// cache tier, each request carrying a sampled subset of it, so that the
// second tier has to serve hits.
type KVTierPressure struct {
	opts                       ktpOptions
	p                          Params
	pool, per, context, system int
	requests, inflight, maxOut int
	overflow, skew, l1GB       float64
	warmGroups                 int
	warm, measured             tally
	firstPrompt                *int
	blend                      *LookupTotals // the warmup sweep's lookups, when checked
	counters                   *LookupTotals // the measured phase's lookups, when they moved
	lookups                    LookupSource
	vocab                      TokenPool // one-token words, learned through the engine
	stopped                    string    // why the run stopped before its measured phase
	// The expectation's receipts: measured requests whose documents (or,
	// for the system prompt, any earlier request) had been prefilled.
	docDone          map[int]float64
	anyDone          float64
	docHits, sysHits judge
	unjudged         int
}

func newKVTierPressure(ctx context.Context, p Params) (Workload, error) {
	c := p.Config
	o := config.DecodeAs[ktpOptions](c)
	w := &KVTierPressure{
		opts:     o,
		p:        p,
		per:      o.DocsPerRequest,
		context:  o.ContextLength,
		system:   o.SystemPromptLength,
		requests: o.NumRequests,
		inflight: o.NumInflightRequests,
		maxOut:   o.MaxOutputLength,
		overflow: o.OverflowFactor,
		skew:     o.AccessSkew,
		l1GB:     p.L1GB,
		lookups:  p.Lookups,
	}
	var err error
	if w.pool, err = KVTierPoolSize(o.PoolSize, w.overflow, w.l1GB, p.TokensPerGB, w.context); err != nil {
		return nil, err
	}
	if w.per > w.pool {
		return nil, fmt.Errorf("--ktp-docs-per-request must be <= the pool size %d (got %d)", w.pool, w.per)
	}
	w.warmGroups = len(KVTierWarmupGroups(w.pool, w.per))
	w.docDone = map[int]float64{}
	// The vocabulary is learned before the run folder exists, so an
	// engine without a tokenizer stops the run with nothing sent (exit 3).
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if w.vocab, err = p.vocabulary(ctx, KVTierVocabSize, p.Seed); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *KVTierPressure) Name() string { return config.KVTierPressure }

func (w *KVTierPressure) workingSet() int { return w.pool * w.context }

func (w *KVTierPressure) Describe() []string {
	src := "--ktp-pool-size"
	if w.opts.PoolSize == 0 {
		src = fmt.Sprintf("%g x L1 %.2f GB x %d tokens/GB / %d", w.overflow, w.l1GB, w.p.TokensPerGB, w.context)
	}
	lines := []string{
		fmt.Sprintf("kv-tier-pressure: pool of %d documents of %d tokens (%s), working set %d tokens", w.pool, w.context, src, w.workingSet()),
		fmt.Sprintf("kv-tier-pressure: %d requests of %d documents (+ a %d-token system prompt), skew %g, %d in flight, max_tokens %d",
			w.requests, w.per, w.system, w.skew, w.inflight, w.maxOut),
	}
	if w.p.Warmup() {
		lines = append(lines, fmt.Sprintf("kv-tier-pressure: warmup sweep of %d requests covers the pool once", w.warmGroups))
	}
	return lines
}

// messages builds one request: the system message (if any), then one
// user message with its documents joined by a blank line.
func (w *KVTierPressure) messages(system string, docs []string, ids []int) []sender.Message {
	var msgs []sender.Message
	if system != "" {
		msgs = append(msgs, sender.Message{Role: "system", Content: system})
	}
	parts := make([]string, len(ids))
	for k, d := range ids {
		parts[k] = docs[d]
	}
	return append(msgs, sender.Message{Role: "user", Content: strings.Join(parts, "\n\n")})
}

func (w *KVTierPressure) Run(ctx context.Context, env Env) error {
	vocab := w.vocab
	var err error
	if len(vocab.Words) < KVTierVocabSize {
		env.Logf("kv-tier-pressure: the engine's tokenizer gave %d one-token words of the %d wanted; documents draw from those", len(vocab.Words), KVTierVocabSize)
	}
	system := ""
	if w.system > 0 {
		system = KVTierWords(vocab, w.system, w.p.Seed, 2)
	}
	docs := make([]string, w.pool)
	for i := range docs {
		docs[i] = KVTierWords(vocab, w.context, w.p.Seed, 1+int64(i))
	}
	build := func(id, phase string, ids []int, maxTokens int) *sender.Request {
		r := &sender.Request{
			ID: id, Phase: phase, Endpoint: w.p.Endpoint,
			Messages: w.messages(system, docs, ids), MaxTokens: maxTokens,
			Documents: ids,
		}
		setPrompt(r)
		return r
	}

	if w.p.Warmup() {
		groups := KVTierWarmupGroups(w.pool, w.per)
		warm := make([]*sender.Request, len(groups))
		for g, ids := range groups {
			warm[g] = build(fmt.Sprintf("warm%d", g), sender.PhaseWarmup, ids, 1)
		}
		check := w.lookups != nil && w.per > 1
		var before LookupTotals
		if check {
			before, err = w.lookups(ctx)
			if err != nil {
				env.Logf("kv-tier-pressure: blend check skipped: %v", err)
				check = false
			}
		}
		env.Phase("warmup", len(warm), 0)
		runBounded(ctx, env, warm, w.inflight, func(r sender.Result) { w.warm.add(&r); w.prefilled(&r) })
		if ctx.Err() != nil {
			return nil
		}
		if check {
			after, err := w.lookups(ctx)
			if err != nil {
				env.Logf("kv-tier-pressure: blend check skipped: %v", err)
			} else {
				d := after.Sub(before)
				w.blend = &d
				switch d.InUse() {
				case LookupBlend:
					env.Logf("kv-tier-pressure: blend check passed: the server serves documents with blended lookups (%d of %d tokens hit)", d.BlendHit, d.BlendRequested)
				case LookupNone:
					env.Logf("kv-tier-pressure: blend check: neither lookup family moved during the warmup sweep; is --lmcache-url the server this engine uses?")
				case LookupPrefix:
					w.stopped = "kv-tier-pressure: the LMCache server is not blending: its lookups are prefix-chained, which cannot reuse documents sent in random order; use --ktp-docs-per-request 1 or a blending setup"
					return errors.New(w.stopped)
				}
			}
		}
	}

	access := newKVTierAccess(w.pool, w.skew, w.p.Seed)
	reqs := make([]*sender.Request, w.requests)
	for i := range reqs {
		reqs[i] = build(fmt.Sprintf("sample%d", i), sender.PhaseMeasured, access.draw(w.per), w.maxOut)
	}
	var before LookupTotals
	haveBefore := false
	if w.lookups != nil {
		if t, err := w.lookups(ctx); err == nil {
			before, haveBefore = t, true
		}
	}
	env.Phase("measuring", len(reqs), 0)
	runBounded(ctx, env, reqs, w.inflight, func(r sender.Result) {
		w.measured.add(&r)
		w.judge(&r)
		if w.firstPrompt == nil && r.RequestID == "sample0" && r.PromptTokens != nil {
			n := *r.PromptTokens
			w.firstPrompt = &n
		}
	})
	if haveBefore {
		if after, err := w.lookups(context.WithoutCancel(ctx)); err == nil {
			if d := after.Sub(before); d.moved() {
				w.counters = &d
			}
		}
	}
	return nil
}

// prefilled notes the documents a successful request put in the cache.
func (w *KVTierPressure) prefilled(r *sender.Result) {
	if !r.Successful {
		return
	}
	if w.anyDone == 0 || r.FinishTime < w.anyDone {
		w.anyDone = r.FinishTime
	}
	for _, d := range r.Documents {
		if t, ok := w.docDone[d]; !ok || r.FinishTime < t {
			w.docDone[d] = r.FinishTime
		}
	}
}

// judge judges a measured request on both expectations: its documents
// reused (when each had been prefilled before it was sent), its system
// prompt reused (when any request had finished before it was sent).
func (w *KVTierPressure) judge(r *sender.Result) {
	all := len(r.Documents) > 0
	for _, d := range r.Documents {
		if t, ok := w.docDone[d]; !ok || t > r.SubmitTime {
			all = false
		}
	}
	if all {
		w.docHits.add(r, reuses(w.system+w.per*w.context))
	} else {
		w.unjudged++
	}
	if w.anyDone > 0 && w.anyDone <= r.SubmitTime {
		w.sysHits.add(r, reuses(w.system))
	}
	w.prefilled(r)
}

// expectation: with one document per request, or a server that blends,
// every request whose documents were prefilled reuses them although the
// working set overflows the first tier: the next tier serves what the
// first evicted (unless the engine's tiers are known and too small:
// then some miss). With several documents in random order and no
// blending, a prefix cache reuses only the system prompt.
func (w *KVTierPressure) expectation() *record.Expectation {
	if w.stopped != "" {
		return expect("the measured phase ran", record.VerdictUnknown, w.stopped)
	}
	b := w.p.budget()
	set := w.workingSet() + w.system
	part := w.system + w.per*w.context
	blends := w.blend != nil && w.blend.InUse() == LookupBlend
	if w.per > 1 && !blends {
		expected := fmt.Sprintf("a prefix cache reuses only the system prompt (%s tokens): the %d documents of a request come in random order, which only a blending cache reuses", group(w.system), w.per)
		if w.system == 0 {
			return expect(expected, record.VerdictUnknown, "no system prompt (--ktp-system-prompt-length 0): nothing a prefix cache is sure to reuse")
		}
		reason := "requests: " + w.sysHits.count("reused the system prompt", " (a hit caches at least half of it)") + "; hit ratio " + report.PercentText(w.measured.HitRatio) + interrupted(w.measured.Requests, w.requests)
		return expect(expected, w.sysHits.verdict(), reason)
	}
	reason := "requests: " + w.docHits.count("reused their documents", fmt.Sprintf(" (a hit caches at least half of their %s tokens with the system prompt)", group(part)))
	if w.unjudged > 0 {
		reason += fmt.Sprintf("; %d sent before all their documents were prefilled (not judged)", w.unjudged)
	}
	reason += "; hit ratio " + report.PercentText(w.measured.HitRatio) + interrupted(w.measured.Requests, w.requests)
	how := "each request's document is its prefix"
	if w.per > 1 {
		how = "the server blends documents in any order"
	}
	if b.Engine && b.Tokens > 0 {
		tiers, cache := b.Tokens+b.LowerTokens, b.text()
		if b.LowerTokens > 0 {
			cache += fmt.Sprintf(" and its next tier (%s together)", tokens(tiers))
		}
		if set > tiers {
			return expect(fmt.Sprintf("some requests miss their documents: the working set (%s) exceeds %s", tokens(set), cache),
				w.docHits.someMiss(), reason)
		}
		return expect(fmt.Sprintf("every request reuses its documents (%s): the working set (%s) fits %s", how, tokens(set), cache),
			w.docHits.verdict(), reason)
	}
	return expect(fmt.Sprintf("every request reuses its documents (%s): the working set (%s) overflows the first tier and the next tier serves what it evicts", how, tokens(set)),
		w.docHits.verdict(), reason)
}

func (w *KVTierPressure) Outcome() Outcome {
	warmSweep := 0
	if w.p.Warmup() {
		warmSweep = w.warmGroups
	}
	block := map[string]any{
		"pool_size":             w.pool,
		"docs_per_request":      w.per,
		"working_set_tokens":    w.workingSet(),
		"access_skew":           w.skew,
		"warmup_sweep_requests": warmSweep,
		"tokens_per_request":    w.firstPrompt,
		"vocabulary_words":      len(w.vocab.Words),
		"observed":              &w.measured,
		"warmup":                &w.warm,
		"expectation":           w.expectation(),
	}
	rows := []report.Row{
		{Label: "Pool (documents x tokens)", Value: fmt.Sprintf("%d x %d", w.pool, w.context)},
		{Label: "Working set (tokens)", Value: report.Int(w.workingSet())},
		{Label: "Documents per request", Value: report.Int(w.per)},
		{Label: "Access skew", Value: fmt.Sprintf("%g", w.skew)},
		{Label: "Warmup sweep requests", Value: report.Int(warmSweep)},
		{Label: "Tokens per request", Value: optInt(w.firstPrompt)},
	}
	if w.blend != nil {
		block["blend_check"] = map[string]any{"in_use": w.blend.InUse(), "lookups": w.blend}
		rows = append(rows, report.Row{Label: "Blend check", Value: w.blend.InUse()})
	}
	if d := w.counters; d != nil {
		hit, req := d.inUseTotals()
		block["hit_tokens_total"] = hit
		block["requested_tokens_total"] = req
		var perReq, rate *float64
		if n := w.measured.Requests; n > 0 {
			x := float64(hit) / float64(n)
			perReq = &x
		}
		if req > 0 {
			x := 100 * float64(hit) / float64(req)
			rate = &x
		}
		block["hit_tokens_per_request"] = perReq
		block["hit_token_rate_pct"] = rate
		rows = append(rows,
			report.Row{Label: "Server hit / requested tokens", Value: fmt.Sprintf("%d / %d", hit, req)},
			report.Row{Label: "Server hit tokens per request", Value: report.OptFloat(perReq)},
			report.Row{Label: "Server hit token rate (%)", Value: report.OptFloat(rate)},
		)
	}
	rows = append(rows, w.measured.rows("Measured ")...)
	o := Outcome{Block: block, Sections: []report.Section{{Title: "KV Tier Pressure", Rows: rows}}}
	if w.stopped != "" {
		block["stopped"] = w.stopped
		o.Failed, o.Reasons = true, []string{w.stopped}
	}
	return o
}

// PlanStreams: the in-flight setting; the warmup sweep holds as many in
// flight, and neither the cap nor the rate applies to it.
func (w *KVTierPressure) PlanStreams(ls load.Settings) StreamPlan {
	p := measuredStreams(ls, min(w.inflight, w.requests), "--ktp-num-inflight-requests", expectedLatency(w.per*w.context+w.system, w.maxOut))
	if w.p.Warmup() {
		p = p.atLeast(min(w.inflight, w.warmGroups), "--ktp-num-inflight-requests")
	}
	return p
}

// SizeWorkingSet: pool = size / context length (--ktp-pool-size); a
// request of one document reuses the system prompt and its document, one
// of several (in random order, no blending assumed) the system prompt.
func (*KVTierPressure) SizeWorkingSet(c *config.Config, tokens float64, _ int) (WorkingSet, error) {
	o := config.DecodeAs[ktpOptions](c)
	ctx := o.ContextLength
	n, err := units(config.KVTierPressure, tokens, ctx, "document")
	if err != nil {
		return WorkingSet{}, err
	}
	if err := c.Set("ktp_pool_size", n); err != nil {
		return WorkingSet{}, err
	}
	reusable := o.SystemPromptLength
	if o.DocsPerRequest == 1 {
		reusable += ctx
	}
	return WorkingSet{Tokens: n * ctx, Count: n, Unit: ctx, What: "documents", Reusable: max(reusable, 1)}, nil
}

// estimateKVTierPressure sizes its plan from its settings.
func estimateKVTierPressure(c *config.Config, tokensPerGB int) Plan {
	o := config.DecodeAs[ktpOptions](c)
	// The documents are built ahead, the measured requests too. A
	// derived pool is sized from the server's L1 capacity at start-up,
	// so only an explicit one can be estimated here.
	l, per, n := float64(o.ContextLength), float64(o.DocsPerRequest), float64(o.NumRequests)
	pool := math.Max(float64(o.PoolSize), per)
	return Plan{Requests: n + pool/per + 1, Tokens: pool*l + n*(per*l+float64(o.SystemPromptLength)),
		Flags: []string{"--ktp-num-requests", "--ktp-docs-per-request", "--ktp-context-length", "--ktp-pool-size"}}
}

// ktpOptions are its settings (its rows in config), decoded once.
type ktpOptions struct {
	PoolSize            int     `setting:"ktp_pool_size"`
	OverflowFactor      float64 `setting:"ktp_overflow_factor"`
	DocsPerRequest      int     `setting:"ktp_docs_per_request"`
	ContextLength       int     `setting:"ktp_context_length"`
	SystemPromptLength  int     `setting:"ktp_system_prompt_length"`
	NumRequests         int     `setting:"ktp_num_requests"`
	AccessSkew          float64 `setting:"ktp_access_skew"`
	NumInflightRequests int     `setting:"ktp_num_inflight_requests"`
	MaxOutputLength     int     `setting:"ktp_max_output_length"`
}
