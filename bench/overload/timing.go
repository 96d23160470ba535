package overload

import (
	"math"
	"runtime/metrics"
	"sync"
	"time"
)

// ProbePeriod is how often the timing probe asks to wake.
const ProbePeriod = time.Millisecond

// ShortSlice is the scheduler slice kvbench asks for its threads
// (AskShortSlice).
const ShortSlice = 100 * time.Microsecond

// maxMissedWakes bounds the wakes one late wake stands for (a stall of
// 100 s at 1 ms).
const maxMissedWakes = 100_000

// Clock is what the timing probe reads and waits on. Tests inject one
// that makes the process late on demand.
type Clock interface {
	Now() time.Time
	// Sleep waits d; it returns false, early, once stop is closed.
	Sleep(d time.Duration, stop <-chan struct{}) bool
}

// SystemClock is the process's own clock and timers. One SystemClock
// serves one probe (it reuses its timer).
type SystemClock struct{ t *time.Timer }

// Now is time.Now.
func (c *SystemClock) Now() time.Time { return time.Now() }

// Sleep waits d on a reused timer, or until stop is closed.
func (c *SystemClock) Sleep(d time.Duration, stop <-chan struct{}) bool {
	if c.t == nil {
		c.t = time.NewTimer(d)
	} else {
		c.t.Reset(d)
	}
	select {
	case <-c.t.C:
		return true
	case <-stop:
		c.t.Stop()
		return false
	}
}

// SchedSource returns the cumulative scheduler latency histogram
// (seconds), a copy the caller may keep; nil when there is none.
type SchedSource func() *metrics.Float64Histogram

// RuntimeSched reads runtime/metrics' /sched/latencies:seconds: how long
// goroutines waited, runnable, before they ran.
func RuntimeSched() SchedSource {
	var mu sync.Mutex
	sample := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	return func() *metrics.Float64Histogram {
		mu.Lock()
		defer mu.Unlock()
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindFloat64Histogram {
			return nil
		}
		h := sample[0].Value.Float64Histogram()
		// Read reuses the histogram's memory: keep a copy.
		return &metrics.Float64Histogram{Counts: append([]uint64(nil), h.Counts...), Buckets: h.Buckets}
	}
}

// Timing measures how late the client's timestamps can be (spec/record.md,
// Client overload): a probe that asks to wake every ProbePeriod and
// records how late it woke, and the scheduler's latency histogram, both
// over the measured phase (from Mark; the whole run without one). It
// also keeps the measured requests' figures the rules compare with: the
// dispatch lags the client caused and the TTFTs. Safe for concurrent use.
type Timing struct {
	clock  Clock
	sched  SchedSource
	period time.Duration

	mu        sync.Mutex
	late      Histogram // the probe's lateness since the mark
	lags      Histogram // dispatch lags the client caused
	ttft      Histogram
	schedBase *metrics.Float64Histogram
	marked    bool
}

// NewTiming returns a probe that has not started (Run starts it); sched
// may be nil (no scheduler figures).
func NewTiming(clock Clock, sched SchedSource) *Timing {
	t := &Timing{clock: clock, sched: sched, period: ProbePeriod}
	if sched != nil {
		t.schedBase = sched()
	}
	return t
}

// Run is the probe: until stop is closed it sleeps one period at a time
// and adds how late it woke to the histogram. On a clock that sleeps
// (an outside event: the engine is another process) a wake more than a
// period late also adds the lateness of each wake it held back (late -
// period, late - 2 periods, ...): the engine's bytes keep coming while
// the client is stalled, so a stall of 50 ms delays every read that
// falls in it, not one, and counting it once would put a client stalled
// 5% of the time under a p99 of 1 ms. On a Waker (the engine is in the
// process) each wake counts once: a stalled process writes nothing, so
// only the write it holds back is late.
func (t *Timing) Run(stop <-chan struct{}) {
	w, inProcess := t.clock.(Waker)
	for {
		var late time.Duration
		if inProcess {
			l, ok := w.Wake(t.period, stop)
			if !ok {
				return
			}
			late = l
		} else {
			want := t.clock.Now().Add(t.period)
			if !t.clock.Sleep(t.period, stop) {
				return
			}
			late = t.clock.Now().Sub(want)
		}
		t.mu.Lock()
		t.late.Add(float64(late) / float64(time.Millisecond))
		for k := 1; !inProcess && k <= maxMissedWakes && t.period > 0 && late > time.Duration(k)*t.period; k++ {
			t.late.Add(float64(late-time.Duration(k)*t.period) / float64(time.Millisecond))
		}
		t.mu.Unlock()
	}
}

