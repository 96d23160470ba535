package metrics

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeEngine serves vLLM-named counters the test sets.
type fakeEngine struct {
	queries, hits atomic.Int64
	srv           *httptest.Server
}

func newFakeEngine(t *testing.T) *fakeEngine {
	e := &fakeEngine{}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "# TYPE vllm:prefix_cache_queries_total counter\nvllm:prefix_cache_queries_total{engine=\"0\"} %d\n", e.queries.Load())
		fmt.Fprintf(w, "# TYPE vllm:prefix_cache_hits_total counter\nvllm:prefix_cache_hits_total{engine=\"0\"} %d\n", e.hits.Load())
		fmt.Fprintf(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1\n")
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *fakeEngine) set(q, h int64) { e.queries.Store(q); e.hits.Store(h) }

// lineSink collects metrics.jsonl lines and hands each to a channel.
type lineSink struct {
	mu    sync.Mutex
	lines []Line
	ch    chan Line
}

func newLineSink() *lineSink { return &lineSink{ch: make(chan Line, 1000)} }

func (s *lineSink) Write(b []byte) (int, error) {
	if len(b) == 0 || b[len(b)-1] != '\n' || strings.Count(string(b), "\n") != 1 {
		return 0, fmt.Errorf("not one whole line: %q", b)
	}
	var l Line
	if err := json.Unmarshal(b, &l); err != nil {
		return 0, err
	}
	s.mu.Lock()
	s.lines = append(s.lines, l)
	s.mu.Unlock()
	s.ch <- l
	return len(b), nil
}

// next waits for the next line; the timer only turns a hang into a
// failure.
func (s *lineSink) next(t *testing.T) Line {
	t.Helper()
	select {
	case l := <-s.ch:
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("no metrics.jsonl line within 10s")
		return Line{}
	}
}

func TestSamplerLinePerTick(t *testing.T) {
	e := newFakeEngine(t)
	e.set(10, 5)
	sink := newLineSink()
	tick := make(chan time.Time)
	s := Start(context.Background(), SamplerOptions{URL: e.srv.URL + "/metrics", Out: sink, tick: tick})
	first := sink.next(t) // the sample taken at once
	if first.Metrics["vllm:prefix_cache_queries_total"] != 10 || first.Error != "" || first.Time <= 0 {
		t.Fatalf("first line = %+v", first)
	}
	for i := 1; i <= 3; i++ {
		e.set(int64(10+i), 5)
		tick <- time.Now()
		l := sink.next(t)
		if got := l.Metrics["vllm:prefix_cache_queries_total"]; got != float64(10+i) {
			t.Fatalf("line %d queries = %v, want %d", i, got, 10+i)
		}
		if l.Metrics["vllm:num_requests_running"] != 1 {
			t.Fatalf("gauge missing from line %d: %+v", i, l.Metrics)
		}
	}
	m := s.Stop()
	if m.Scrapes != 5 || m.FailedScrapes != 0 { // 1 + 3 ticks + the final sample
		t.Errorf("scrapes = %d (%d failed), want 5 (0)", m.Scrapes, m.FailedScrapes)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.lines) != 5 || sink.lines[4].Mark != MarkFinal {
		t.Errorf("lines = %d, last mark %q", len(sink.lines), sink.lines[len(sink.lines)-1].Mark)
	}
}

func TestSamplerInterval(t *testing.T) {
	e := newFakeEngine(t)
	sink := newLineSink()
	const interval = 20 * time.Millisecond
	s := Start(context.Background(), SamplerOptions{URL: e.srv.URL, Interval: interval, Out: sink})
	var ls []Line
	for len(ls) < 6 {
		ls = append(ls, sink.next(t))
	}
	s.Stop()
	// Line 0 is the first sample, lines 1-5 the ticks. A ticker never
	// runs early, so the fifth tick's line comes at least five intervals
	// after the sampler started. (The span from line 0 is no bound: on a
	// loaded machine the first scrape can end late and the ticks queued
	// behind it follow at once.)
	if got := ls[5].Elapsed; got < 5*interval.Seconds() {
		t.Errorf("the fifth tick's line at %.3fs, before five intervals (%.3fs)", got, 5*interval.Seconds())
	}
	for i := 1; i < len(ls); i++ {
		if ls[i].Elapsed <= ls[i-1].Elapsed || ls[i].Time < ls[i-1].Time {
			t.Errorf("line %d goes back in time: %+v after %+v", i, ls[i], ls[i-1])
		}
	}
}

