package metrics

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Defaults of SamplerOptions.
const (
	DefaultInterval = time.Second
	DefaultTimeout  = 800 * time.Millisecond
)

// Marks written into metrics.jsonl beside the periodic samples.
const (
	MarkMeasuredStart = "measured_start"
	MarkMeasuredEnd   = "measured_end"
	MarkFinal         = "final"
)

// SamplerOptions configure a Sampler.
type SamplerOptions struct {
	URL      string        // the Prometheus endpoint
	Interval time.Duration // between periodic samples; 0 means DefaultInterval
	Timeout  time.Duration // per scrape; 0 means DefaultTimeout
	// Out receives metrics.jsonl: one JSON line per scrape. Nil writes
	// nothing. Lines are written whole, one Write each.
	Out io.Writer
	// Logf reports a scrape failing (once, until it recovers) and the
	// recovery. Nil is silent.
	Logf func(format string, args ...any)
	// Log receives every scrape at debug level (--log-file); nil is
	// silent.
	Log *slog.Logger
	// APIKey is sent as a bearer token when not empty. Pass it only when
	// the endpoint is on the engine's own host.
	APIKey string
	// Client does the scrapes; nil means a client of the sampler's own,
	// so scrapes never queue behind the benchmark's connections.
	Client *http.Client

	// tick replaces the interval ticker (tests).
	tick <-chan time.Time
}

// Line is one line of metrics.jsonl.
type Line struct {
	Time     float64            `json:"time"`      // Unix seconds when the scrape ended
	Elapsed  float64            `json:"elapsed_s"` // seconds since the sampler started
	Mark     string             `json:"mark,omitempty"`
	Metrics  map[string]float64 `json:"metrics"`         // known series, canonical names; null when the scrape failed
	Error    string             `json:"error,omitempty"` // why the scrape failed
	Duration float64            `json:"scrape_ms"`       // how long the scrape took
}

// Sampler scrapes an engine's metrics on its own goroutine. Its methods
// are safe for concurrent use.
type Sampler struct {
	o      SamplerOptions
	start  time.Time
	cancel context.CancelFunc
	done   chan struct{}

	writeMu sync.Mutex
	outDead bool

	mu          sync.Mutex
	scrapes     int
	failed      int
	failing     bool
	first, last map[string]float64
	before      map[string]float64
	after       map[string]float64
	exactBefore bool
	exactAfter  bool
	startMarked bool
	endMarked   bool
	stopped     bool
	result      ServerMetrics
}

// Start begins sampling: one scrape at once, then one per interval until
// Stop or ctx ends. It never fails: an endpoint that is down, slow or
// not Prometheus is counted and logged, and the run goes on.
func Start(ctx context.Context, o SamplerOptions) *Sampler {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Client == nil {
		o.Client = &http.Client{Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			MaxIdleConnsPerHost: 2,
			IdleConnTimeout:     30 * time.Second,
		}}
	}
	loop, cancel := context.WithCancel(ctx)
	s := &Sampler{o: o, start: time.Now(), cancel: cancel, done: make(chan struct{})}
	go s.loop(ctx, loop)
	return s
}

// loop takes the first sample on the caller's ctx, so a Stop soon after
// Start waits for it (at most the timeout) instead of cutting it, then
// the periodic ones on loop, which Stop ends.
func (s *Sampler) loop(first, ctx context.Context) {
	defer close(s.done)
	tick := s.o.tick
	if tick == nil {
		t := time.NewTicker(s.o.Interval)
		defer t.Stop()
		tick = t.C
	}
	s.sample(first, "")
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			s.sample(ctx, "")
		}
	}
}

