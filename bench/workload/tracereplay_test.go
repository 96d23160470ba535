package workload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/trace"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/simtest"
)

const (
	mooncakeTrace = "../trace/testdata/mooncake_synthetic_head300.jsonl"
	bailianTrace  = "../trace/testdata/bailian_chat.jsonl"
)

// traceInputs maps request ids to the trace's input lengths.
func traceInputs(t *testing.T, path string, f trace.Format, block int) map[string]int {
	t.Helper()
	r, err := trace.Open(path, f, block)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := map[string]int{}
	for {
		q, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("trace_%d", q.Line)] = q.InputLength
	}
}

// simEnv sends through a real client to the engine at url, as the
// runner does (the request's expectation rides on its result).
// With a config, its load flags gate the releases as the runner's gate
// does.
func simEnv(t *testing.T, url string, cfg ...*config.Config) (Env, func() []sender.Result) {
	t.Helper()
	c := sender.New(sender.Options{BaseURL: url + "/v1", Model: "kvbench-sim", RequestTimeout: time.Minute, IdleTimeout: time.Minute})
	t.Cleanup(c.Close)
	var gate *load.Gate
	if len(cfg) > 0 {
		ls, err := load.FromConfig(cfg[0])
		if err != nil {
			t.Fatal(err)
		}
		gate = load.NewGate(ls, time.Now)
	}
	var mu sync.Mutex
	var got []sender.Result
	return Env{
		Release: func(ctx context.Context, req *sender.Request) bool {
			if gate == nil {
				return ctx.Err() == nil
			}
			tk, ok := gate.Release(ctx)
			if ok && !tk.Scheduled.IsZero() {
				req.Scheduled = tk.Scheduled
			}
			return ok
		},
		Send: func(ctx context.Context, req *sender.Request) (sender.Result, bool) {
			if ctx.Err() != nil {
				return sender.Result{}, false
			}
			if gate != nil {
				defer gate.Done()
			}
			r := c.Do(ctx, req)
			r.TraceExpectation = req.Expect
			mu.Lock()
			got = append(got, r)
			mu.Unlock()
			return r, true
		},
		Phase: func(string, int, time.Duration) {}, Logf: func(string, ...any) {}, Now: time.Now,
	}, func() []sender.Result { mu.Lock(); defer mu.Unlock(); return append([]sender.Result(nil), got...) }
}

func traceParams(t *testing.T, url string, tokensPerGB int, set map[string]any) Params {
	t.Helper()
	p := mkParams(t, config.TraceReplay, tokensPerGB, set)
	p.Engine = &Engine{BaseURL: url + "/v1", Model: "kvbench-sim"}
	return p
}