func TestSamplerDeltasAndHitRate(t *testing.T) {
	e := newFakeEngine(t)
	e.set(100, 10) // warm-up traffic before the measured phase
	sink := newLineSink()
	tick := make(chan time.Time)
	s := Start(context.Background(), SamplerOptions{URL: e.srv.URL, Out: sink, tick: tick})
	sink.next(t)
	if s.LiveHitRate() != nil {
		t.Error("LiveHitRate before the measured start should be nil")
	}
	s.MarkMeasuredStart()
	if l := sink.next(t); l.Mark != MarkMeasuredStart {
		t.Fatalf("start mark line = %+v", l)
	}
	if r := s.LiveHitRate(); r != nil {
		t.Errorf("LiveHitRate with nothing queried = %v, want nil", *r)
	}

	e.set(300, 160)
	tick <- time.Now()
	sink.next(t)
	if r := s.LiveHitRate(); r == nil || *r != 0.75 {
		t.Errorf("LiveHitRate = %v, want 0.75 (150 of 200)", r)
	}

	e.set(500, 210)
	s.MarkMeasuredEnd()
	e.set(900, 900) // after the measured phase: must not count
	m := s.Stop()

	want := map[string]Delta{
		"vllm:prefix_cache_queries_total": {100, 500, 400},
		"vllm:prefix_cache_hits_total":    {10, 210, 200},
	}
	if len(m.Counters) != len(want) {
		t.Errorf("counters = %+v, want only %v (gauges are not differenced)", m.Counters, want)
	}
	for k, w := range want {
		if m.Counters[k] != w {
			t.Errorf("%s = %+v, want %+v", k, m.Counters[k], w)
		}
	}
	if m.PrefixCacheHitRate == nil || *m.PrefixCacheHitRate != 0.5 {
		t.Errorf("prefix_cache_hit_rate = %v, want 0.5", m.PrefixCacheHitRate)
	}
	if !m.Exact || m.Scrapes != 4 || m.FailedScrapes != 0 {
		t.Errorf("exact %v, scrapes %d, failed %d; want true, 4, 0", m.Exact, m.Scrapes, m.FailedScrapes)
	}
	if m.HitRateSource != "vllm:prefix_cache_hits_total / vllm:prefix_cache_queries_total" {
		t.Errorf("hit_rate_source = %q", m.HitRateSource)
	}
	if again := s.Stop(); again.Scrapes != m.Scrapes {
		t.Error("a second Stop should return the same figures")
	}

	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	json.Unmarshal(b, &back)
	for _, k := range []string{"counters", "prefix_cache_hit_rate", "scrapes", "failed_scrapes", "exact"} {
		if _, ok := back[k]; !ok {
			t.Errorf("server_metrics JSON lacks %q: %s", k, b)
		}
	}
	c := back["counters"].(map[string]any)["vllm:prefix_cache_hits_total"].(map[string]any)
	if c["before"] != 10.0 || c["after"] != 210.0 || c["delta"] != 200.0 {
		t.Errorf("counter JSON = %v", c)
	}
}

func TestCounterReset(t *testing.T) {
	m := serverMetrics(
		map[string]float64{"vllm:prefix_cache_queries_total": 1000, "vllm:prefix_cache_hits_total": 500},
		map[string]float64{"vllm:prefix_cache_queries_total": 40, "vllm:prefix_cache_hits_total": 10},
		2, 0, true)
	if d := m.Counters["vllm:prefix_cache_queries_total"].Delta; d != 40 {
		t.Errorf("delta across a restart = %v, want 40 (counted from zero)", d)
	}
	if m.PrefixCacheHitRate == nil || *m.PrefixCacheHitRate != 0.25 {
		t.Errorf("hit rate = %v, want 0.25", m.PrefixCacheHitRate)
	}
}

