package workload

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
)

// sendAll is an Env that answers every request at once and records them.
func sendAll() (Env, func() []*sender.Request) {
	var mu sync.Mutex
	var reqs []*sender.Request
	env := Env{
		Send: func(ctx context.Context, req *sender.Request) (sender.Result, bool) {
			if ctx.Err() != nil {
				return sender.Result{}, false
			}
			mu.Lock()
			reqs = append(reqs, req)
			mu.Unlock()
			return sender.Result{RequestID: req.ID, Phase: req.Phase, Successful: true, CacheState: sender.StateCold}, true
		},
		Phase: func(string, int, time.Duration) {},
		Logf:  func(string, ...any) {},
		Now:   time.Now,
	}
	return env, func() []*sender.Request {
		mu.Lock()
		defer mu.Unlock()
		return append([]*sender.Request(nil), reqs...)
	}
}

// TestNoWarmup: --no-warmup drops every warmup request of the workloads
// that have one, and nothing else.
func TestNoWarmup(t *testing.T) {
	defer func(d time.Duration) { psfSettle = d }(psfSettle)
	psfSettle = time.Millisecond
	for _, c := range []struct {
		workload string
		set      map[string]any
	}{
		{config.LongDocQA, map[string]any{"ldqa_document_length": 50, "kv_cache_volume": 0.02}},
		{config.LongDocPermutator, map[string]any{"ldp_num_contexts": 2, "ldp_context_length": 10, "ldp_num_permutations": 2}},
		{config.PrefixSuffixTuner, map[string]any{"psf_context_length": 300, "psf_prefix_ratio": 0.5, "psf_thrash": 1.0}},
	} {
		count := func(noWarmup bool) (warm, measured int) {
			set := map[string]any{"no_warmup": noWarmup}
			for k, v := range c.set {
				set[k] = v
			}
			wl, err := New(context.Background(), mkParams(t, c.workload, 1000, set))
			if err != nil {
				t.Fatalf("%s: %v", c.workload, err)
			}
			env, sent := sendAll()
			if err := wl.Run(context.Background(), env); err != nil {
				t.Fatal(err)
			}
			for _, r := range sent() {
				if r.Phase == sender.PhaseWarmup {
					warm++
				} else {
					measured++
				}
			}
			return warm, measured
		}
		w0, m0 := count(false)
		w1, m1 := count(true)
		if w0 == 0 || w1 != 0 || m1 != m0 {
			t.Errorf("%s: warmups %d -> %d, measured %d -> %d; want some -> 0 and measured unchanged", c.workload, w0, w1, m0, m1)
		}
	}
}