// Mark starts the measured phase: the lateness and the scheduler's
// latencies count from here. Only the first call counts.
func (t *Timing) Mark() {
	var base *metrics.Float64Histogram
	if t.sched != nil {
		base = t.sched()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.marked {
		return
	}
	t.marked = true
	t.late = Histogram{}
	t.schedBase = base
}

// NoteLag adds the dispatch lag of a measured request nothing but the
// client held back.
func (t *Timing) NoteLag(ms float64) {
	t.mu.Lock()
	t.lags.Add(ms)
	t.mu.Unlock()
}

// NoteTTFT adds the TTFT of a successful measured request.
func (t *Timing) NoteTTFT(ms float64) {
	t.mu.Lock()
	t.ttft.Add(ms)
	t.mu.Unlock()
}

// TimingFigures are Timing's figures so far, in ms; nil where nothing
// was measured.
type TimingFigures struct {
	// ErrorP99Ms and ErrorMaxMs bound how late a timestamp could be: the
	// larger of the probe's figure and the scheduler's.
	ErrorP99Ms, ErrorMaxMs *float64
	ProbeP99Ms, ProbeMaxMs *float64
	ProbeSamples           uint64
	SchedP99Ms, SchedMaxMs *float64
	// DispatchLagP99Ms is over the dispatch lags the client caused.
	DispatchLagP99Ms *float64
	// TTFTP50Ms is the measured requests' TTFT p50 so far (to one
	// bucket), for the live verdict; the final one uses the results'.
	TTFTP50Ms *float64
}

// Figures reads the figures so far.
func (t *Timing) Figures() TimingFigures {
	var cur *metrics.Float64Histogram
	if t.sched != nil {
		cur = t.sched()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var f TimingFigures
	if v, ok := t.late.Quantile(99); ok {
		f.ProbeP99Ms = &v
		m, _ := t.late.Max()
		f.ProbeMaxMs = &m
	}
	f.ProbeSamples = t.late.Count()
	if p99, mx, ok := schedFigures(t.schedBase, cur); ok {
		f.SchedP99Ms, f.SchedMaxMs = &p99, &mx
	}
	f.ErrorP99Ms = larger(f.ProbeP99Ms, f.SchedP99Ms)
	f.ErrorMaxMs = larger(f.ProbeMaxMs, f.SchedMaxMs)
	if v, ok := t.lags.Quantile(99); ok {
		f.DispatchLagP99Ms = &v
	}
	if v, ok := t.ttft.Quantile(50); ok {
		f.TTFTP50Ms = &v
	}
	return f
}

func larger(a, b *float64) *float64 {
	switch {
	case a == nil:
		return b
	case b == nil || *a >= *b:
		return a
	}
	return b
}

// schedFigures are the p99 and the maximum (ms) of the latencies added
// between two cumulative histograms: the upper bound of the bucket that
// holds them (the lower bound for the last, unbounded bucket). False
// when either is missing or nothing was added.
func schedFigures(a, b *metrics.Float64Histogram) (p99, maxMs float64, ok bool) {
	if a == nil || b == nil || len(a.Counts) != len(b.Counts) || len(b.Buckets) != len(b.Counts)+1 {
		return 0, 0, false
	}
	var total uint64
	top := -1
	for i := range b.Counts {
		if d := b.Counts[i] - a.Counts[i]; d > 0 {
			total += d
			top = i
		}
	}
	if total == 0 {
		return 0, 0, false
	}
	bound := func(i int) float64 {
		hi := b.Buckets[i+1]
		if math.IsInf(hi, 1) {
			hi = b.Buckets[i]
		}
		return max(hi, 0) * 1000
	}
	rank := uint64(math.Ceil(0.99 * float64(total)))
	var seen uint64
	for i := range b.Counts {
		seen += b.Counts[i] - a.Counts[i]
		if seen >= rank {
			return bound(i), bound(top), true
		}
	}
	return bound(top), bound(top), true
}
