package workload

import (
	"context"
	"fmt"
	"github.com/kvbench/kvbench/bench/load"
	"math"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/pyrandom"
)

func init() {
	Register(Kind{Name: config.PrefixSuffixTuner, New: newPrefixSuffixTuner,
		Estimate: estimatePrefixSuffixTuner, WorkingSet: (*PrefixSuffixTuner)(nil)})
}

const (
	// psfBreakerTokens is the random breaker's length.
	psfBreakerTokens = 32
	// psfMinSuffix is the shortest suffix allowed.
	psfMinSuffix = 100
	// psfOverflow sizes the prefix pool just over the targeted tier:
	// under LRU with sequential same-order replay, 5% is enough for every
	// pass-2 request to miss it.
	psfOverflow = 1.05
	// psfIDTokens is what the `PREFIX_xxxxxxxx` and `BR_xxxxxxxx` headers
	// are counted as (LMCache's estimate; see docs/workloads.md for the
	// built-in engine's exact counts).
	psfIDTokens = 4
)

// PrefixSuffixSplit returns prefix_tokens = max(1, round_half_even(context
// x ratio)) and suffix_tokens = context - prefix - 32, or the error when
// the suffix would be shorter than 100 tokens.
func PrefixSuffixSplit(context int, ratio float64) (prefix, suffix int, err error) {
	prefix = max(1, int(math.RoundToEven(float64(context)*ratio)))
	suffix = context - prefix - psfBreakerTokens
	if suffix < psfMinSuffix {
		return prefix, suffix, fmt.Errorf("suffix_tokens=%d is below minimum %d; reduce prefix_ratio or increase context_length", suffix, psfMinSuffix)
	}
	return prefix, suffix, nil
}

// PrefixSuffixPrefixes is max(int(thrash x 1.05 x tokens_per_gb /
// context_length), 1): the pool is counted in whole contexts, since every
// request's whole context (prefix, breaker and suffix) lands in the cache.
func PrefixSuffixPrefixes(thrashGB float64, tokensPerGB, contextTokens int) int {
	return atLeast1(thrashGB * psfOverflow * float64(tokensPerGB) / float64(contextTokens))
}

// psfSettle is the pause between pass 1 and pass 2, so that the engine's
// tiers finish moving blocks before pass 2 probes them (LMCache's 5 s).
var psfSettle = 5 * time.Second

// PrefixSuffixPrefix is prefix i: `PREFIX_` and 8 lowercase hex digits of
// i, then max(n-4, 1) words "hi".
func PrefixSuffixPrefix(i, n int) string {
	return fmt.Sprintf("PREFIX_%08x ", i) + repeatWord(wordHi, max(n-psfIDTokens, 1))
}

// PrefixSuffixBreaker is `BR_` and 8 hex digits of the next
// randrange(2**32) of rng, then 28 words "hi".
func PrefixSuffixBreaker(rng *pyrandom.Random) string {
	return fmt.Sprintf("BR_%08x ", rng.Randrange(0, 1<<32)) + repeatWord(wordHi, max(psfBreakerTokens-psfIDTokens, 1))
}

// psfEngineWarmup is the throw-away request's prompt, LMCache's.
const psfEngineWarmup = "Hello"

// PrefixSuffixSuffix is the shared suffix: `SUFFIX` then max(n-1, 1)
// words "hi".
func PrefixSuffixSuffix(n int) string {
	return "SUFFIX " + repeatWord(wordHi, max(n-1, 1))
}

// PrefixSuffixTuner sends a pool of prefixes sized just over a cache tier
// twice, in the same order, one request at a time: pass 2 should miss the
// targeted tier on every request.
type PrefixSuffixTuner struct {
	p                   Params
	context             int
	ratio, thrash       float64
	prefix, suffix, num int
	pass1, pass2        tally
	hits                judge // pass 2: requests that reused their prefix
}

func newPrefixSuffixTuner(ctx context.Context, p Params) (Workload, error) {
	c := p.Config
	o := config.DecodeAs[psfOptions](c)
	w := &PrefixSuffixTuner{
		p:       p,
		context: o.ContextLength,
		ratio:   o.PrefixRatio,
		thrash:  o.Thrash,
	}
	if p.TokensPerGB <= 0 {
		return nil, fmt.Errorf("--tokens-per-gb-kvcache must be > 0 for %s (or give --lmcache-url)", config.PrefixSuffixTuner)
	}
	var err error
	if w.prefix, w.suffix, err = PrefixSuffixSplit(w.context, w.ratio); err != nil {
		return nil, err
	}
	w.num = PrefixSuffixPrefixes(w.thrash, p.TokensPerGB, w.context)
	return w, nil
}

