package workload

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
)

// mkParams builds the parameters of a workload from a default config with
// the given settings.
func mkParams(t testing.TB, workload string, tokensPerGB int, set map[string]any) Params {
	t.Helper()
	c := config.Default()
	if err := c.Set("workload", workload); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		if err := c.Set(k, v); err != nil {
			t.Fatalf("set %s: %v", k, err)
		}
	}
	return Params{Config: c, TokensPerGB: tokensPerGB, Seed: int64(c.Int("seed")), Endpoint: sender.Chat}
}

// fakeClock is a clock that moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestMultiRoundChatUsers(t *testing.T) {
	cases := []struct {
		vol               float64
		tpg, shared, hist int
		want              int
	}{
		{100, 6000, 2000, 10000, 50},
		{1, 10000, 2000, 5000, 1},
		{1, 10000, 0, 7000, 1},
		{1, 10000, 1000, 2000, 3}, // 3.33 truncated
		{0.01, 10, 2000, 10000, 1},
	}
	for _, c := range cases {
		if got := MultiRoundChatUsers(c.vol, c.tpg, c.shared, c.hist); got != c.want {
			t.Errorf("users(%v, %d, %d+%d) = %d, want %d", c.vol, c.tpg, c.shared, c.hist, got, c.want)
		}
	}
}

func TestMultiRoundChatText(t *testing.T) {
	sys := MultiRoundChatSystem(3, 10)
	if sys != "Session 3. You are a helpful assistant. help help help" {
		t.Fatalf("system %q", sys)
	}
	if got := MultiRoundChatSystem(0, 5); got != "Session 0. You are a helpful assistant. " {
		t.Fatalf("short system %q", got)
	}
	h := MultiRoundChatHistory(2, 6)
	if h != "[Session 2 history] hi hi hi" {
		t.Fatalf("history %q", h)
	}
	if MultiRoundChatHistory(2, 0) != "" {
		t.Fatal("history 0 must give no history")
	}
	if q := MultiRoundChatQuery(3); q != "tell tell tell" {
		t.Fatalf("query %q", q)
	}
}

func TestMultiRoundChatMessageShapes(t *testing.T) {
	s := &mrcSession{ID: 0, System: MultiRoundChatSystem(0, 20), History: MultiRoundChatHistory(0, 20)}
	m := s.Messages("tell")
	roles := func(ms []sender.Message) string {
		var r []string
		for _, x := range ms {
			r = append(r, x.Role)
		}
		return strings.Join(r, ",")
	}
	if roles(m) != "system,user,assistant,user" {
		t.Fatalf("with history: %s", roles(m))
	}
	if m[2].Content != "Understood, I have read the context above." || !strings.HasPrefix(m[1].Content, "[Session 0 history] hi") || m[3].Content != "tell" {
		t.Fatalf("with history: %+v", m)
	}

	s = &mrcSession{ID: 1, System: MultiRoundChatSystem(1, 20)}
	s.Exchanges = []mrcExchange{{"q1", "a1"}, {"q2", "a2"}}
	m = s.Messages("q3")
	if len(m) != 6 || roles(m) != "system,user,assistant,user,assistant,user" {
		t.Fatalf("two exchanges, no history: %d messages %s", len(m), roles(m))
	}
	if m[1].Content != "q1" || m[2].Content != "a1" || m[4].Content != "a2" || m[5].Content != "q3" {
		t.Fatalf("exchange order: %+v", m)
	}
}

// TestMultiRoundChatArrivals: --mrc-qps with --mrc-arrival fixed is
// LMCache's g/qps; --request-rate is the same setting, and --arrival
// (or --burstiness) reshapes the gaps.
func TestMultiRoundChatArrivals(t *testing.T) {
	mrc := func(set map[string]any) *MultiRoundChat {
		t.Helper()
		wl, err := New(context.Background(), mkParams(t, config.MultiRoundChat, 1000, set))
		if err != nil {
			t.Fatal(err)
		}
		return wl.(*MultiRoundChat)
	}
	for _, set := range []map[string]any{{"mrc_qps": 4.0}, {"request_rate": "4"}, {"request_rate": "4", "mrc_qps": 4.0}} {
		w := mrc(set)
		a := load.NewSchedule(w.load)
		for g := 0; g < 5; g++ {
			if got, want := a.Next(), time.Duration(g)*250*time.Millisecond; got != want {
				t.Fatalf("%v: arrival %d at %v, want %v", set, g, got, want)
			}
		}
	}
	if w := mrc(map[string]any{"mrc_arrival": "poisson"}); w.load.Arrival != load.Poisson {
		t.Fatalf("--mrc-arrival poisson gave %s", w.load.Arrival)
	}
	if w := mrc(map[string]any{"burstiness": 0.5}); w.load.Arrival != load.Gamma || w.arrival != load.Gamma {
		t.Fatalf("--burstiness gave %s / %s", w.load.Arrival, w.arrival)
	}
	_, err := New(context.Background(), mkParams(t, config.MultiRoundChat, 1000, map[string]any{"request_rate": "5", "mrc_qps": 4.0}))
	if err == nil || !strings.Contains(err.Error(), "--request-rate") || !strings.Contains(err.Error(), "--mrc-qps") {
		t.Fatalf("different --request-rate and --mrc-qps: %v", err)
	}
}

