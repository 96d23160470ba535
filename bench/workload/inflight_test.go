package workload

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
)

// TestEachWorkloadHoldsNoMoreThanItPlans runs each workload against an
// engine that holds every request until as many as the plan allows (or
// all that will come) are in flight, and checks that the most requests
// it ever held at once is no more than its own plan: the plan is what
// the run opens descriptors and connections for.
func TestEachWorkloadHoldsNoMoreThanItPlans(t *testing.T) {
	defer SetPSFSettle(time.Millisecond)()
	cases := []struct {
		workload string
		set      map[string]any
	}{
		{config.RandomPrefill, map[string]any{"rp_num_requests": 40, "rp_request_length": 16}},
		{config.LongDocQA, map[string]any{"ldqa_num_inflight_requests": 4, "ldqa_document_length": 100, "kv_cache_volume": 1}},
		{config.LongDocPermutator, map[string]any{"ldp_num_inflight_requests": 3, "ldp_num_contexts": 3, "ldp_context_length": 10, "ldp_system_prompt_length": 5}},
		{config.PrefixSuffixTuner, map[string]any{"psf_context_length": 1000, "psf_thrash": 0.005}},
		{config.CacheProbe, map[string]any{"cp_streams": 5}},
		{config.ConcurrentExactness, map[string]any{"ce_levels": []int{1, 6, 3}}},
		{config.KVTierPressure, map[string]any{"ktp_pool_size": 12, "ktp_docs_per_request": 2, "ktp_context_length": 20, "ktp_num_requests": 30, "ktp_num_inflight_requests": 5}},
		{config.RAGQAQuality, map[string]any{"rag_dataset": "testdata/rag_musique.jsonl", "rag_doc_align_tokens": 16, "rag_num_samples": 3}},
	}
	for _, c := range cases {
		t.Run(c.workload, func(t *testing.T) {
			p := mkParams(t, c.workload, 1000, c.set)
			p.Tokenize = fakeTokenize
			w, err := New(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			ls, err := load.FromConfig(p.Config)
			if err != nil {
				t.Fatal(err)
			}
			plan := w.PlanStreams(ls)
			if plan.Streams < 1 {
				t.Fatalf("planned %d streams", plan.Streams)
			}
			most := runCountingInFlight(t, w, plan.Streams)
			if most > plan.Streams {
				t.Errorf("held %d requests in flight at once, planned %d (%s)", most, plan.Streams, plan.Flag)
			}
			if most < 1 {
				t.Errorf("sent nothing")
			}
		})
	}
}

// runCountingInFlight runs w with a Send that keeps each request until
// limit requests are in flight or none came for a moment (so a workload
// that sends more at once than it plans shows it), and returns the most
// in flight at once.
func runCountingInFlight(t *testing.T, w Workload, limit int) int {
	t.Helper()
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	inFlight, most := 0, 0
	env := Env{
		Send: func(ctx context.Context, req *sender.Request) (sender.Result, bool) {
			mu.Lock()
			inFlight++
			most = max(most, inFlight)
			cond.Broadcast()
			// Wait until more than the plan's number are in flight, or
			// a while passed (the workload holds no more).
			waited := false
			timer := time.AfterFunc(20*time.Millisecond, func() {
				mu.Lock()
				waited = true
				cond.Broadcast()
				mu.Unlock()
			})
			for inFlight <= limit && !waited {
				cond.Wait()
			}
			timer.Stop()
			inFlight--
			mu.Unlock()
			one := 1
			return sender.Result{RequestID: req.ID, Phase: req.Phase, Successful: true, Text: "Answer: x",
				PromptTokens: &one, CompletionTokens: &one}, true
		},
		Phase: func(string, int, time.Duration) {},
		Logf:  func(string, ...any) {},
		Now:   time.Now,
	}
	if err := w.Run(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	return most
}
