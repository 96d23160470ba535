package overload

import (
	"math"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/stats"
)

// lateClock is a clock on which every wake is as late as the next value
// of late says; Sleep returns false once late runs out, which ends the
// probe: the test runs it to the end on its own goroutine.
type lateClock struct {
	now  time.Time
	late []time.Duration
}

func (c *lateClock) Now() time.Time { return c.now }

func (c *lateClock) Sleep(d time.Duration, _ <-chan struct{}) bool {
	if len(c.late) == 0 {
		return false
	}
	c.now = c.now.Add(d + c.late[0])
	c.late = c.late[1:]
	return true
}

// wakes is n wakes late by d each.
func wakes(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// TestProbeReportsLateness: a process made late (2% of its wakes 8 ms
// late) shows it in the timing error, which the rules then judge. Each
// wake 8 ms late stands for the 7 wakes it missed too (7, 6, ... 1 ms
// late), as a socket read at any moment of those 8 ms would have been.
func TestProbeReportsLateness(t *testing.T) {
	clk := &lateClock{now: time.Unix(100, 0), late: append(wakes(980, 30*time.Microsecond), wakes(20, 8*time.Millisecond)...)}
	tm := NewTiming(clk, nil)
	tm.Run(nil)
	f := tm.Figures()
	if f.ProbeSamples != 980+20*8 || f.ProbeP99Ms == nil || *f.ProbeP99Ms != 8 || *f.ProbeMaxMs != 8 {
		t.Fatalf("probe: %d samples, p99 %v max %v", f.ProbeSamples, f.ProbeP99Ms, f.ProbeMaxMs)
	}
	if f.ErrorP99Ms == nil || *f.ErrorP99Ms != 8 || f.SchedP99Ms != nil {
		t.Fatalf("timing error p99 %v (sched %v), want the probe's 8 ms", f.ErrorP99Ms, f.SchedP99Ms)
	}
	r := Judge(New(1).Figures(f, f64(8), 10))
	if !r.Overloaded || !strings.Contains(r.Reasons[0], "timing error p99 8.00 ms > 2.00 ms") ||
		!strings.Contains(r.Warning(), "inflated by up to 8.00 ms") {
		t.Fatalf("verdict %+v", r)
	}

	// On time: 1% of the wakes late by less than a period is the p99's
	// edge, and stays under it.
	clk = &lateClock{now: time.Unix(100, 0), late: append(wakes(990, 30*time.Microsecond), wakes(10, 900*time.Microsecond)...)}
	tm = NewTiming(clk, nil)
	tm.Run(nil)
	f = tm.Figures()
	if p := *f.ErrorP99Ms; f.ProbeSamples != 1000 || p < 0.03 || p > 0.03*math.Exp2(1.0/histPerOctave) || *f.ProbeMaxMs != 0.9 {
		t.Fatalf("on time: %d samples, p99 %v max %v", f.ProbeSamples, p, *f.ProbeMaxMs)
	}
	if r := Judge(New(1).Figures(f, f64(8), 10)); r.Overloaded {
		t.Fatalf("on time judged overloaded: %q", r.Reasons)
	}
}

// TestProbeCountsAStallWhole: one wake 50 ms late in a second of wakes
// on time is a process stalled 5% of the time, so the p99 of a
// timestamp's lateness is tens of ms, not the 30 µs of 99.9% of the
// wakes; the run is judged overloaded.
func TestProbeCountsAStallWhole(t *testing.T) {
	clk := &lateClock{now: time.Unix(100, 0), late: append(wakes(950, 30*time.Microsecond), 50*time.Millisecond)}
	tm := NewTiming(clk, nil)
	tm.Run(nil)
	f := tm.Figures()
	if f.ProbeSamples != 1000 || *f.ProbeMaxMs != 50 {
		t.Fatalf("stall: %d samples, max %v", f.ProbeSamples, *f.ProbeMaxMs)
	}
	// Above the p99 are the 10 latest of 1000 (50 ms down to 41 ms).
	if p := *f.ProbeP99Ms; p < 40 || p > 40*math.Exp2(1.0/histPerOctave) {
		t.Fatalf("stall: p99 %v, want 40 ms", p)
	}
	if r := Judge(New(1).Figures(f, f64(100), 10)); !r.Overloaded || r.Rules[0] != "timing" {
		t.Fatalf("a client stalled 5%% of the time judged %+v", r)
	}
}

// TestMarkStartsTheMeasuredPhase: lateness before the mark is left out.
func TestMarkStartsTheMeasuredPhase(t *testing.T) {
	clk := &lateClock{now: time.Unix(100, 0), late: wakes(100, 50*time.Millisecond)}
	tm := NewTiming(clk, nil)
	tm.Run(nil)
	tm.Mark()
	if f := tm.Figures(); f.ProbeP99Ms != nil || f.ProbeSamples != 0 {
		t.Fatalf("after the mark, before a wake: %+v", f)
	}
	clk.late = wakes(500, 100*time.Microsecond)
	tm.Run(nil)
	tm.Mark() // a second mark changes nothing
	clk.late = wakes(500, 100*time.Microsecond)
	tm.Run(nil)
	if f := tm.Figures(); f.ProbeSamples != 1000 || *f.ProbeMaxMs != 0.1 {
		t.Fatalf("measured phase: %d samples, max %v", f.ProbeSamples, *f.ProbeMaxMs)
	}
}

// schedHist is a scheduler histogram with buckets of 1 ms up to 100 ms,
// then an open one; counts maps a bucket (ms) to its count.
func schedHist(counts map[int]uint64) *metrics.Float64Histogram {
	h := &metrics.Float64Histogram{Counts: make([]uint64, 101), Buckets: make([]float64, 102)}
	for i := range h.Buckets {
		h.Buckets[i] = float64(i) / 1000
	}
	h.Buckets[101] = math.Inf(1)
	for ms, n := range counts {
		h.Counts[ms] = n
	}
	return h
}

// TestSchedulerLatencyBoundsTheTimingError: goroutines that waited in
// the run queue make the timing error even when the probe woke on time;
// the scheduler's figures cover the measured phase only.
func TestSchedulerLatencyBoundsTheTimingError(t *testing.T) {
	warm := map[int]uint64{0: 500, 90: 400} // the warmup waited; it must not count
	measured := map[int]uint64{0: 500 + 970, 90: 400, 6: 30}
	readings := []*metrics.Float64Histogram{schedHist(nil), schedHist(warm), schedHist(measured)}
	next := 0
	src := func() *metrics.Float64Histogram {
		h := readings[min(next, len(readings)-1)]
		next++
		return h
	}
	clk := &lateClock{now: time.Unix(100, 0), late: wakes(1000, 50*time.Microsecond)}
	tm := NewTiming(clk, src) // reads readings[0]
	tm.Mark()                 // readings[1]
	tm.Run(nil)
	f := tm.Figures() // readings[2]: 970 at 0-1 ms, 30 at 6-7 ms
	if f.SchedP99Ms == nil || *f.SchedP99Ms != 7 || *f.SchedMaxMs != 7 {
		t.Fatalf("sched p99 %v max %v, want the 6-7 ms bucket's bound", f.SchedP99Ms, f.SchedMaxMs)
	}
	if *f.ErrorP99Ms != 7 || *f.ErrorMaxMs != 7 {
		t.Fatalf("timing error p99 %v max %v, want the scheduler's 7 ms over the probe's 0.05", *f.ErrorP99Ms, *f.ErrorMaxMs)
	}
	// The open last bucket counts by its lower bound.
	if p, m, ok := schedFigures(schedHist(nil), schedHist(map[int]uint64{100: 3})); !ok || p != 100 || m != 100 {
		t.Fatalf("open bucket: %v %v %v", p, m, ok)
	}
	if _, _, ok := schedFigures(schedHist(nil), schedHist(nil)); ok {
		t.Fatal("no latency added: no figure")
	}
}

// TestOneLateRequestIsNoVerdict: the dispatch-lag rule is the p99 of
// the client's lags, so one request 500 ms late among 200 is no reason,
// while 3% of them late is.
func TestOneLateRequestIsNoVerdict(t *testing.T) {
	tm := NewTiming(&lateClock{}, nil)
	for range 199 {
		tm.NoteLag(1)
	}
	tm.NoteLag(500)
	tm.NoteTTFT(40)
	f := tm.Figures()
	if p := *f.DispatchLagP99Ms; p < 1 || p > 1.05 {
		t.Fatalf("lag p99 %v", p)
	}
	if p := *f.TTFTP50Ms; p < 40 || p > 42 {
		t.Fatalf("ttft p50 %v", p)
	}
	if r := Judge(New(1).Figures(f, f.TTFTP50Ms, 10)); r.Overloaded {
		t.Fatalf("one late request judged the run: %q", r.Reasons)
	}
	for range 6 {
		tm.NoteLag(30)
	}
	r := Judge(New(1).Figures(tm.Figures(), nil, 10))
	if !r.Overloaded || !strings.Contains(r.Reasons[0], "p99 dispatch lag 30.0 ms > 10.0 ms") {
		t.Fatalf("3%% late: %q", r.Reasons)
	}
}

func TestSystemClockStops(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	c := &SystemClock{}
	if c.Sleep(time.Hour, stop) {
		t.Fatal("Sleep must return false once stop is closed")
	}
	if c.Sleep(time.Nanosecond, nil) != true {
		t.Fatal("a timer that fires returns true")
	}
}

// countedClock is a clock for n wakes.
type countedClock struct {
	Clock
	n int
}

func (c *countedClock) Sleep(d time.Duration, stop <-chan struct{}) bool {
	if c.n == 0 {
		return false
	}
	c.n--
	return c.Clock.Sleep(d, stop)
}

// BenchmarkTimingProbe is the probe's own cost: one op is one 1 ms wake
// on the clock a run against an outside engine uses (WakeClock); it
// reports the process CPU per wake and as a share of one core.
// go test ./bench/overload -run '^$' -bench TimingProbe -benchtime 5000x
func BenchmarkTimingProbe(b *testing.B) {
	tm := NewTiming(&countedClock{Clock: WakeClock(), n: b.N}, RuntimeSched())
	reportProbeCost(b, func() { tm.Run(nil) })
	f := tm.Figures()
	b.ReportMetric(*f.ProbeP99Ms, "late-p99-ms")
}

// reportProbeCost runs a probe of b.N wakes and reports the process CPU
// per wake and as a share of one core.
func reportProbeCost(b *testing.B, run func()) {
	cpu0, t0 := stats.ProcessCPU(), time.Now()
	b.ResetTimer()
	run()
	b.StopTimer()
	cpu, wall := stats.ProcessCPU()-cpu0, time.Since(t0)
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/wake")
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "%core")
}