func (w *PrefixSuffixTuner) Name() string { return config.PrefixSuffixTuner }

// poolTokens is what the pool puts in the cache: whole contexts.
func (w *PrefixSuffixTuner) poolTokens() int { return w.num * w.context }

// poolGB is the pool's size in GB at the run's tokens per GB.
func (w *PrefixSuffixTuner) poolGB() float64 {
	return float64(w.poolTokens()) / float64(w.p.TokensPerGB)
}

// targetGB is the size the pool is made to reach: the tier x 1.05.
func (w *PrefixSuffixTuner) targetGB() float64 { return w.thrash * psfOverflow }

func (w *PrefixSuffixTuner) Describe() []string {
	return []string{
		fmt.Sprintf("prefix-suffix-tuner: %d contexts of %d tokens: prefix %d, breaker %d, shared suffix %d",
			w.num, w.context, w.prefix, psfBreakerTokens, w.suffix),
		fmt.Sprintf("prefix-suffix-tuner: target tier %g GB x %.2f = %.2f GB; pool %d tokens (%.2f GB, %.2fx the tier)",
			w.thrash, psfOverflow, w.targetGB(), w.poolTokens(), w.poolGB(), w.poolGB()/w.thrash),
		fmt.Sprintf("prefix-suffix-tuner: engine warmup, pass 1 (warmup), a %s settle, then pass 2 (measured), %d requests each, one at a time, max_tokens 1", psfSettle, w.num),
	}
}

func (w *PrefixSuffixTuner) Run(ctx context.Context, env Env) error {
	prefixes := make([]string, w.num)
	for i := range prefixes {
		prefixes[i] = PrefixSuffixPrefix(i, w.prefix)
	}
	suffix := PrefixSuffixSuffix(w.suffix)
	// LMCache's breakers: one random.Random(seed+2) for the whole run.
	rng := pyrandom.NewSum(w.p.Seed, 2)
	build := func(id, phase string, i int) *sender.Request {
		// A fresh breaker for every request, pass 2 included.
		content := prefixes[i] + " " + PrefixSuffixBreaker(rng) + " " + suffix
		r := &sender.Request{
			ID: id, Phase: phase, Endpoint: w.p.Endpoint,
			Messages: []sender.Message{{Role: "user", Content: content}}, MaxTokens: 1,
		}
		setPrompt(r)
		return r
	}
	// Requests are built as they are sent, so only one prompt is held.
	pass := func(name, phase, prefix string, t *tally) {
		if name != "" {
			env.Phase(name, w.num, 0)
		}
		for i := 0; i < w.num && ctx.Err() == nil; i++ {
			req := build(fmt.Sprintf("%s_p%d", prefix, i), phase, i)
			req.HeldBack = i > 0 // each request waits for the one before
			res, ok := env.Send(ctx, req)
			if !ok {
				return
			}
			t.add(&res)
			if phase == sender.PhaseMeasured {
				w.hits.add(&res, reuses(w.prefix))
			}
		}
	}
	if w.p.Warmup() {
		// A throw-away request first, so that pass 1 does not pay the
		// engine's first-request costs.
		env.Phase("warmup", w.num+1, 0)
		throwAway := &sender.Request{
			ID: "engine_warmup", Phase: sender.PhaseWarmup, Endpoint: w.p.Endpoint,
			Messages: []sender.Message{{Role: "user", Content: psfEngineWarmup}}, MaxTokens: 1,
		}
		setPrompt(throwAway)
		if _, ok := env.Send(ctx, throwAway); !ok {
			return nil
		}
		pass("", sender.PhaseWarmup, "pass1", &w.pass1)
		if ctx.Err() != nil {
			return nil
		}
		env.Logf("prefix-suffix-tuner: waiting %s for the engine's tiers to settle before pass 2", psfSettle)
		select {
		case <-time.After(psfSettle):
		case <-ctx.Done():
			return nil
		}
	}
	pass("measuring", sender.PhaseMeasured, "pass2", &w.pass2)
	return nil
}

