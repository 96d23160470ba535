package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func TestWarmTTFTBelowColdByTheRatioOfTheRates(t *testing.T) {
	for _, speed := range []float64{1, 10} {
		ts := startTraced(t, func(c *Config) { c.Speed = speed })
		prompt := ids(1, 4000)
		streamCompletion(t, ts.URL, prompt, nil)
		cold := ts.last(t)
		streamCompletion(t, ts.URL, prompt, nil)
		warm := ts.last(t)
		if warm.GPUTokens != 3984 {
			t.Fatalf("warm cached %d", warm.GPUTokens)
		}
		// cold: 4000/20000 + 5ms; warm: 16/20000 + 5ms.
		wantRatio := (4000.0/20000 + 0.005) / (16.0/20000 + 0.005)
		got := cold.TTFT.Seconds() / warm.TTFT.Seconds()
		if math.Abs(got/wantRatio-1) > 0.01 {
			t.Errorf("speed %v: cold/warm TTFT = %.3f, want %.3f", speed, got, wantRatio)
		}
		// --speed divides every delay.
		if want := (4000.0/20000 + 0.005) / speed; math.Abs(cold.TTFT.Seconds()/want-1) > 0.01 {
			t.Errorf("speed %v: cold TTFT %v, want %vs", speed, cold.TTFT, want)
		}
	}
}

// On the real clock, the delays are really slept: the cold request is
// many times slower than the warm one. The prompt is short and the
// prefill slow, so the delays dominate what the client sees: the work of
// reading and tokenizing a prompt is the same for both requests and, on
// a loaded machine under -race, 8000 words of it made a warm request as
// slow as a sixth of the cold one's sleep.
func TestWarmTTFTBelowColdOnTheWire(t *testing.T) {
	r := startSim(t, func(c *Config) {
		c.ZeroLatency = false
		c.PrefillTPS = 4000
	})
	// 800 tokens + template; cold: 0.2 s of prefill; warm: the last
	// block's 16 tokens, 4 ms, and the 5 ms overhead.
	body, err := json.Marshal(completion(words("hi", 800), map[string]any{"max_tokens": 1}))
	if err != nil {
		t.Fatal(err)
	}
	ttft := func() time.Duration {
		start := time.Now()
		resp := post(t, r.URL(), "/v1/completions", body)
		defer resp.Body.Close()
		buf := make([]byte, 1)
		if _, err := resp.Body.Read(buf); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	// Every repeat is warm alike: the fastest of three is the one a
	// moment of the loaded machine's scheduling did not delay.
	cold := ttft()
	warm := min(ttft(), ttft(), ttft())
	if cold < 200*time.Millisecond {
		t.Errorf("cold %v: the 0.2 s prefill was not slept", cold)
	}
	if ratio := float64(cold) / float64(warm); ratio < 5 {
		t.Errorf("cold %v, warm %v: ratio %.1f, want well above 5 (model: ~22)", cold, warm, ratio)
	}
}

func TestDecodeSlowsWithTheBatch(t *testing.T) {
	s, err := New(testConfig(func(c *Config) { c.ZeroLatency = false; c.MaxNumSeqs = 64 }))
	if err != nil {
		t.Fatal(err)
	}
	alone := s.chunkGap(1)
	if alone != 10*time.Millisecond {
		t.Errorf("one sequence: gap %v, want 10ms at 100 tok/s", alone)
	}
	s.sched.running = 33
	if got := s.chunkGap(1); got != 15*time.Millisecond {
		t.Errorf("33 running of 64: gap %v, want 15ms", got)
	}
	s.sched.running = 65
	if got := s.chunkGap(2); got != 40*time.Millisecond {
		t.Errorf("two tokens at a full batch: gap %v, want 40ms", got)
	}
}

func TestFixedTTFTIgnoresLoadAndCache(t *testing.T) {
	ts := startTraced(t, func(c *Config) {
		c.FixedTTFT = 250 * time.Millisecond
		c.FixedITL = 20 * time.Millisecond
		c.MaxNumSeqs = 1
	})
	for i := 0; i < 2; i++ {
		streamCompletion(t, ts.URL, ids(1, 3000), nil)
		if tr := ts.last(t); tr.TTFT != 250*time.Millisecond {
			t.Errorf("request %d: TTFT %v, want exactly 250ms", i, tr.TTFT)
		}
	}
	if ts.sched.unlimited != true {
		t.Error("measuring mode still limits running requests")
	}
	if g := ts.chunkGap(4); g != 20*time.Millisecond {
		t.Errorf("fixed ITL gap %v", g)
	}
}

// Fixed delays are real on the wire and never scaled by --speed: the
// stream takes the three 30 ms gaps in real time, and the chunks were
// scheduled exactly 30 ms apart. (Gaps seen by the client are not
// compared with 30 ms: a chunk delivered late makes the next gap look
// shorter by as much.)
func TestFixedITLOnTheWire(t *testing.T) {
	cfg := testConfig(func(c *Config) {
		c.ZeroLatency = false
		c.FixedITL = 30 * time.Millisecond
		c.Speed = 1000 // never applies to fixed delays
	})
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordingClock{}
	s.clock = rec
	hs := httptest.NewServer(s)
	defer hs.Close()
	start := time.Now()
	streamChat(t, hs.URL, "hi", map[string]any{"max_tokens": 4, "ignore_eos": true})
	if took := time.Since(start); took < 90*time.Millisecond {
		t.Errorf("4 chunks 30ms apart took %v, want at least 90ms", took)
	}
	d := rec.deadlines()
	if len(d) < 3 {
		t.Fatalf("%d sleeps, want the three between 4 chunks", len(d))
	}
	d = d[len(d)-3:]
	for i := 1; i < len(d); i++ {
		if gap := d[i].Sub(d[i-1]); gap != 30*time.Millisecond {
			t.Errorf("chunk %d scheduled %v after the one before, want exactly 30ms", i+2, gap)
		}
	}
}

// recordingClock is the real clock, remembering every deadline it slept
// until.
type recordingClock struct {
	realClock
	mu    sync.Mutex
	until []time.Time
}

func (c *recordingClock) SleepUntil(ctx context.Context, t time.Time) error {
	c.mu.Lock()
	c.until = append(c.until, t)
	c.mu.Unlock()
	return c.realClock.SleepUntil(ctx, t)
}

func (c *recordingClock) deadlines() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.until...)
}