// sample scrapes once (bounded by the timeout), records the result and
// writes its line. It returns the known values, nil on failure.
//
// A scrape that fails because sampling ended under it (Stop cancels the
// loop's context while a periodic scrape is in flight, typically just
// after the measured_end mark) says nothing about the engine: it is
// dropped, neither counted nor written. The marks and the final sample
// run on a context of their own and are never cut this way.
func (s *Sampler) sample(parent context.Context, mark string) map[string]float64 {
	ctx, cancel := context.WithTimeout(parent, s.o.Timeout)
	t0 := time.Now()
	all, err := ScrapeAuth(ctx, s.o.Client, s.o.URL, s.o.APIKey)
	cancel()
	t1 := time.Now()
	if err != nil && parent.Err() != nil {
		if s.o.Log != nil {
			s.o.Log.Debug("metrics scrape cut by the end of sampling (not counted)", "url", Redact(s.o.URL),
				"scrape_ms", float64(t1.Sub(t0).Microseconds())/1000)
		}
		return nil
	}
	line := Line{
		Time:     float64(t1.UnixNano()) / 1e9,
		Elapsed:  t1.Sub(s.start).Seconds(),
		Mark:     mark,
		Duration: float64(t1.Sub(t0).Microseconds()) / 1000,
	}
	var vals map[string]float64
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			err = &timeoutError{url: Redact(s.o.URL), d: s.o.Timeout}
		}
		line.Error = err.Error()
	} else {
		vals = Pick(all)
		line.Metrics = vals
	}

	s.mu.Lock()
	s.scrapes++
	var logMsg string
	if err != nil {
		s.failed++
		if !s.failing {
			logMsg = "metrics: scrape failed (counted, the run goes on): " + err.Error()
		}
		s.failing = true
	} else {
		if s.failing {
			logMsg = "metrics: " + Redact(s.o.URL) + " answers again"
		}
		s.failing = false
		if s.first == nil {
			s.first = vals
		}
		s.last = vals
		// A start mark whose own scrape failed takes the next good one.
		if s.startMarked && s.before == nil {
			s.before = vals
		}
	}
	s.mu.Unlock()

	if logMsg != "" && s.o.Logf != nil {
		s.o.Logf("%s", logMsg)
	}
	if s.o.Log != nil {
		s.o.Log.Debug("metrics scrape", "url", Redact(s.o.URL), "mark", mark, "scrape_ms", line.Duration,
			"series", len(vals), "error", line.Error)
	}
	s.write(line)
	return vals
}

type timeoutError struct {
	url string
	d   time.Duration
}

func (e *timeoutError) Error() string {
	return "GET " + e.url + ": no answer within " + e.d.String()
}

func (s *Sampler) write(l Line) {
	if s.o.Out == nil {
		return
	}
	b, err := json.Marshal(l)
	if err != nil {
		return
	}
	b = append(b, '\n')
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.outDead {
		return
	}
	if _, err := s.o.Out.Write(b); err != nil {
		s.outDead = true
		if s.o.Logf != nil {
			s.o.Logf("metrics: writing metrics.jsonl failed, sampling goes on without it: %v", err)
		}
	}
}

// MarkMeasuredStart takes a sample now, synchronously (at most the scrape
// timeout), as the "before" of server_metrics. Call it just before the
// first measured request is sent. When that scrape fails, the latest
// earlier sample stands in (or the next good one), and server_metrics is
// marked not exact.
func (s *Sampler) MarkMeasuredStart() {
	vals := s.sample(context.Background(), MarkMeasuredStart)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.startMarked = true
	s.exactBefore = vals != nil
	if vals != nil {
		s.before = vals
	} else {
		s.before = s.last // nil when nothing succeeded yet: the next good sample
	}
}

// MarkMeasuredEnd takes a sample now, synchronously (at most the scrape
// timeout), as the "after" of server_metrics. Call it once the last
// measured request has finished. When that scrape fails, the latest
// sample stands in.
func (s *Sampler) MarkMeasuredEnd() {
	vals := s.sample(context.Background(), MarkMeasuredEnd)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endMarked = true
	s.exactAfter = vals != nil
	if vals != nil {
		s.after = vals
	} else {
		s.after = s.last
	}
}

// LiveHitRate is the server's prefix-cache hit rate since the measured
// start, from the latest sample; nil before the start mark, without hit
// counters, or while nothing was queried.
func (s *Sampler) LiveHitRate() *float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.startMarked || s.before == nil || s.last == nil {
		return nil
	}
	rate, _ := hitRate(s.before, s.last)
	return rate
}

// Stop ends sampling and returns server_metrics. Without MarkMeasuredEnd
// (an interrupted run) it takes one last sample, bounded by the timeout.
// Stop can be called more than once; later calls return the same value.
func (s *Sampler) Stop() ServerMetrics {
	s.cancel()
	<-s.done
	s.mu.Lock()
	if s.stopped {
		defer s.mu.Unlock()
		return s.result
	}
	needFinal := !s.endMarked
	s.mu.Unlock()

	if needFinal {
		vals := s.sample(context.Background(), MarkFinal)
		s.mu.Lock()
		s.exactAfter = vals != nil
		s.after = vals
		if vals == nil {
			s.after = s.last
		}
		s.mu.Unlock()
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.stopped {
		before := s.before
		if !s.startMarked {
			before = s.first
		}
		s.result = serverMetrics(before, s.after, s.scrapes, s.failed,
			s.startMarked && s.exactBefore && s.endMarked && s.exactAfter)
		s.stopped = true
	}
	return s.result
}