func TestSamplerGarbageEndpoint(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<html><body>metrics are elsewhere</body></html>\n")
	}))
	defer srv.Close()
	sink := newLineSink()
	var logs []string
	var logMu sync.Mutex
	tick := make(chan time.Time)
	s := Start(context.Background(), SamplerOptions{URL: srv.URL, Out: sink, tick: tick,
		Logf: func(f string, a ...any) { logMu.Lock(); logs = append(logs, fmt.Sprintf(f, a...)); logMu.Unlock() }})
	sink.next(t)
	s.MarkMeasuredStart()
	sink.next(t)
	tick <- time.Now()
	l := sink.next(t)
	if l.Error == "" || l.Metrics != nil {
		t.Errorf("failed scrape line = %+v, want an error and null metrics", l)
	}
	if s.LiveHitRate() != nil {
		t.Error("LiveHitRate without a good sample should be nil")
	}
	s.MarkMeasuredEnd()
	m := s.Stop()
	if m.Scrapes != 4 || m.FailedScrapes != 4 || len(m.Counters) != 0 || m.PrefixCacheHitRate != nil || m.Exact {
		t.Errorf("server_metrics = %+v", m)
	}
	logMu.Lock()
	defer logMu.Unlock()
	if len(logs) != 1 || !strings.Contains(logs[0], "not Prometheus text format") {
		t.Errorf("logs = %q, want one line saying why", logs)
	}
}

func TestSamplerHangingEndpoint(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	const timeout = 100 * time.Millisecond
	sink := newLineSink()
	s := Start(context.Background(), SamplerOptions{URL: srv.URL, Timeout: timeout, Interval: 30 * time.Millisecond, Out: sink})

	t0 := time.Now()
	s.MarkMeasuredStart()
	if d := time.Since(t0); d > timeout+time.Second {
		t.Errorf("MarkMeasuredStart took %v with a %v timeout", d, timeout)
	}
	// Wait for the start mark's line and for a periodic one: a periodic
	// scrape still hanging when Stop comes is cut by Stop and not counted,
	// so at least one must have timed out on its own before.
	var startLine, periodic *Line
	for startLine == nil || periodic == nil {
		l := sink.next(t)
		if l.Mark == MarkMeasuredStart {
			startLine = &l
		} else if l.Mark == "" {
			periodic = &l
		}
	}
	for _, l := range []*Line{startLine, periodic} {
		if !strings.Contains(l.Error, "no answer within 100ms") {
			t.Errorf("hung scrape line (mark %q) error = %q", l.Mark, l.Error)
		}
	}

	t0 = time.Now()
	m := s.Stop() // no end mark: Stop takes the final sample itself
	if d := time.Since(t0); d > timeout+time.Second {
		t.Errorf("Stop took %v with a %v timeout", d, timeout)
	}
	if m.FailedScrapes != m.Scrapes || m.Scrapes < 3 || m.Exact {
		t.Errorf("server_metrics = %+v", m)
	}
}

