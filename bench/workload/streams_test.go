package workload

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
)

func TestLittleStreams(t *testing.T) {
	cases := []struct {
		rate       float64
		latency    time.Duration
		burstiness float64
		want       int
	}{
		// 2 x 72 + 4 x sqrt(72) = 177.9
		{1000, 72 * time.Millisecond, 1, 178},
		// 2 x 1 + 4 x 1
		{10, 100 * time.Millisecond, 1, 6},
		// Gamma gaps with burstiness 0.25 double the deviation: 2 + 8.
		{10, 100 * time.Millisecond, 0.25, 10},
		// Burstiness above 1 (more regular than Poisson) keeps Poisson's.
		{10, 100 * time.Millisecond, 4, 6},
		{0, time.Second, 1, 1},
		{1e6, 24 * time.Hour, 1, math.MaxInt32},
	}
	for _, c := range cases {
		if got := littleStreams(c.rate, c.latency, c.burstiness); got != c.want {
			t.Errorf("littleStreams(%g, %s, %g) = %d, want %d", c.rate, c.latency, c.burstiness, got, c.want)
		}
	}
	// 16 prompt tokens at 5000 tok/s + one token at 20 ms + 50 ms.
	if got, want := expectedLatency(16, 1), 73200*time.Microsecond; got != want {
		t.Errorf("expectedLatency(16, 1) = %s, want %s", got, want)
	}
}

// TestPlannedStreams: each workload's plan follows its own in-flight
// setting, the --max-concurrency cap and, at a rate, Little's law; a
// rated random-prefill plans for its load, not for its request count.
func TestPlannedStreams(t *testing.T) {
	cases := []struct {
		name     string
		workload string
		set      map[string]any
		want     int
		flag     string
	}{
		{"all at once", config.RandomPrefill, map[string]any{"rp_num_requests": 3000}, 3000, "--rp-num-requests"},
		{"capped", config.RandomPrefill, map[string]any{"rp_num_requests": 3000, "max_concurrency": 64}, 64, "--max-concurrency"},
		// 16 tokens: 73.2 ms expected; 2 x 73.2 + 4 x sqrt(73.2) = 180.6
		{"rated", config.RandomPrefill, map[string]any{"rp_num_requests": 1_000_000, "rp_request_length": 16, "request_rate": "1000"}, 181, "--request-rate"},
		{"rated and capped", config.RandomPrefill, map[string]any{"rp_num_requests": 1_000_000, "rp_request_length": 16, "request_rate": "1000", "max_concurrency": 20}, 20, "--max-concurrency"},
		{"rated, fewer requests", config.RandomPrefill, map[string]any{"rp_num_requests": 50, "rp_request_length": 16, "request_rate": "1000"}, 50, "--rp-num-requests"},
		{"shard's rate", config.RandomPrefill, map[string]any{"rp_num_requests": 1_000_000, "rp_request_length": 16, "request_rate": "2000", "shard": "0/2"}, 181, "--request-rate"},
		{"in flight", config.LongDocQA, map[string]any{"ldqa_num_inflight_requests": 7, "ldqa_document_length": 100, "kv_cache_volume": 1}, 7, "--ldqa-num-inflight-requests"},
		{"fewer requests than in flight", config.LongDocQA, map[string]any{"ldqa_num_inflight_requests": 70, "ldqa_document_length": 100, "kv_cache_volume": 1, "ldqa_query_per_document": 1}, 10, "--ldqa-num-inflight-requests"},
		{"levels", config.ConcurrentExactness, map[string]any{"ce_levels": []int{1, 16, 4}}, 16, "--ce-levels"},
		{"streams", config.CacheProbe, map[string]any{"cp_streams": 9}, 9, "--cp-streams"},
		{"one at a time", config.PrefixSuffixTuner, nil, 1, ""},
		{"sessions", config.MultiRoundChat, map[string]any{"kv_cache_volume": 1, "mrc_shared_prompt_length": 50, "mrc_chat_history_length": 50, "mrc_qps": 1000}, 10, "--kv-cache-volume"},
		// 50 + 50 + 10 tokens, 20 out: 472 ms; 2 x 4.72 + 4 x sqrt(4.72)
		{"sessions at a rate", config.MultiRoundChat, map[string]any{"kv_cache_volume": 100, "mrc_shared_prompt_length": 50, "mrc_chat_history_length": 50, "mrc_user_input_length": 10, "mrc_output_length": 20, "mrc_qps": 10}, 19, "--mrc-qps"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := mkParams(t, c.workload, 1000, c.set)
			if sh := p.Config.Shard(); sh.Sharded() {
				p.Shard = sh
			}
			w, err := New(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			ls, err := load.FromConfig(p.Config)
			if err != nil {
				t.Fatal(err)
			}
			got := w.PlanStreams(ls)
			if got.Streams != c.want || got.Flag != c.flag {
				t.Errorf("%s %v: planned %d streams (%s), want %d (%s)", c.workload, c.set, got.Streams, got.Flag, c.want, c.flag)
			}
			if (got.Rate > 0) != (c.flag == "--request-rate" || c.flag == "--mrc-qps") {
				t.Errorf("Little's law inputs %g req/s x %s for a plan set by %s", got.Rate, got.Latency, got.Flag)
			}
		})
	}
}