// runTrace runs a replay with --max-concurrency inflight (0: none).
func runTrace(t *testing.T, p Params, url string, inflight int) (*TraceReplay, []sender.Result) {
	t.Helper()
	if inflight > 0 {
		if err := p.Config.Set("max_concurrency", inflight); err != nil {
			t.Fatal(err)
		}
	}
	wl, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	w := wl.(*TraceReplay)
	env, results := simEnv(t, url, p.Config)
	if err := w.Run(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	return w, results()
}

func bigSim(gpuGB float64) func(*sim.Config) {
	return func(c *sim.Config) {
		c.ZeroLatency = true
		c.GPUKVGB = gpuGB
		c.MaxModelLen = 200000
	}
}

// The contract's acceptance: one request at a time against a GPU tier
// larger than the trace, every prompt has the trace's length and every
// hit is the trace's expectation.
func TestTraceReplayMooncakeExactOnSimulator(t *testing.T) {
	url := simtest.Start(t, bigSim(1000)) // 10M tokens
	p := traceParams(t, url, 10000, map[string]any{
		"tr_file": mooncakeTrace, "tr_limit": 150, "tr_speedup": 1e6, "kv_cache_volume": 1000.0,
	})
	w, res := runTrace(t, p, url, 1)
	inputs := traceInputs(t, mooncakeTrace, trace.Mooncake, 512)
	if len(res) != 150 || w.skippedTooLong != 0 || w.mode != modeTokens || w.exactness != exact {
		t.Fatalf("%d results, %d too long, mode %s (%s)", len(res), w.skippedTooLong, w.mode, w.exactness)
	}
	reused := 0
	for _, r := range res {
		e := r.TraceExpectation
		if !r.Successful || r.PromptTokens == nil || r.CachedTokens == nil || e == nil || e.ExpectedCachedTokensLRU == nil {
			t.Fatalf("%s: %+v", r.RequestID, r)
		}
		if *r.PromptTokens != inputs[r.RequestID] {
			t.Errorf("%s: prompt_tokens %d, input_length %d", r.RequestID, *r.PromptTokens, inputs[r.RequestID])
		}
		if *r.CachedTokens != e.ExpectedCachedTokens || *e.ExpectedCachedTokensLRU != e.ExpectedCachedTokens {
			t.Errorf("%s: cached %d, expected %d, lru %d", r.RequestID, *r.CachedTokens, e.ExpectedCachedTokens, *e.ExpectedCachedTokensLRU)
		}
		if e.ExpectedCachedTokens > 0 {
			reused++
		}
	}
	if reused < 5 {
		t.Errorf("only %d requests expected a hit: the fixture shares prefixes", reused)
	}
	out := w.Outcome()
	b, _ := json.Marshal(out.Block)
	var block map[string]any
	json.Unmarshal(b, &block)
	if block["below_expected"].(float64) != 0 || block["expected_hit_ratio"] != block["observed_hit_ratio"] || block["prompt_mode"] != "tokens" {
		t.Errorf("workload block: %s", b)
	}
}

// With a tier the trace overflows, the simulator's own LRU model, fed in
// release order, predicts what the engine serves.
func TestTraceReplayLRUPredictsAnOverflowingTier(t *testing.T) {
	url := simtest.Start(t, bigSim(20)) // 200k tokens
	p := traceParams(t, url, 10000, map[string]any{
		"tr_file": mooncakeTrace, "tr_limit": 150, "tr_speedup": 1e6, "kv_cache_volume": 20.0,
	})
	w, res := runTrace(t, p, url, 1)
	match, lower := 0, 0
	for _, r := range res {
		e := r.TraceExpectation
		if *r.CachedTokens == *e.ExpectedCachedTokensLRU {
			match++
		}
		if *e.ExpectedCachedTokensLRU < e.ExpectedCachedTokens {
			lower++
		}
	}
	if match*10 < len(res)*9 {
		t.Errorf("LRU prediction right for %d of %d", match, len(res))
	}
	if lower == 0 {
		t.Error("the tier never overflowed: the test proves nothing")
	}
	b, _ := json.Marshal(w.Outcome().Block)
	var block struct {
		LRU      *float64 `json:"expected_hit_ratio_lru"`
		Observed *float64 `json:"observed_hit_ratio"`
		Expected *float64 `json:"expected_hit_ratio"`
	}
	json.Unmarshal(b, &block)
	if block.LRU == nil || block.Observed == nil || math.Abs(*block.LRU-*block.Observed) > 0.01 || *block.Expected <= *block.LRU {
		t.Errorf("hit ratios: %s", b)
	}
}

// A Bailian chat tree in text mode: one-token words learned through
// /tokenize, prompts verified, hits exact.
func TestTraceReplayBailianTextMode(t *testing.T) {
	url := simtest.Start(t, bigSim(8))
	p := traceParams(t, url, 0, map[string]any{"tr_file": bailianTrace, "tr_prompt_mode": "text", "tr_speedup": 1000.0})
	w, res := runTrace(t, p, url, 1)
	if w.format != trace.Bailian || w.mode != modeText || w.exactness != verified || len(res) != 6 {
		t.Fatalf("format %s mode %s (%s), %d results", w.format, w.mode, w.exactness, len(res))
	}
	inputs := traceInputs(t, bailianTrace, trace.Bailian, 16)
	want := map[string]int{"trace_0": 0, "trace_1": 0, "trace_2": 32, "trace_4": 64, "trace_5": 16, "trace_6": 0}
	for _, r := range res {
		e := r.TraceExpectation
		if *r.PromptTokens != inputs[r.RequestID] || *r.CachedTokens != e.ExpectedCachedTokens || e.ExpectedCachedTokens != want[r.RequestID] {
			t.Errorf("%s: prompt %d (want %d) cached %d expected %d (want %d)", r.RequestID, *r.PromptTokens, inputs[r.RequestID],
				*r.CachedTokens, e.ExpectedCachedTokens, want[r.RequestID])
		}
		if e.ExpectedCachedTokensLRU != nil {
			t.Errorf("%s: an LRU prediction without a KV budget", r.RequestID)
		}
	}
}

// Two runs with the default (run-unique) salt: the second starts cold.
func TestTraceReplayRerunStartsCold(t *testing.T) {
	url := simtest.Start(t, bigSim(8))
	set := map[string]any{"tr_file": bailianTrace, "tr_speedup": 1000.0}
	_, first := runTrace(t, traceParams(t, url, 0, set), url, 1)
	_, second := runTrace(t, traceParams(t, url, 0, set), url, 1)
	for i, res := range [][]sender.Result{first, second} {
		for _, r := range res {
			if *r.CachedTokens != r.TraceExpectation.ExpectedCachedTokens {
				t.Errorf("run %d %s: cached %d, expected %d", i+1, r.RequestID, *r.CachedTokens, r.TraceExpectation.ExpectedCachedTokens)
			}
		}
	}
}

func TestTraceReplaySkipsTooLongNeverTruncates(t *testing.T) {
	url := simtest.Start(t, func(c *sim.Config) { c.ZeroLatency = true; c.MaxModelLen = 30000 })
	p := traceParams(t, url, 0, map[string]any{"tr_file": mooncakeTrace, "tr_limit": 40, "tr_speedup": 1e6})
	w, res := runTrace(t, p, url, 4)
	inputs := traceInputs(t, mooncakeTrace, trace.Mooncake, 512)
	long := 0
	r, _ := trace.Open(mooncakeTrace, trace.Mooncake, 512)
	for i := 0; i < 40; i++ {
		q, _ := r.Next()
		if q.InputLength+max(q.OutputLength, 1) > 30000 {
			long++
		}
	}
	r.Close()
	if long == 0 || w.skippedTooLong != long || len(res) != 40-long {
		t.Fatalf("skipped %d (want %d), sent %d", w.skippedTooLong, long, len(res))
	}
	for _, r := range res {
		if !r.Successful || *r.PromptTokens != inputs[r.RequestID] {
			t.Errorf("%s: successful %v prompt %v want %d", r.RequestID, r.Successful, *r.PromptTokens, inputs[r.RequestID])
		}
	}
}

func TestTraceReplayInvalidLines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(path, []byte(`{"timestamp": 0, "input_length": 20, "output_length": 1, "hash_ids": [1]}
{"timestamp": 5, "input_length": 600, "output_length": 1, "hash_ids": [1]}
{"timestamp": 9, "input_length": 20, "output_length": 1, "hash_ids": [2]}
`), 0o644)
	url := simtest.Start(t, bigSim(8))
	_, err := New(context.Background(), traceParams(t, url, 0, map[string]any{"tr_file": path}))
	var unavailable *UnavailableError
	if err == nil || errors.As(err, &unavailable) || !strings.Contains(err.Error(), "trace "+path+" line 2: hash_ids has 1 ids") {
		t.Fatalf("error %v: want a usage error naming the file and line 2", err)
	}
	wl, err := New(context.Background(), traceParams(t, url, 0, map[string]any{"tr_file": path, "tr_skip_invalid": true, "tr_speedup": 1000.0}))
	if err != nil {
		t.Fatal(err)
	}
	w := wl.(*TraceReplay)
	env, results := simEnv(t, url)
	w.Run(context.Background(), env)
	if w.skippedInvalid != 1 || len(results()) != 2 {
		t.Errorf("skipped %d, sent %d", w.skippedInvalid, len(results()))
	}
	for _, bad := range []map[string]any{{"tr_file": "-"}, {"tr_file": filepath.Join(dir, "missing.jsonl")}} {
		if _, err := New(context.Background(), traceParams(t, url, 0, bad)); err == nil || !strings.Contains(err.Error(), "--tr-file") {
			t.Errorf("%v: %v", bad, err)
		}
	}
}