func TestMultiRoundChatValidation(t *testing.T) {
	p := mkParams(t, config.MultiRoundChat, 0, nil)
	if _, err := New(context.Background(), p); err == nil || !strings.Contains(err.Error(), "--tokens-per-gb-kvcache") {
		t.Fatalf("missing tokens per GB: %v", err)
	}
	p = mkParams(t, config.MultiRoundChat, 1000, map[string]any{"mrc_shared_prompt_length": 0, "mrc_chat_history_length": 0})
	if _, err := New(context.Background(), p); err == nil || !strings.Contains(err.Error(), "--mrc-shared-prompt-length") {
		t.Fatalf("zero session size: %v", err)
	}
}

// mrcHarness drives a multi-round-chat run with a fake clock and a Send
// the test controls.
type mrcHarness struct {
	clock   *fakeClock
	start   time.Time
	sent    chan *sender.Request
	retries chan struct{}
	mu      sync.Mutex
	release map[string]chan string
}

func newMRCHarness() *mrcHarness {
	t0 := time.Unix(1_000_000, 0)
	return &mrcHarness{
		clock: &fakeClock{t: t0}, start: t0,
		sent: make(chan *sender.Request), retries: make(chan struct{}),
		release: map[string]chan string{},
	}
}

func (h *mrcHarness) gate(id string) chan string {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.release[id]
	if !ok {
		c = make(chan string, 1)
		h.release[id] = c
	}
	return c
}

// answer lets the request id finish with the reply text.
func (h *mrcHarness) answer(id, text string) { h.gate(id) <- text }

func (h *mrcHarness) env() Env {
	return Env{
		Send: func(ctx context.Context, req *sender.Request) (sender.Result, bool) {
			if ctx.Err() != nil {
				return sender.Result{}, false
			}
			res := sender.Result{RequestID: req.ID, Phase: req.Phase, Successful: true, Complete: true, CacheState: sender.StateCold}
			if req.Phase == sender.PhaseWarmup {
				return res, true
			}
			select {
			case h.sent <- req:
			case <-ctx.Done():
				return res, true
			}
			select {
			case res.Text = <-h.gate(req.ID):
			case <-ctx.Done():
			}
			return res, true
		},
		Phase: func(string, int, time.Duration) {},
		Logf:  func(string, ...any) {},
		Now:   h.clock.Now,
	}
}

// pause advances the fake clock; a retry while a session is busy is also
// reported to the test, which thereby paces the dispatcher.
func (h *mrcHarness) pause(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	if d > 0 {
		h.clock.advance(d)
	}
	if d == mrcRetry {
		select {
		case h.retries <- struct{}{}:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// TestMultiRoundChatWaitsForBusySession: request g goes to session g mod
// N; when that session still waits for its answer the dispatcher waits
// (retrying every 10 ms) and never skips to the next session.
func TestMultiRoundChatWaitsForBusySession(t *testing.T) {
	p := mkParams(t, config.MultiRoundChat, 100, map[string]any{
		"kv_cache_volume": 1.0, "mrc_shared_prompt_length": 10, "mrc_chat_history_length": 40,
		"mrc_user_input_length": 2, "mrc_qps": 1000.0, "mrc_duration": 1e6, // never reached in fake time
	})
	wl, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	w := wl.(*MultiRoundChat)
	if w.users != 2 {
		t.Fatalf("users = %d, want 2", w.users)
	}
	h := newMRCHarness()
	w.pause = h.pause
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx, h.env())
	}()
	defer func() {
		cancel()
		<-done
	}()

	// expectSend waits for the next dispatch. While a session is busy the
	// dispatcher blocks in its retry pause until the test lets it go on.
	expectSend := func(allowRetries bool) *sender.Request {
		t.Helper()
		retries := h.retries
		if !allowRetries {
			retries = nil
		}
		for {
			select {
			case r := <-h.sent:
				var s, g int
				if _, err := fmt.Sscanf(r.ID, "s%d_r%d", &s, &g); err != nil || s != g%2 {
					t.Fatalf("dispatched %s: request g must go to session g mod 2", r.ID)
				}
				return r
			case <-retries:
			case <-time.After(10 * time.Second):
				t.Fatal("no dispatch")
			}
		}
	}
	// expectRetries sees n busy retries and no dispatch in between.
	expectRetries := func(n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			select {
			case r := <-h.sent:
				t.Fatalf("dispatched %s while the round-robin target was busy", r.ID)
			case <-h.retries:
			case <-time.After(10 * time.Second):
				t.Fatal("dispatcher stopped retrying")
			}
		}
	}
	byID := func(rs ...*sender.Request) map[string]*sender.Request {
		m := map[string]*sender.Request{}
		for _, r := range rs {
			m[r.ID] = r
		}
		return m
	}

	first := byID(expectSend(false), expectSend(false))
	if first["s0_r0"] == nil || first["s1_r1"] == nil {
		t.Fatalf("first two requests %v; want s0_r0 and s1_r1", first)
	}
	// Request 2 belongs to session 0, which is busy: wait.
	expectRetries(3)
	// Session 1 becoming free must not let it jump the queue.
	h.answer("s1_r1", "answer one")
	expectRetries(3)
	h.answer("s0_r0", "answer zero")
	// Now request 2 goes to session 0 and request 3 to session 1; both
	// are sent at once, in either order.
	next := byID(expectSend(true), expectSend(true))
	r2, r3 := next["s0_r2"], next["s1_r3"]
	if r2 == nil || r3 == nil {
		t.Fatalf("after the wait got %v, want s0_r2 and s1_r3 (no skipping)", next)
	}
	if want := h.start.Add(2 * time.Millisecond); !r2.Scheduled.Equal(want) {
		t.Fatalf("s0_r2 scheduled at %v, want its due time %v", r2.Scheduled, want)
	}
	if got := len(r2.Messages); got != 6 {
		t.Fatalf("s0_r2 has %d messages, want 6 (system, history, ack, q, answer, q)", got)
	}
	if r2.Messages[4].Role != "assistant" || r2.Messages[4].Content != "answer zero" {
		t.Fatalf("the streamed answer is not in the session: %+v", r2.Messages[4])
	}
	if !r2.KeepText || r2.MaxTokens != 200 {
		t.Fatalf("measured request must keep its text (KeepText=%v) with max_tokens 200 (%d)", r2.KeepText, r2.MaxTokens)
	}
	if r3.Messages[4].Content != "answer one" {
		t.Fatalf("s1_r3 sent %+v", r3.Messages)
	}
}

