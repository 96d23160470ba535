package workload

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
)

// whole is the unsharded run.
var whole = config.Shard{Index: 0, Count: 1}

// sentRequest is what a shard sent: its id, phase and due offset from the
// start of the measured phase (0 when unscheduled).
type sentRequest struct {
	phase string
	due   time.Duration
}

// runShard runs one shard of a workload against an engine that answers at
// once, on a fake clock, and returns what it sent by request id.
func runShard(t *testing.T, p Params, sh config.Shard) map[string]sentRequest {
	t.Helper()
	p.Shard = sh
	wl, err := New(context.Background(), p)
	if err != nil {
		t.Fatalf("shard %s: %v", sh, err)
	}
	clock := &fakeClock{t: time.Unix(2_000_000, 0)}
	if w, ok := wl.(*MultiRoundChat); ok {
		w.pause = func(ctx context.Context, d time.Duration) bool {
			if d == mrcRetry {
				// A session still busy: its answer is on its way (the
				// engine answers at once); let it arrive without moving
				// the clock.
				runtime.Gosched()
				return ctx.Err() == nil
			}
			clock.advance(max(d, 0))
			return ctx.Err() == nil
		}
	}
	var mu sync.Mutex
	sent := map[string]sentRequest{}
	var start time.Time
	env := Env{
		Send: func(ctx context.Context, req *sender.Request) (sender.Result, bool) {
			mu.Lock()
			defer mu.Unlock()
			if _, dup := sent[req.ID]; dup {
				t.Errorf("shard %s sent %s twice", sh, req.ID)
			}
			var due time.Duration
			if !req.Scheduled.IsZero() {
				due = req.Scheduled.Sub(start)
			}
			sent[req.ID] = sentRequest{phase: req.Phase, due: due}
			return sender.Result{RequestID: req.ID, Phase: req.Phase, Successful: true, Complete: true, CacheState: sender.StateCold}, true
		},
		Phase: func(name string, _ int, _ time.Duration) {
			if name != sender.PhaseWarmup {
				start = clock.Now()
			}
		},
		Logf: func(string, ...any) {},
		Now:  clock.Now,
	}
	if err := wl.Run(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	return sent
}

// checkPartition runs the whole workload and its n shards and checks that
// the shards send exactly the whole run's requests, each once, with the
// whole run's phase, and that owner(id) names the shard that sent each,
// as does the whole-run workload's own ShardOf (what merge checks).
func checkPartition(t *testing.T, p Params, n int, owner func(id string) int) {
	t.Helper()
	all := runShard(t, p, whole)
	p.Shard = whole
	wl, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	so, ok := wl.(ShardOwner)
	if !ok {
		t.Fatalf("%s cannot say which shard sends a request", wl.Name())
	}
	for _, id := range []string{"", "x", "prefill_", "prefill_01", "doc1_q", "doc_q1", "s1_r", "warmup_s-1", "prefill_99999", "doc99999_q0", "s99999_r0", "s1_r2"} {
		if i, ok := so.ShardOf(id, n); ok {
			t.Errorf("ShardOf(%q) = shard %d: no run of this workload sends it", id, i)
		}
	}
	union := map[string]sentRequest{}
	for i := 0; i < n; i++ {
		for id, s := range runShard(t, p, config.Shard{Index: i, Count: n}) {
			if _, dup := union[id]; dup {
				t.Fatalf("%s sent by two shards", id)
			}
			if o := owner(id); o != i {
				t.Fatalf("%s sent by shard %d, owned by shard %d", id, i, o)
			}
			if o, ok := so.ShardOf(id, n); !ok || o != i {
				t.Fatalf("%s sent by shard %d, ShardOf says %d (%v)", id, i, o, ok)
			}
			union[id] = s
		}
	}
	got, want := slices.Sorted(maps.Keys(union)), slices.Sorted(maps.Keys(all))
	if !slices.Equal(got, want) {
		t.Fatalf("shards sent %d requests %v\nwhole run sent %d: %v", len(got), got, len(want), want)
	}
	for id, s := range all {
		if union[id].phase != s.phase {
			t.Fatalf("%s: phase %s in its shard, %s in the whole run", id, union[id].phase, s.phase)
		}
	}
}

func TestShardsPartitionLongDocQA(t *testing.T) {
	// 7 documents over 3 shards: whole documents, warmup and questions.
	p := mkParams(t, config.LongDocQA, 700, map[string]any{"kv_cache_volume": 1.0, "ldqa_document_length": 100, "ldqa_query_per_document": 3})
	checkPartition(t, p, 3, func(id string) int {
		var d, q int
		if _, err := fmt.Sscanf(id, "doc%d_q%d", &d, &q); err != nil {
			if _, err := fmt.Sscanf(id, "warmup_doc%d", &d); err != nil {
				t.Fatalf("unexpected id %s", id)
			}
		}
		return d % 3
	})
}

func TestShardsPartitionRandomPrefill(t *testing.T) {
	p := mkParams(t, config.RandomPrefill, 1000, map[string]any{"rp_num_requests": 10, "rp_request_length": 20})
	checkPartition(t, p, 4, func(id string) int {
		var i int
		fmt.Sscanf(id, "prefill_%d", &i)
		return i % 4
	})
}

// Fixed arrivals: the shards' sessions and due times interleave into the
// whole run's schedule, request for request.
func TestShardsPartitionMultiRoundChat(t *testing.T) {
	p := mkParams(t, config.MultiRoundChat, 100, map[string]any{
		"kv_cache_volume": 3.0, "mrc_shared_prompt_length": 10, "mrc_chat_history_length": 40,
		"mrc_user_input_length": 2, "mrc_qps": 10.0, "mrc_duration": 3.0,
	})
	owner := func(id string) int {
		var s, g int
		if _, err := fmt.Sscanf(id, "s%d_r%d", &s, &g); err != nil {
			fmt.Sscanf(id, "warmup_s%d", &s)
		}
		return s % 3
	}
	checkPartition(t, p, 3, owner)
	all := runShard(t, p, whole)
	if len(all) != 6+30 {
		t.Fatalf("whole run sent %d requests, want 6 warmups + 30", len(all))
	}
	for i := 0; i < 3; i++ {
		for id, s := range runShard(t, p, config.Shard{Index: i, Count: 3}) {
			if s.due != all[id].due {
				t.Fatalf("shard %d: %s due at %v, at %v in the whole run", i, id, s.due, all[id].due)
			}
		}
	}
}

// Poisson shards each run their own process at qps/N: about a third of
// the arrivals each, and not the same gaps.
func TestShardPoissonRate(t *testing.T) {
	ls := load.Settings{Rate: 30, Arrival: load.Poisson, Burstiness: 1, Seed: 5, Shard: config.Shard{Index: 0, Count: 3}}
	a0 := load.NewSchedule(ls)
	ls.Shard.Index = 1
	a1 := load.NewSchedule(ls)
	var x, y time.Duration
	same := true
	for g := 0; g < 3000; g++ {
		x, y = a0.Next(), a1.Next()
		same = same && x == y
	}
	if same {
		t.Fatal("two shards drew the same poisson gaps")
	}
	// 3000 gaps of mean 0.1 s (rate 30/3) end near 300 s.
	if s := x.Seconds(); s < 280 || s > 320 {
		t.Fatalf("3000 arrivals of a shard at 30/3 per second end at %.1fs", s)
	}
}

func TestShardRefusedWhereItChangesTheMeasure(t *testing.T) {
	for _, w := range []string{config.LongDocPermutator, config.PrefixSuffixTuner, config.CacheProbe, config.ConcurrentExactness} {
		c := config.Default()
		c.Set("workload", w)
		c.Set("shard", "1/2")
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), "--shard") || !strings.Contains(err.Error(), w+" cannot be split") {
			t.Fatalf("%s with --shard 1/2: %v", w, err)
		}
		c.Set("shard", "0/1")
		if err := c.Validate(); err != nil {
			t.Fatalf("%s with --shard 0/1 is an ordinary run: %v", w, err)
		}
	}
}

func TestShardNeedsAUnitPerShard(t *testing.T) {
	p := mkParams(t, config.LongDocQA, 200, map[string]any{"kv_cache_volume": 1.0, "ldqa_document_length": 100})
	p.Shard = config.Shard{Index: 2, Count: 3}
	if _, err := New(context.Background(), p); err == nil || !strings.Contains(err.Error(), "2 document(s), fewer than the 3 shards") {
		t.Fatalf("2 documents over 3 shards: %v", err)
	}
}
