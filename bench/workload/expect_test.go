package workload

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/simtest"
)

func TestJudgeVerdicts(t *testing.T) {
	for _, c := range []struct {
		j             judge
		all, someMiss string
	}{
		{judge{yes: 3}, record.VerdictMet, record.VerdictNotMet},
		{judge{yes: 2, no: 1}, record.VerdictNotMet, record.VerdictMet},
		// A receipt missing is never a pass; a contradiction still counts.
		{judge{yes: 2, noReceipt: 1}, record.VerdictUnknown, record.VerdictUnknown},
		{judge{yes: 2, no: 1, noReceipt: 1}, record.VerdictNotMet, record.VerdictMet},
		// Nothing judged: unknown, failed requests test nothing.
		{judge{}, record.VerdictUnknown, record.VerdictUnknown},
		{judge{failed: 4}, record.VerdictUnknown, record.VerdictUnknown},
		{judge{yes: 3, failed: 1}, record.VerdictMet, record.VerdictNotMet},
	} {
		if v := c.j.verdict(); v != c.all {
			t.Errorf("%+v: verdict %s, want %s", c.j, v, c.all)
		}
		if v := c.j.someMiss(); v != c.someMiss {
			t.Errorf("%+v: someMiss %s, want %s", c.j, v, c.someMiss)
		}
	}
	j := judge{yes: 12, no: 1, noReceipt: 2, failed: 1}
	if s := j.count("reused", " (detail)"); s != "12/15 reused (detail); 2 without a verified receipt; 1 failed (not judged)" {
		t.Errorf("count %q", s)
	}
	if group(1234567) != "1,234,567" || group(80000) != "80,000" || group(999) != "999" || group(-1000) != "-1,000" {
		t.Errorf("group: %s %s %s %s", group(1234567), group(80000), group(999), group(-1000))
	}
}

// expectSim runs a workload against a simulator (configured by sc) the
// way the runner does, dropping the engine's cache when the phase named
// reset starts ("" never), and returns its expectation.
func expectSim(t *testing.T, p Params, sc func(*sim.Config), reset string) *record.Expectation {
	t.Helper()
	url := simtest.Start(t, func(c *sim.Config) {
		c.ZeroLatency = true
		if sc != nil {
			sc(c)
		}
	})
	return expectAt(t, p, url, reset)
}