// An engine without /tokenize: auto and tokens cannot be made exact
// (exit 3); a forced text mode runs with estimated lengths.
func TestTraceReplayWithoutTokenize(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.NotFound(w, r)
	}))
	defer srv.Close()
	for _, mode := range []string{"auto", "tokens"} {
		_, err := New(context.Background(), traceParams(t, srv.URL, 0, map[string]any{"tr_file": bailianTrace, "tr_prompt_mode": mode}))
		var unavailable *UnavailableError
		if !errors.As(err, &unavailable) || !strings.Contains(err.Error(), "--tr-prompt-mode "+mode) || !strings.Contains(err.Error(), "--tr-prompt-mode text") {
			t.Errorf("%s: %v", mode, err)
		}
	}
	wl, err := New(context.Background(), traceParams(t, srv.URL, 0, map[string]any{"tr_file": bailianTrace, "tr_prompt_mode": "text"}))
	if err != nil {
		t.Fatal(err)
	}
	if w := wl.(*TraceReplay); w.mode != modeText || w.exactness != estimated {
		t.Errorf("forced text: %s (%s)", w.mode, w.exactness)
	}
}

// Shards split the trace (whole conversations for Bailian) and each
// predicts hits over the whole run's releases, as the engine sees them.
func TestTraceReplayShards(t *testing.T) {
	url := simtest.Start(t, bigSim(8))
	want := map[string]int{"trace_0": 0, "trace_1": 0, "trace_2": 32, "trace_4": 64, "trace_5": 16, "trace_6": 0}
	seen := map[string]int{}
	for i := 0; i < 3; i++ {
		p := traceParams(t, url, 0, map[string]any{"tr_file": bailianTrace, "tr_speedup": 1000.0})
		p.Shard = config.Shard{Index: i, Count: 3}
		w, res := runTrace(t, p, url, 1)
		if w.replayable != len(res) {
			t.Errorf("shard %d: planned %d, sent %d", i, w.replayable, len(res))
		}
		for _, r := range res {
			seen[r.RequestID]++
			if r.TraceExpectation.ExpectedCachedTokens != want[r.RequestID] {
				t.Errorf("shard %d %s: expected %d, want %d", i, r.RequestID, r.TraceExpectation.ExpectedCachedTokens, want[r.RequestID])
			}
		}
	}
	for id := range want {
		if seen[id] != 1 {
			t.Errorf("%s sent by %d shards", id, seen[id])
		}
	}
}

// Open loop: each request is due at its scaled timestamp, whatever the
// engine does, and records that as its scheduled time.
func TestTraceReplayReleasesAtScaledTimestamps(t *testing.T) {
	url := simtest.Start(t, bigSim(8))
	_, res := runTrace(t, traceParams(t, url, 0, map[string]any{"tr_file": bailianTrace, "tr_speedup": 50.0}), url, 0)
	at := map[string]float64{"trace_0": 0, "trace_1": 0.25, "trace_2": 1.5, "trace_4": 2, "trace_5": 2.125, "trace_6": 3}
	var t0 float64
	for _, r := range res {
		if r.RequestID == "trace_0" {
			t0 = *r.ScheduledTime
		}
	}
	if len(res) != 6 || t0 == 0 {
		t.Fatalf("%d results", len(res))
	}
	for _, r := range res {
		if got, want := *r.ScheduledTime-t0, at[r.RequestID]/50; math.Abs(got-want) > 1e-5 {
			t.Errorf("%s scheduled %.6f s after the first, want %.6f", r.RequestID, got, want)
		}
	}
}
