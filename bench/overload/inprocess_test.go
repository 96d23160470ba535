package overload

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestInProcessClockTimesTheWriteToTheRead: with the built-in engine a
// timestamp is late by the time from the engine's write to the client's
// read, so a timer that fires late (the engine's own lateness, which
// delays its write too) is not counted: with a timer 50 ms late the
// lateness is at most the wake's time less those 50 ms, where timing
// from when the wake was due would give at least 50 ms.
func TestInProcessClockTimesTheWriteToTheRead(t *testing.T) {
	const timerLate = 50 * time.Millisecond
	c := InProcessClock().(*pipeClock)
	c.after = func(d time.Duration, f func()) *time.Timer { return time.AfterFunc(d+timerLate, f) }
	stop := make(chan struct{})
	for range 3 {
		t0 := time.Now()
		late, ok := c.Wake(time.Millisecond, stop)
		elapsed := time.Since(t0)
		if !ok || c.r == nil {
			t.Fatalf("Wake: ok %v, pipe %v", ok, c.r != nil)
		}
		if elapsed < time.Millisecond+timerLate || late > elapsed-time.Millisecond-timerLate {
			t.Fatalf("late %v in a wake of %v: the timer's own %v counted", late, elapsed, timerLate)
		}
	}
	close(stop)
	if _, ok := c.Wake(time.Millisecond, stop); ok {
		t.Fatal("Wake must return false once stop is closed")
	}
}

// TestInProcessProbeIsJudged: the probe on the in-process clock feeds the
// figures the rules judge, like any other (a Timing over a few wakes).
func TestInProcessProbeIsJudged(t *testing.T) {
	stop := make(chan struct{})
	c := InProcessClock().(*pipeClock)
	n := 0
	c.after = func(d time.Duration, f func()) *time.Timer {
		n++
		if n > 20 {
			close(stop)
		}
		return time.AfterFunc(d, f)
	}
	tm := NewTiming(c, nil)
	tm.Run(stop)
	if f := tm.Figures(); f.ProbeSamples < 20 || f.ErrorP99Ms == nil {
		t.Fatalf("figures after 20 wakes: %+v", f)
	}
}

// TestInProcessProbeSeesABusyClient: a client whose goroutines keep its
// one P busy reads the engine's writes late (a ready reader waits for
// the busy goroutines' time slices), and the in-process probe says so:
// the run is judged overloaded. Counting each write once does not make
// the rule blind to a client that is really late.
func TestInProcessProbeSeesABusyClient(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	stop := make(chan struct{})
	var spin sync.WaitGroup
	for range 2 {
		spin.Add(1)
		go func() {
			defer spin.Done()
			for x := 0; !closed(stop); x++ {
				if x%(1<<30) == 0 {
					x = 0
				}
			}
		}()
	}
	c := InProcessClock().(*pipeClock)
	n := 0
	c.after = func(d time.Duration, f func()) *time.Timer {
		if n++; n > 30 {
			close(stop)
		}
		return time.AfterFunc(d, f)
	}
	tm := NewTiming(c, nil)
	tm.Run(stop)
	spin.Wait()
	f := tm.Figures()
	r := Judge(New(1).Figures(f, f64(8), 10))
	t.Logf("probe p99 %v ms over %d wakes", *f.ProbeP99Ms, f.ProbeSamples)
	if !r.Overloaded || r.Rules[0] != "timing" {
		t.Fatalf("a client with its P kept busy: probe p99 %v ms over %d wakes, judged %+v", *f.ProbeP99Ms, f.ProbeSamples, r)
	}
}

// BenchmarkInProcessProbe is the built-in engine's probe's own cost: one
// op is one 1 ms wake (a timer, a loopback write, a read).
// go test ./bench/overload -run '^$' -bench InProcessProbe -benchtime 5000x
func BenchmarkInProcessProbe(b *testing.B) {
	stop := make(chan struct{})
	c := InProcessClock().(*pipeClock)
	n := 0
	c.after = func(d time.Duration, f func()) *time.Timer {
		if n++; n > b.N {
			close(stop)
		}
		return time.AfterFunc(d, f)
	}
	tm := NewTiming(c, RuntimeSched())
	reportProbeCost(b, func() { tm.Run(stop) })
}