// TestKVTierPressurePlansItsStreams: the in-flight setting, capped for
// the measured requests; the warmup sweep is not capped.
func TestKVTierPressurePlansItsStreams(t *testing.T) {
	plan := func(set map[string]any) StreamPlan {
		set["ktp_pool_size"], set["ktp_docs_per_request"], set["ktp_context_length"] = 40, 2, 20
		set["ktp_num_requests"] = 100
		p := mkParams(t, config.KVTierPressure, 1000, set)
		p.Tokenize = fakeTokenize
		w, err := New(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		ls, err := load.FromConfig(p.Config)
		if err != nil {
			t.Fatal(err)
		}
		return w.PlanStreams(ls)
	}
	if got := plan(map[string]any{"ktp_num_inflight_requests": 12}); got.Streams != 12 || got.Flag != "--ktp-num-inflight-requests" {
		t.Errorf("12 in flight: planned %+v", got)
	}
	if got := plan(map[string]any{"ktp_num_inflight_requests": 12, "max_concurrency": 3, "no_warmup": true}); got.Streams != 3 || got.Flag != "--max-concurrency" {
		t.Errorf("capped at 3 without warmup: planned %+v", got)
	}
	// The warmup's 20 groups go 12 at a time whatever the cap.
	if got := plan(map[string]any{"ktp_num_inflight_requests": 12, "max_concurrency": 3}); got.Streams != 12 {
		t.Errorf("capped at 3 with a warmup sweep: planned %+v, want 12", got)
	}
}

// TestAheadBuildsABoundedLookAhead: requests are built in order as they
// are taken, at most lookAhead before the one taken; the builder stops
// when the consumer does.
func TestAheadBuildsABoundedLookAhead(t *testing.T) {
	var built atomic.Int64
	build := func(i int) *sender.Request {
		built.Add(1)
		if i%3 == 2 {
			return nil // skipped
		}
		return &sender.Request{ID: fmt.Sprint(i)}
	}
	taken := 0
	var ids []string
	for r := range ahead(context.Background(), 1_000_000, build) {
		ids = append(ids, r.ID)
		taken++
		if taken == 10 {
			break
		}
	}
	if want := "0 1 3 4 6 7 9 10 12 13"; strings.Join(ids, " ") != want {
		t.Errorf("took %v, want %s", ids, want)
	}
	// ahead returns once its builder has stopped: 10 taken (14
	// indices), then at most a full channel (96 indices) and the one the
	// builder held when it stopped.
	if n := built.Load(); n > 14+3*lookAhead/2+3 {
		t.Errorf("%d requests built for 10 taken: the look-ahead is not bounded", n)
	}
}

// TestRandomPrefillSendsAsItBuilds: built as they are dispatched, every
// owned request is still sent once, with its prompt.
func TestRandomPrefillSendsAsItBuilds(t *testing.T) {
	p := mkParams(t, config.RandomPrefill, 1000, map[string]any{"rp_num_requests": 5000, "rp_request_length": 12})
	p.Shard = config.Shard{Index: 1, Count: 2}
	w, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var ids []string
	env := Env{
		Send: func(ctx context.Context, req *sender.Request) (sender.Result, bool) {
			mu.Lock()
			ids = append(ids, req.ID)
			mu.Unlock()
			if n := strings.TrimPrefix(req.ID, "prefill_"); req.Messages[0].Content != "Request "+n+": hi hi" {
				t.Errorf("%s: prompt %q", req.ID, req.Messages[0].Content)
			}
			return sender.Result{RequestID: req.ID, Phase: req.Phase, Successful: true}, true
		},
		Phase: func(string, int, time.Duration) {},
		Logf:  func(string, ...any) {},
		Now:   time.Now,
	}
	// One at a time: each request goes before the next is taken.
	env.Release = func(ctx context.Context, req *sender.Request) bool { return true }
	if err := w.Run(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 2500 {
		t.Fatalf("%d requests sent, want 2500", len(ids))
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("%s sent twice", id)
		}
		seen[id] = true
	}
	for i := 1; i < 5000; i += 2 {
		if !seen[fmt.Sprintf("prefill_%d", i)] {
			t.Fatalf("prefill_%d (shard 1/2) not sent", i)
		}
	}
	if RandomPrefillPrompt(7, 12) != "Request 7: hi hi" {
		t.Errorf("RandomPrefillPrompt(7, 12) = %q", RandomPrefillPrompt(7, 12))
	}
}

// TestMultiRoundChatWorkingSetIsKept: the sessions' working set is kept
// as a running sum that always equals the sum over the sessions.
func TestMultiRoundChatWorkingSetIsKept(t *testing.T) {
	p := mkParams(t, config.MultiRoundChat, 1000, map[string]any{"kv_cache_volume": 1, "mrc_shared_prompt_length": 5, "mrc_chat_history_length": 5})
	wl, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	w := wl.(*MultiRoundChat)
	maxSum := 0
	for i := 0; i < 500; i++ {
		sid := (i * 37) % 100
		prompt, out := 10+i%17, i%5
		res := &sender.Result{RequestID: fmt.Sprintf("s%d_r%d", sid, i), Phase: sender.PhaseMeasured, Successful: i%11 != 0,
			PromptTokens: &prompt, CompletionTokens: &out}
		w.Observe(res)
		sum := 0
		for _, n := range w.sessTokens {
			sum += n
		}
		maxSum = max(maxSum, sum)
		if w.workingSet() != sum {
			t.Fatalf("after %d requests the working set is %d, the sessions hold %d", i+1, w.workingSet(), sum)
		}
	}
	if w.maxSet != maxSum {
		t.Errorf("max working set %d, want %d", w.maxSet, maxSum)
	}
}

// TestSetPromptJoinsMessages: the completions prompt is the messages
// joined by blank lines.
func TestSetPromptJoinsMessages(t *testing.T) {
	r := &sender.Request{Endpoint: sender.Completions, Messages: []sender.Message{{Content: "a"}, {Content: ""}, {Content: "b c"}}}
	setPrompt(r)
	if r.Prompt != "a\n\n\n\nb c" {
		t.Errorf("prompt %q", r.Prompt)
	}
	chat := &sender.Request{Endpoint: sender.Chat, Messages: r.Messages}
	if setPrompt(chat); chat.Prompt != "" {
		t.Errorf("a chat request got a prompt: %q", chat.Prompt)
	}
}