func (w *PrefixSuffixTuner) Outcome() Outcome {
	target := w.context
	block := map[string]any{
		"context_length":         w.context,
		"prefix_ratio":           w.ratio,
		"thrash_gb":              w.thrash,
		"prefix_tokens":          w.prefix,
		"breaker_tokens":         psfBreakerTokens,
		"suffix_tokens":          w.suffix,
		"num_prefixes":           w.num,
		"pool_tokens":            w.poolTokens(),
		"pool_gb":                w.poolGB(),
		"target_tier_gb":         w.targetGB(),
		"overflow_factor":        psfOverflow,
		"expectation":            w.expectation(),
		"observed":               &w.pass2,
		"pass1":                  &w.pass1,
		"target_prompt_tokens":   target,
		"observed_prompt_tokens": w.pass2.meanPrompt(),
	}
	rows := []report.Row{
		{Label: "Prefixes (pool GB / tier GB)", Value: fmt.Sprintf("%d (%.2f / %g)", w.num, w.poolGB(), w.thrash)},
		{Label: "Target tier (GB, x1.05)", Value: fmt.Sprintf("%.2f", w.targetGB())},
		{Label: "Pool tokens", Value: report.Int(w.poolTokens())},
		{Label: "Prefix / breaker / suffix tokens", Value: fmt.Sprintf("%d / %d / %d", w.prefix, psfBreakerTokens, w.suffix)},
		{Label: "Target / observed prompt tokens", Value: fmt.Sprintf("%d / %s", target, report.Tokens(w.pass2.meanPrompt()))},
	}
	rows = append(rows, w.pass2.rows("Pass 2 ")...)
	rows = append(rows,
		report.Row{Label: "Pass 1 cold / reused", Value: fmt.Sprintf("%d / %d", w.pass1.Cold, w.pass1.Reused)},
		report.Row{Label: "Pass 1 mean TTFT (ms)", Value: report.OptFloat(w.pass1.MeanTTFTms)},
	)
	return Outcome{Block: block, Sections: []report.Section{{Title: "Prefix Suffix Tuner", Rows: rows}}}
}