func expectAt(t *testing.T, p Params, url, reset string) *record.Expectation {
	t.Helper()
	p.Engine = &Engine{BaseURL: url + "/v1", Model: "kvbench-sim"}
	wl, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	env, _ := simEnv(t, url, p.Config)
	env.RunDir = t.TempDir()
	env.Phase = func(name string, _ int, _ time.Duration) {
		if name != reset {
			return
		}
		resp, err := http.Post(url+"/reset_prefix_cache", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("reset: HTTP %d", resp.StatusCode)
		}
	}
	if err := wl.Run(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	e := blockExpectation(t, wl.Outcome().Block)
	t.Logf("%s: %s\n  expected: %s\n  reason: %s", p.Config.Workload(), e.Verdict, e.Expected, e.Reason)
	return e
}

// blockExpectation reads the expectation as bench_summary.json carries it.
func blockExpectation(t *testing.T, block any) *record.Expectation {
	t.Helper()
	e := record.WorkloadExpectation(&record.Summary{Workload: block})
	if e == nil {
		t.Fatalf("the workload block has no expectation: %v", block)
	}
	return e
}

// simCache is a simulator whose GPU tier holds gb x 1000 tokens.
func simCache(gb float64) func(*sim.Config) {
	return func(c *sim.Config) { c.TokensPerGB, c.GPUKVGB = 1000, gb }
}

// engineBudget is the budget of a simCache engine, as the built-in
// engine's is given to the workloads.
func engineBudget(gb float64) KVBudget {
	return KVBudget{Tokens: int(gb * 1000), What: "the simulator's GPU cache", Engine: true}
}

func wantExpectation(t *testing.T, name string, e *record.Expectation, verdict string, expected ...string) {
	t.Helper()
	if e.Verdict != verdict {
		t.Errorf("%s: verdict %s, want %s (%s; %s)", name, e.Verdict, verdict, e.Expected, e.Reason)
	}
	for _, s := range expected {
		if !strings.Contains(e.Expected, s) {
			t.Errorf("%s: expected %q does not say %q", name, e.Expected, s)
		}
	}
}

// prefix-suffix-tuner: a pool that fits the engine's cache and one that
// overflows it both meet their expectation, which differs; a cache
// dropped between the passes does not meet "reuses"; receipts that omit
// the zero count cannot decide "misses".
func TestExpectationPrefixSuffixTuner(t *testing.T) {
	defer func(d time.Duration) { psfSettle = d }(psfSettle)
	psfSettle = time.Millisecond
	// prefix 150 tokens, contexts of 300: 7 prompts (~2,200 tokens) for
	// thrash 2 GB, 17 (~5,300) for thrash 5, against a 4,000-token cache.
	psf := func(thrash float64, set map[string]any) Params {
		s := map[string]any{"psf_context_length": 300, "psf_prefix_ratio": 0.5, "psf_thrash": thrash}
		for k, v := range set {
			s[k] = v
		}
		p := mkParams(t, config.PrefixSuffixTuner, 1000, s)
		p.Budget = engineBudget(4)
		return p
	}
	fits := expectSim(t, psf(2, nil), simCache(4), "")
	wantExpectation(t, "pool fits", fits, record.VerdictMet, "reuses its prefix", "fits the simulator's GPU cache (4,000 tokens)")
	if !strings.HasPrefix(fits.Reason, "pass 2: 7/7 reused their prefix") {
		t.Errorf("reason %q", fits.Reason)
	}
	over := expectSim(t, psf(5, nil), simCache(4), "")
	wantExpectation(t, "pool overflows", over, record.VerdictMet, "misses its prefix", "exceeds the simulator's GPU cache")
	if !strings.HasPrefix(over.Reason, "pass 2: 17/17 missed their prefix") {
		t.Errorf("reason %q", over.Reason)
	}
	reset := expectSim(t, psf(2, nil), simCache(4), "measuring")
	wantExpectation(t, "cache reset between the passes", reset, record.VerdictNotMet, "reuses its prefix")
	if !strings.HasPrefix(reset.Reason, "pass 2: 0/7 reused") {
		t.Errorf("reason %q", reset.Reason)
	}
	// Without a known engine cache the tier is --psf-thrash's, which the
	// pool (1.05 x) overflows; with a next tier (an LMCache server) pass
	// 2 is served from it: here the engine (16 GB) holds it all.
	real := psf(10, map[string]any{"lmcache_url": "http://127.0.0.1:1"})
	real.Budget = KVBudget{}
	lower := expectSim(t, real, simCache(16), "")
	wantExpectation(t, "next tier", lower, record.VerdictMet, "served from the next tier down", "the targeted tier (--psf-thrash 10 GB, 10,000 tokens)")
	noWarm := expectSim(t, psf(2, map[string]any{"no_warmup": true}), simCache(4), "")
	wantExpectation(t, "no warmup", noWarm, record.VerdictMet, "no pass 1 ran")
	// Older vLLM omits the count when nothing was cached: every pass-2
	// receipt is unverified, so "misses" is unknown, not met.
	omit := expectSim(t, psf(5, nil), func(c *sim.Config) { simCache(4)(c); c.OmitZeroCached = true }, "")
	wantExpectation(t, "receipts without counts", omit, record.VerdictUnknown, "misses its prefix")
	if omit.Reason != "pass 2: 0/17 missed their prefix (a hit caches at least half of the 150-token prefix); 17 without a verified receipt" {
		t.Errorf("reason %q", omit.Reason)
	}
}

func TestExpectationLongDocQA(t *testing.T) {
	ldqa := func(volume float64, set map[string]any) Params {
		s := map[string]any{"ldqa_document_length": 200, "kv_cache_volume": volume, "ldqa_shuffle_policy": "tile"}
		for k, v := range set {
			s[k] = v
		}
		p := mkParams(t, config.LongDocQA, 1000, s)
		p.Budget = engineBudget(2)
		return p
	}
	// 5 documents of 200 tokens in a 2,000-token cache.
	e := expectSim(t, ldqa(1, nil), simCache(2), "")
	wantExpectation(t, "fits", e, record.VerdictMet, "every question reuses its document", "the 5 documents (1,000 tokens) fit the simulator's GPU cache")
	if !strings.HasPrefix(e.Reason, "questions: 10/10 reused their document") {
		t.Errorf("reason %q", e.Reason)
	}
	// A budget over the engine's cache: 20 documents, in order, evict
	// each other before their second question.
	e = expectSim(t, ldqa(4, nil), simCache(2), "")
	wantExpectation(t, "overflows", e, record.VerdictMet, "some questions miss", "the 20 documents (4,000 tokens) exceed")
	e = expectSim(t, ldqa(1, nil), simCache(2), "measuring")
	wantExpectation(t, "reset after the warmup", e, record.VerdictNotMet, "every question reuses its document")
	// Without a warmup, a document's first question prefills it: only
	// the questions sent after one on their document finished count.
	e = expectSim(t, ldqa(1, map[string]any{"no_warmup": true, "ldqa_num_inflight_requests": 1}), simCache(2), "")
	wantExpectation(t, "no warmup", e, record.VerdictMet, "no warmup")
	if !strings.HasPrefix(e.Reason, "questions: 5/5 reused") || !strings.Contains(e.Reason, "5 sent before a request on their document had finished") {
		t.Errorf("reason %q", e.Reason)
	}
}

func TestExpectationMultiRoundChat(t *testing.T) {
	mrc := func() Params {
		p := mkParams(t, config.MultiRoundChat, 1000, map[string]any{
			"mrc_shared_prompt_length": 100, "mrc_chat_history_length": 100, "mrc_user_input_length": 10,
			"mrc_output_length": 8, "mrc_qps": 50.0, "mrc_duration": 0.4, "kv_cache_volume": 1.0,
		})
		p.Budget = engineBudget(4)
		return p
	}
	e := expectSim(t, mrc(), simCache(4), "")
	wantExpectation(t, "fits", e, record.VerdictMet, "reuses its session's system prompt and history (200 tokens", "while the 5 sessions fit")
	e = expectSim(t, mrc(), simCache(4), "measuring")
	wantExpectation(t, "reset after the warmup", e, record.VerdictNotMet)
	if !strings.Contains(e.Reason, "hit ratio round 1 0.00%") {
		t.Errorf("reason %q: round 1 follows the reset", e.Reason)
	}
}

func TestExpectationRandomPrefill(t *testing.T) {
	p := mkParams(t, config.RandomPrefill, 1000, map[string]any{"rp_num_requests": 8, "rp_request_length": 100})
	url := simtest.Start(t, func(c *sim.Config) { c.ZeroLatency = true })
	e := expectAt(t, p, url, "")
	wantExpectation(t, "first run", e, record.VerdictMet, "cold prefill")
	// The same prompts again (no salt here, as with --prompt-salt none):
	// the engine serves them from its cache.
	e = expectAt(t, p, url, "")
	wantExpectation(t, "warm rerun", e, record.VerdictNotMet, "cold prefill")
	if !strings.HasPrefix(e.Reason, "requests: 0/8 cold") {
		t.Errorf("reason %q", e.Reason)
	}
}

func TestExpectationLongDocPermutator(t *testing.T) {
	p := func() Params {
		return mkParams(t, config.LongDocPermutator, 1000, map[string]any{
			"ldp_num_contexts": 3, "ldp_context_length": 60, "ldp_system_prompt_length": 20, "ldp_num_permutations": 6,
		})
	}
	e := expectSim(t, p(), nil, "")
	wantExpectation(t, "prefix cache", e, record.VerdictMet, "the leading contexts it shares")
	if !strings.HasPrefix(e.Reason, "later requests: 5/5 reused their shared prefix") {
		t.Errorf("reason %q", e.Reason)
	}
	e = expectSim(t, p(), func(c *sim.Config) { c.GPUKVGB = 0 }, "")
	wantExpectation(t, "no prefix cache", e, record.VerdictNotMet)
	one := mkParams(t, config.LongDocPermutator, 1000, map[string]any{"ldp_num_contexts": 1, "ldp_context_length": 20})
	e = expectSim(t, one, nil, "")
	wantExpectation(t, "one permutation", e, record.VerdictUnknown)
}

func TestExpectationCacheProbe(t *testing.T) {
	p := func() Params { return mkParams(t, config.CacheProbe, 0, map[string]any{"cp_tokens": 8}) }
	e := expectSim(t, p(), nil, "")
	wantExpectation(t, "prefix cache", e, record.VerdictMet, "first_0 cold", "every later row reused", "every output equal")
	e = expectSim(t, p(), func(c *sim.Config) { c.GPUKVGB = 0 }, "")
	wantExpectation(t, "no prefix cache", e, record.VerdictNotMet)
	if !strings.Contains(e.Reason, "later rows: 0/4 reused") {
		t.Errorf("reason %q", e.Reason)
	}
}

func TestExpectationConcurrentExactness(t *testing.T) {
	p := func() Params {
		return mkParams(t, config.ConcurrentExactness, 0, map[string]any{"ce_levels": []int{4, 8}, "ce_tokens": 8})
	}
	e := expectSim(t, p(), nil, "")
	wantExpectation(t, "deterministic engine", e, record.VerdictMet, "every reply equals")
	if !strings.HasPrefix(e.Reason, "outputs vs first reply: 4 equal, 0 different, 0 unverified") {
		t.Errorf("reason %q", e.Reason)
	}
	e = expectSim(t, p(), func(c *sim.Config) { c.NondeterministicRate, c.FaultSeed = 0.5, 7 }, "")
	wantExpectation(t, "nondeterministic engine", e, record.VerdictNotMet)
}

func TestExpectationTraceReplay(t *testing.T) {
	p := func(gb float64) Params {
		return traceParams(t, "", 10000, map[string]any{
			"tr_file": mooncakeTrace, "tr_limit": 60, "tr_speedup": 1e6, "kv_cache_volume": gb, "max_concurrency": 1,
		})
	}
	e := expectSim(t, p(20), bigSim(20), "")
	wantExpectation(t, "LRU of the budget", e, record.VerdictMet, "LRU of 200,000 tokens")
	// The prediction counts on 20 GB; an engine without prefix caching
	// serves none of it.
	e = expectSim(t, p(20), bigSim(0), "")
	wantExpectation(t, "no prefix cache", e, record.VerdictNotMet)
}

func TestExpectationKVTierPressure(t *testing.T) {
	p := func(per int) Params {
		p := mkParams(t, config.KVTierPressure, 1000, map[string]any{
			"ktp_pool_size": 8, "ktp_docs_per_request": per, "ktp_context_length": 64,
			"ktp_system_prompt_length": 16, "ktp_num_requests": 10, "ktp_num_inflight_requests": 1,
		})
		p.Budget = engineBudget(4)
		return p
	}
	e := expectSim(t, p(1), simCache(4), "")
	wantExpectation(t, "one document per request", e, record.VerdictMet, "every request reuses its documents", "fits the simulator's GPU cache")
	e = expectSim(t, p(1), simCache(4), "measuring")
	wantExpectation(t, "reset after the sweep", e, record.VerdictNotMet)
	e = expectSim(t, p(4), simCache(4), "")
	wantExpectation(t, "documents in random order", e, record.VerdictMet, "reuses only the system prompt")
}

func TestExpectationRAGQAQuality(t *testing.T) {
	p := func() Params {
		return mkParams(t, config.RAGQAQuality, 1000, map[string]any{
			"rag_dataset": "testdata/rag_musique.jsonl", "rag_doc_align_tokens": 16, "rag_max_output_length": 8,
		})
	}
	e := expectSim(t, p(), nil, "")
	wantExpectation(t, "after the warmup", e, record.VerdictMet, "the instruction block", "its first passage")
	if !strings.HasPrefix(e.Reason, "questions: 3/3 reused") {
		t.Errorf("reason %q", e.Reason)
	}
	e = expectSim(t, p(), nil, "measuring")
	wantExpectation(t, "reset after the warmup", e, record.VerdictNotMet)
}