// gateClock holds every sleep until the test opens the gate.
type gateClock struct {
	gate    chan struct{}
	once    sync.Once
	waiting chan struct{} // one value per sleeper that arrives
}

func (g *gateClock) Now() time.Time { return time.Now() }

func (g *gateClock) SleepUntil(ctx context.Context, _ time.Time) error {
	g.waiting <- struct{}{}
	select {
	case <-g.gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gateClock) open() { g.once.Do(func() { close(g.gate) }) }

func TestQueueBoundsAndWaitingGauge(t *testing.T) {
	s, err := New(testConfig(func(c *Config) {
		c.ZeroLatency = false
		c.MaxNumSeqs = 1
		c.MaxWaiting = 1
	}))
	if err != nil {
		t.Fatal(err)
	}
	gc := &gateClock{gate: make(chan struct{}), waiting: make(chan struct{}, 16)}
	s.clock = gc
	queued := make(chan struct{}, 16)
	onChange := s.sched.onChange
	s.sched.onChange = func(running, waiting int) {
		onChange(running, waiting)
		if waiting == 1 {
			queued <- struct{}{}
		}
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	defer gc.open()

	type outcome struct {
		res streamResult
		err error
	}
	results := make(chan outcome, 2)
	send := func(first int) {
		body, _ := json.Marshal(completion(ids(first, 40), map[string]any{"max_tokens": 2}))
		resp, err := http.Post(hs.URL+"/v1/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			results <- outcome{err: err}
			return
		}
		res, err := parseStream(resp)
		results <- outcome{res, err}
	}
	go send(100)
	<-gc.waiting // the first request runs (held in its prefill)
	go send(200)
	<-queued // the second waits for the only sequence slot
	if got := gaugeValue(t, s.metrics.running); got != 1 {
		t.Errorf("num_requests_running = %v, want 1", got)
	}
	// The running request pins its 2 full blocks of the 5000-block tier.
	if got := s.cache.Usage(); got != 2.0/5000 {
		t.Errorf("kv cache usage %v while running, want %v", got, 2.0/5000)
	}

	resp := post(t, hs.URL, "/v1/completions", completion(ids(3, 10), nil))
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("third request over --max-waiting 1: status %d, want 429", resp.StatusCode)
	}
	gc.open()
	for i := 0; i < 2; i++ {
		o := <-results
		if o.err != nil || !o.res.Done || o.res.Usage.PromptTokens != 40 {
			t.Errorf("queued request: %v %+v", o.err, o.res)
		}
	}
}

func gaugeValue(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func TestKVUsageFallsToZeroWhenIdle(t *testing.T) {
	r := startSim(t, nil)
	streamCompletion(t, r.URL(), ids(1, 200), nil)
	if u := r.Server.cache.Usage(); u != 0 {
		t.Errorf("idle usage %v, want 0 (cached blocks are free)", u)
	}
	if gpu, _ := r.Server.cache.Resident(); gpu != 12 {
		t.Errorf("resident blocks %d, want 12", gpu)
	}
}