// expectation judges pass 2 against the pool's size: a pool larger than
// the tier it targets (the built-in engine's cache when that is the
// engine, else --kv-cache-volume when given, else --psf-thrash) misses it
// on every pass-2 request under LRU;
// a pool that fits stays cached from pass 1. Sizes are counted in the
// prompts pass 1 really sent (the engine's prompt_tokens), so the chat
// template and the salt line count too.
func (w *PrefixSuffixTuner) expectation() *record.Expectation {
	b := w.p.budget()
	t := KVBudget{Tokens: int(w.thrash * float64(w.p.TokensPerGB)), What: "the targeted tier", Size: fmt.Sprintf("--psf-thrash %g GB", w.thrash)}
	if b.Tokens > 0 && (b.Engine || w.p.Settings.KVCacheGBGiven) {
		t = b
	}
	tier, tierText := t.Tokens, t.text()
	prompt := float64(w.context)
	if m := w.pass1.meanPrompt(); m != nil {
		prompt = *m
	} else if m := w.pass2.meanPrompt(); m != nil {
		prompt = *m
	}
	pool := int(prompt * float64(w.num))
	poolText := fmt.Sprintf("the pool (%d prompts of %s = %s)", w.num, group(int(prompt)), tokens(pool))
	counted := fmt.Sprintf(" (a hit caches at least half of the %s-token prefix)", group(w.prefix))
	hit := "pass 2: " + w.hits.count("reused their prefix", counted) + interrupted(w.pass2.Requests, w.num)
	missed := w.hits
	missed.yes, missed.no = w.hits.no, w.hits.yes
	miss := "pass 2: " + missed.count("missed their prefix", counted) + interrupted(w.pass2.Requests, w.num)
	if part := w.partialReuse(); part != "" {
		hit += part
		miss += part
	}
	lower := b.Lower || b.LowerTokens > 0
	switch {
	case !w.p.Warmup():
		return expect("every pass-2 request misses its prefix: no pass 1 ran (--no-warmup)", missed.verdict(), miss)
	case abs(pool-tier) <= int(prompt):
		return expect(fmt.Sprintf("pass 2 may hit or miss: %s is within one request of %s", poolText, tierText),
			record.VerdictUnknown, hit)
	case pool < tier:
		return expect(fmt.Sprintf("every pass-2 request reuses its prefix: %s fits %s, so pass 1 leaves it cached", poolText, tierText),
			w.hits.verdict(), hit)
	case lower && (b.LowerTokens == 0 || pool < tier+b.LowerTokens):
		return expect(fmt.Sprintf("every pass-2 request misses %s and is served from the next tier down (a reuse in its receipt): %s exceeds it", tierText, poolText),
			w.hits.verdict(), hit)
	}
	return expect(fmt.Sprintf("every pass-2 request misses its prefix: %s exceeds %s, so under LRU pass 1 evicts each prefix before pass 2 asks for it", poolText, tierText),
		missed.verdict(), miss)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// SizeWorkingSet: --psf-thrash = size / (1.05 x tokens per GB), so the
// pool is size / context contexts; pass 2 reuses each one's prefix.
func (*PrefixSuffixTuner) SizeWorkingSet(c *config.Config, tokens float64, tokensPerGB int) (WorkingSet, error) {
	o := config.DecodeAs[psfOptions](c)
	ctx := o.ContextLength
	prefix, _, err := PrefixSuffixSplit(ctx, o.PrefixRatio)
	if err != nil {
		return WorkingSet{}, err
	}
	n, err := units(config.PrefixSuffixTuner, tokens, ctx, "context")
	if err != nil {
		return WorkingSet{}, err
	}
	if tokensPerGB <= 0 {
		return WorkingSet{}, fmt.Errorf("--tokens-per-gb-kvcache must be > 0 for %s (or give --lmcache-url)", config.PrefixSuffixTuner)
	}
	thrash := (float64(n) + 0.5) * float64(ctx) / (psfOverflow * float64(tokensPerGB))
	if err := c.Set("psf_thrash", thrash); err != nil {
		return WorkingSet{}, err
	}
	n = PrefixSuffixPrefixes(thrash, tokensPerGB, ctx)
	return WorkingSet{Tokens: n * ctx, Count: n, Unit: ctx, What: "contexts", Reusable: max(prefix, 1)}, nil
}

// partialReuse explains pass-2 receipts that cached part of a prefix,
// less than the half a hit needs ("" otherwise): under block-granular
// eviction that frees a request's tail first, a pool over the tier by a
// few blocks (LMCache's 5%) loses the tail of every prefix and keeps its
// head, so every request reuses a part (docs/workloads.md).
func (w *PrefixSuffixTuner) partialReuse() string {
	t := w.pass2
	if t.valid == 0 || t.CachedTokens == 0 || w.prefix <= 0 {
		return ""
	}
	cached, prompt := t.CachedTokens/t.valid, t.PromptTokens/t.valid
	if 2*cached >= w.prefix {
		return ""
	}
	return fmt.Sprintf("; each pass-2 request cached %s of its %s prompt tokens on average (%.0f%% of its %s-token prefix): "+
		"block-granular eviction, freeing a request's tail first, keeps the head of every prefix when the pool overflows the tier by a few blocks, "+
		"so pass 2 reuses part of each prefix rather than all or none", group(cached), group(prompt), 100*float64(cached)/float64(w.prefix), group(w.prefix))
}

// estimatePrefixSuffixTuner sizes its plan from its settings.
func estimatePrefixSuffixTuner(c *config.Config, tokensPerGB int) Plan {
	o := config.DecodeAs[psfOptions](c)
	l := float64(o.ContextLength)
	prefix := math.Max(1, l*o.PrefixRatio)
	num := math.Max(1, math.Floor(o.Thrash*psfOverflow*float64(tokensPerGB)/l))
	return Plan{Requests: 2 * num, Tokens: num*prefix + 2*num*l,
		Flags: []string{"--psf-thrash", "--tokens-per-gb-kvcache", "--psf-context-length"}}
}

// PlanStreams: one request at a time, each after the one before (both
// passes and the throw-away between them).
func (w *PrefixSuffixTuner) PlanStreams(load.Settings) StreamPlan {
	return oneAtATime
}

// psfOptions are its settings (its rows in config), decoded once.
type psfOptions struct {
	ContextLength int     `setting:"psf_context_length"`
	PrefixRatio   float64 `setting:"psf_prefix_ratio"`
	Thrash        float64 `setting:"psf_thrash"`
}
