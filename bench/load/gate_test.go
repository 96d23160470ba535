package load

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// waitUntil moves the clock forward to t at once.
func (c *fakeClock) waitUntil(ctx context.Context, t time.Time) bool {
	c.mu.Lock()
	if t.After(c.t) {
		c.t = t
	}
	c.mu.Unlock()
	return ctx.Err() == nil
}

func TestNoGateWithoutShaping(t *testing.T) {
	if g := NewGate(Settings{Rate: inf()}, nil); g != nil {
		t.Fatal("rate inf without a cap must keep the workload's schedule (no gate)")
	}
	if g := NewGate(Settings{Rate: 4, SelfTimed: true}, nil); g != nil {
		t.Fatal("a self-timed workload without a cap needs no gate")
	}
}

// TestGateTimesReleases: releases follow the schedule from the first
// call; a request let go late keeps its scheduled time.
func TestGateTimesReleases(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	s := Settings{Rate: 50, Arrival: Poisson, Burstiness: 1, Seed: 5}
	g := NewGate(s, clk.Now)
	g.wait = clk.waitUntil
	want := NewSchedule(s)
	start := clk.Now()
	for i := 0; i < 200; i++ {
		tk, ok := g.Release(context.Background())
		if !ok || tk.Capped {
			t.Fatalf("release %d: ok=%v capped=%v", i, ok, tk.Capped)
		}
		if at := start.Add(want.Next()); !tk.Scheduled.Equal(at) {
			t.Fatalf("release %d scheduled %v, want %v", i, tk.Scheduled, at)
		}
		if clk.Now().Before(tk.Scheduled) {
			t.Fatalf("release %d let go at %v before its time %v", i, clk.Now(), tk.Scheduled)
		}
		g.Done()
	}
}

// TestGateCapNeverExceeded: with many dispatchers racing, no more than
// the cap is ever in flight, and every request is eventually released.
func TestGateCapNeverExceeded(t *testing.T) {
	for _, s := range []Settings{
		{Rate: inf(), MaxConcurrency: 3},                                   // closed loop
		{Rate: inf(), MaxConcurrency: 4, RampUp: 5 * time.Millisecond},     // ramped closed loop
		{Rate: 20000, Arrival: Constant, Burstiness: 1, MaxConcurrency: 2}, // timed and capped
		{Rate: 5, SelfTimed: true, MaxConcurrency: 2},                      // cap only
	} {
		g := NewGate(s, nil)
		var inflight, peak, released atomic.Int64
		var wg sync.WaitGroup
		for d := 0; d < 8; d++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 50; i++ {
					if _, ok := g.Release(context.Background()); !ok {
						t.Error("release failed")
						return
					}
					n := inflight.Add(1)
					for {
						p := peak.Load()
						if n <= p || peak.CompareAndSwap(p, n) {
							break
						}
					}
					released.Add(1)
					for k := 0; k < 3; k++ {
						runtime.Gosched() // let the other dispatchers try the gate
					}
					inflight.Add(-1)
					g.Done()
				}
			}()
		}
		wg.Wait()
		if p := peak.Load(); p > int64(s.MaxConcurrency) {
			t.Fatalf("%+v: %d in flight, cap %d", s, p, s.MaxConcurrency)
		}
		if released.Load() != 400 {
			t.Fatalf("%+v: released %d, want 400", s, released.Load())
		}
	}
}

// TestGateCapHolds: a release over the cap waits for Done and says the
// cap held it.
func TestGateCapHolds(t *testing.T) {
	g := NewGate(Settings{Rate: inf(), MaxConcurrency: 1}, nil)
	first, _ := g.Release(context.Background())
	if first.Capped || first.Scheduled.IsZero() {
		t.Fatalf("first release %+v: a closed loop's release time is when it went", first)
	}
	got := make(chan Ticket)
	go func() { tk, _ := g.Release(context.Background()); got <- tk }()
	for {
		g.mu.Lock()
		w := g.waiting
		g.mu.Unlock()
		if w == 1 {
			break
		}
		select {
		case tk := <-got:
			t.Fatalf("released %+v while the only slot was taken", tk)
		default:
			runtime.Gosched()
		}
	}
	g.Done()
	if tk := <-got; !tk.Capped {
		t.Fatal("a release that waited for a slot must be marked capped")
	}
}

// TestGateReleaseEndsWithContext: a dispatcher waiting for a slot or a
// time returns when its context ends.
func TestGateReleaseEndsWithContext(t *testing.T) {
	g := NewGate(Settings{Rate: inf(), MaxConcurrency: 1}, nil)
	if _, ok := g.Release(context.Background()); !ok {
		t.Fatal("first release")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool)
	go func() { _, ok := g.Release(ctx); done <- ok }()
	cancel()
	if ok := <-done; ok {
		t.Fatal("a release waiting for a slot must fail when its context ends")
	}
	g2 := NewGate(Settings{Rate: 0.001, Arrival: Constant, Burstiness: 1}, nil)
	g2.Release(context.Background()) // request 0 goes at once
	ctx2, cancel2 := context.WithCancel(context.Background())
	go func() { _, ok := g2.Release(ctx2); done <- ok }()
	cancel2()
	if ok := <-done; ok {
		t.Fatal("a release waiting for its time must fail when its context ends")
	}
}