// A periodic scrape still in flight when the run stops is cut by Stop
// itself: that is no failure of the engine, so it is neither counted nor
// written, and the figures stay exact.
func TestStopCutsAScrapeInFlight(t *testing.T) {
	var hang atomic.Bool
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hang.CompareAndSwap(true, false) {
			arrived <- struct{}{}
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		io.WriteString(w, "vllm:prefix_cache_queries_total 50\nvllm:prefix_cache_hits_total 20\n")
	}))
	defer srv.Close()
	defer close(release)
	sink := newLineSink()
	tick := make(chan time.Time)
	// The timeout is far beyond the test, so only Stop can end the scrape
	// that hangs.
	s := Start(context.Background(), SamplerOptions{URL: srv.URL, Out: sink, tick: tick, Timeout: time.Hour})
	sink.next(t)
	s.MarkMeasuredStart()
	sink.next(t)
	hang.Store(true)
	tick <- time.Now()
	select {
	case <-arrived: // the periodic scrape is in flight and will not answer
	case <-time.After(10 * time.Second):
		t.Fatal("the periodic scrape did not reach the endpoint within 10s")
	}
	s.MarkMeasuredEnd()
	sink.next(t)
	m := s.Stop()
	if !m.Exact || m.Scrapes != 3 || m.FailedScrapes != 0 {
		t.Errorf("exact %v, scrapes %d, failed %d; want true, 3, 0", m.Exact, m.Scrapes, m.FailedScrapes)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	for _, l := range sink.lines {
		if l.Error != "" {
			t.Errorf("line %+v: the scrape cut by Stop was written as a failure", l)
		}
	}
	if len(sink.lines) != 3 {
		t.Errorf("%d lines, want 3 (first, measured_start, measured_end)", len(sink.lines))
	}
}

func TestSamplerRecoversAfterFailures(t *testing.T) {
	var up atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "vllm:prefix_cache_queries_total 50\nvllm:prefix_cache_hits_total 20\n")
	}))
	defer srv.Close()
	sink := newLineSink()
	tick := make(chan time.Time)
	s := Start(context.Background(), SamplerOptions{URL: srv.URL, Out: sink, tick: tick})
	sink.next(t)
	s.MarkMeasuredStart() // fails: the next good sample becomes "before"
	sink.next(t)
	up.Store(true)
	tick <- time.Now()
	sink.next(t)
	s.MarkMeasuredEnd()
	m := s.Stop()
	if m.Exact || m.FailedScrapes != 2 || m.Counters["vllm:prefix_cache_queries_total"].Before != 50 {
		t.Errorf("server_metrics = %+v", m)
	}
}

func TestSection(t *testing.T) {
	rate := 0.8333
	title, rows := Section(ServerMetrics{
		Counters: map[string]Delta{
			"vllm:prefix_cache_hits_total":    {10, 510, 500},
			"vllm:prefix_cache_queries_total": {0, 600, 600},
			ttftSum:                           {1, 1.5, 0.5},
			ttftCount:                         {2, 12, 10},
		},
		PrefixCacheHitRate: &rate, Exact: true, Scrapes: 9, FailedScrapes: 1,
	})
	if title != "Server metrics" {
		t.Errorf("title %q", title)
	}
	want := [][2]string{
		{"Server prefix cache hit rate (%)", "83.33"},
		{"Server mean TTFT (ms)", "50.00"},
		{"vllm:prefix_cache_queries_total", "600.00"},
		{"vllm:prefix_cache_hits_total", "500.00"},
		{"Scrapes (failed)", "9 (1)"},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("rows = %q\nwant %q", rows, want)
	}
	_, rows = Section(ServerMetrics{Scrapes: 3, FailedScrapes: 3})
	if rows[0][1] != "n/a" || rows[len(rows)-1] != [2]string{"Window", "approximate"} {
		t.Errorf("rows without data = %q", rows)
	}
}

// The jsonl stream a real run writes can be read back line by line.
func TestLinesAreJSONL(t *testing.T) {
	e := newFakeEngine(t)
	var buf strings.Builder
	var mu sync.Mutex
	w := writerFunc(func(b []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(b) })
	tick := make(chan time.Time)
	s := Start(context.Background(), SamplerOptions{URL: e.srv.URL, Out: w, tick: tick})
	s.MarkMeasuredStart()
	s.MarkMeasuredEnd()
	s.Stop()
	mu.Lock()
	defer mu.Unlock()
	sc := bufio.NewScanner(strings.NewReader(buf.String()))
	n := 0
	for sc.Scan() {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		for _, k := range []string{"time", "elapsed_s", "metrics"} {
			if _, ok := raw[k]; !ok {
				t.Errorf("line %d lacks %q: %s", n, k, sc.Text())
			}
		}
		n++
	}
	if n != 3 {
		t.Errorf("%d lines, want 3 (initial, start, end)", n)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