// TestMultiRoundChatStopsAtDuration: no dispatch at or after the
// duration; the requests already sent finish and are counted.
func TestMultiRoundChatStopsAtDuration(t *testing.T) {
	p := mkParams(t, config.MultiRoundChat, 1000, map[string]any{
		"kv_cache_volume": 1.0, "mrc_shared_prompt_length": 50, "mrc_chat_history_length": 50,
		"mrc_qps": 10.0, "mrc_duration": 1.0,
	})
	wl, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	w := wl.(*MultiRoundChat)
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	w.pause = func(ctx context.Context, d time.Duration) bool {
		if d > 0 {
			clock.advance(d)
		}
		return ctx.Err() == nil
	}
	var mu sync.Mutex
	var ids, warm []string
	var phases []string
	env := Env{
		Send: func(ctx context.Context, req *sender.Request) (sender.Result, bool) {
			mu.Lock()
			if req.Phase == sender.PhaseWarmup {
				warm = append(warm, req.ID)
				if req.MaxTokens != 1 || req.Messages[len(req.Messages)-1].Content != "Hello" {
					t.Errorf("warmup %s: max_tokens %d, query %q", req.ID, req.MaxTokens, req.Messages[len(req.Messages)-1].Content)
				}
			} else {
				ids = append(ids, req.ID)
			}
			mu.Unlock()
			pt, ct := 100, 90
			return sender.Result{RequestID: req.ID, Phase: req.Phase, Successful: true, Complete: true,
				CacheState: sender.StateReused, PromptTokens: &pt, CachedTokens: &ct, Text: "ok"}, true
		},
		Phase: func(name string, total int, d time.Duration) {
			mu.Lock()
			phases = append(phases, fmt.Sprintf("%s/%d/%s", name, total, d))
			mu.Unlock()
		},
		Logf: func(string, ...any) {},
		Now:  clock.Now,
	}
	if err := w.Run(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	if len(warm) != 10 || warm[0] != "warmup_s0" || warm[9] != "warmup_s9" {
		t.Fatalf("warmups %v", warm)
	}
	if len(ids) != 10 {
		t.Fatalf("dispatched %d requests in 1 s at 10/s, want 10: %v", len(ids), ids)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	for g := 0; g < 10; g++ {
		if id := fmt.Sprintf("s%d_r%d", g, g); !seen[id] {
			t.Fatalf("missing %s in %v", id, ids)
		}
	}
	if strings.Join(phases, " ") != "warmup/10/0s measuring/-1/1s" {
		t.Fatalf("phases %v", phases)
	}
	o := w.Outcome()
	if w.measured.Requests != 10 || w.firstRound.Requests != 10 || o.Failed {
		t.Fatalf("outcome: measured %d, first round %d", w.measured.Requests, w.firstRound.Requests)
	}
}
