package load

import (
	"context"
	"math"
	"sync"
	"time"
)

// Gate releases a workload's measured requests: at the times of the
// arrival process (unless the workload times itself) and under the
// concurrency cap. Release is called by one dispatcher at a time per
// workload loop, in the workload's order; Done is called once for every
// successful Release when the request has finished.
type Gate struct {
	now   func() time.Time
	sched *Schedule // nil: no timing
	cap   int       // 0: no cap
	ramp  time.Duration
	// closed is a closed loop (a cap, no schedule, a workload without
	// its own timing): the release time is the moment a slot was free,
	// and a ramp-up grows the cap rather than the rate.
	closed bool

	// wait sleeps until t or until ctx ends; it reports whether t came.
	wait func(ctx context.Context, t time.Time) bool

	mu       sync.Mutex
	start    time.Time
	inflight int
	waiting  int           // releases waiting for a slot
	wake     chan struct{} // closed and replaced when a slot frees
}

// Ticket is one release.
type Ticket struct {
	// Scheduled is the release time: the arrival process's time for a
	// timed run, else the moment the request was let go. Zero for a
	// self-timed workload, which keeps its own.
	Scheduled time.Time
	// Capped reports that the concurrency cap held the request back.
	Capped bool
}

// NewGate returns the gate for s, or nil when s neither times releases
// nor caps concurrency (the workload's own schedule is kept as is).
func NewGate(s Settings, now func() time.Time) *Gate {
	timed := s.Timed() && !s.SelfTimed
	if !timed && s.MaxConcurrency <= 0 {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	g := &Gate{now: now, cap: s.MaxConcurrency, ramp: s.RampUp, wake: make(chan struct{}), wait: sleepUntil}
	if timed {
		g.sched = NewSchedule(s)
	} else {
		g.closed = !s.SelfTimed
	}
	return g
}

// sleepUntil waits for t on the wall clock, or for ctx.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Release blocks until the next request may go. ok is false when ctx
// ended first; nothing is then held and Done must not be called.
func (g *Gate) Release(ctx context.Context) (t Ticket, ok bool) {
	g.mu.Lock()
	if g.start.IsZero() {
		g.start = g.now()
	}
	start := g.start
	if g.sched != nil {
		// Concurrent callers (a workload sending from several goroutines
		// without releasing first) take the schedule's times in turn.
		t.Scheduled = start.Add(g.sched.Next())
	}
	g.mu.Unlock()
	if g.sched != nil {
		if !g.wait(ctx, t.Scheduled) {
			return Ticket{}, false
		}
	}
	for {
		g.mu.Lock()
		now := g.now()
		limit := g.capAt(now.Sub(start))
		if limit <= 0 || g.inflight < limit {
			g.inflight++
			g.mu.Unlock()
			if g.closed {
				t.Scheduled = now
			}
			return t, true
		}
		t.Capped = true
		wake := g.wake
		g.waiting++
		g.mu.Unlock()
		var step <-chan time.Time
		var tm *time.Timer
		if g.closed && now.Sub(start) < g.ramp {
			// The cap grows with time: look again when it next may.
			tm = time.NewTimer(g.ramp / time.Duration(max(g.cap, 1)))
			step = tm.C
		}
		select {
		case <-wake:
		case <-step:
		case <-ctx.Done():
		}
		if tm != nil {
			tm.Stop()
		}
		g.mu.Lock()
		g.waiting--
		g.mu.Unlock()
		if ctx.Err() != nil {
			return Ticket{}, false
		}
	}
}

// capAt is the cap elapsed after the start (0: none).
func (g *Gate) capAt(elapsed time.Duration) int {
	if g.cap <= 0 {
		return 0
	}
	if !g.closed || elapsed >= g.ramp {
		return g.cap
	}
	return max(1, int(math.Ceil(float64(g.cap)*elapsed.Seconds()/g.ramp.Seconds())))
}

// Done frees the slot of a finished request.
func (g *Gate) Done() {
	g.mu.Lock()
	g.inflight--
	close(g.wake)
	g.wake = make(chan struct{})
	g.mu.Unlock()
}
