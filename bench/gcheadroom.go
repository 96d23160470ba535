package bench

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// A run keeps a few pointer-free figures of every measured request for
// its exact summary (about 100 bytes each: a million requests hold
// ~100 MB). With the default GOGC the heap may grow to twice what is
// live before a collection, so those figures would cost twice their
// size in memory. While a run is going, the headroom the collector
// leaves is instead what GOGC gives the rest of the live heap (the
// connections, streams and requests in flight: it scales with them as
// before), and at least gcHeadroom: the kept figures get none of their
// own. They hold no pointers, so the collections this adds mark nothing
// more; a run whose live heap is mostly requests in flight (an engine
// that falls behind an open-loop rate) keeps the default.
//
// The headroom is at least gcHeadroom from the run's start, small heap or
// large: with Go's default a run's heap of a few MB is collected every
// few MB it grows, and 1000 streams opened at once grow it from 3 to 26 MB
// in their first 200 ms, three collections whose marking (on one core,
// a quarter of it and the assists) made the first tokens read 6-15 ms
// late at the median (docs/client-performance.md "Streams at once"). The
// cost is at most gcHeadroom more garbage held. A GOGC the user set
// (the environment's) is never raised.
//
// A merge reads a record back: no request waits on a collection, so it
// leaves less headroom (mergeBound), collecting more often for a smaller
// peak, and sets a soft memory limit a little above the live heap, so
// the pages each collection frees go back to the system at once rather
// than when the background scavenger gets to them (the user's own
// GOMEMLIMIT, if lower, holds). With runs and merges going at once
// (tests), the smallest headroom asked for holds, and the limit if any
// asks for it.
const (
	gcHeadroom   = 64 << 20
	gcMinPercent = 10 // the most often a collection runs: every 10% of the live heap
	gcEvery      = 250 * time.Millisecond
)

// gcBound is what a run asks of the collector: at least headroom bytes
// beyond the live heap, and with limit a soft memory limit of twice that
// beyond it.
type gcBound struct {
	headroom uint64
	limit    bool
}

var (
	runBound   = gcBound{headroom: gcHeadroom}
	mergeBound = gcBound{headroom: 8 << 20, limit: true}
)

// gcPercentFor is the GOGC that lets the heap grow beyond live by what
// base gives the part of it that is not kept figures, and at least
// headroom; never below gcMinPercent (or base, if lower), and above base
// only with floor (a heap so small that headroom is more than base
// gives it; without floor, a user's GOGC is never raised).
func gcPercentFor(live, kept uint64, base int, headroom uint64, floor bool) int {
	if base < 0 {
		return base // GOGC=off
	}
	// Below 4 MB the runtime's own minimum heap (4 MB, scaled by GOGC as
	// the goal is) decides: a heap just started, or smaller, counts as
	// 4 MB, so the first goal is 4 MB + headroom, not 64 times it.
	live = max(live, 4<<20)
	rest := live - min(kept, live)
	extra := max(headroom, rest*uint64(base)/100)
	p := int(extra * 100 / live)
	if !floor {
		p = min(p, base)
	}
	return max(p, min(gcMinPercent, base))
}

// gcBounder holds the headroom of one process's runs; runs overlap only
// in tests, and the first to start restores the setting when the last
// ends.
var gcBounder struct {
	mu       sync.Mutex        // starts and ends
	keptMu   sync.Mutex        // runs, read by the adjuster
	runs     map[*int]boundRun // each run's, by a key of its own
	adjuster *gcAdjuster       // holds GOGC and the memory limit before the first run
	stop     chan struct{}
	ended    chan struct{}
}

// boundRun is one run's or merge's part in the bound: its kept figures'
// bytes and what it asks for.
type boundRun struct {
	kept  func() uint64
	bound gcBound
}

// boundGCHeadroom starts bounding the collector's headroom as bound asks
// for a run whose kept figures take kept() bytes, and returns the
// function that ends it (restoring GOGC and the memory limit when no
// other run is going).
func boundGCHeadroom(kept func() uint64, bound gcBound) func() {
	b := &gcBounder
	b.mu.Lock()
	defer b.mu.Unlock()
	key := new(int)
	b.keptMu.Lock()
	if b.runs == nil {
		b.runs = map[*int]boundRun{}
	}
	b.runs[key] = boundRun{kept: kept, bound: bound}
	first := len(b.runs) == 1
	b.keptMu.Unlock()
	if first {
		base, limit := gogc(), debug.SetMemoryLimit(-1)
		b.stop, b.ended = make(chan struct{}), make(chan struct{})
		a := &gcAdjuster{base: base, baseLimit: limit, floor: os.Getenv("GOGC") == "", set: base, limit: limit}
		a.step() // before the run's first request, not a tick later
		a.armAfterGC()
		b.adjuster = a
		go a.run(b.stop, b.ended)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.keptMu.Lock()
			delete(b.runs, key)
			last := len(b.runs) == 0
			b.keptMu.Unlock()
			if last {
				close(b.stop)
				<-b.ended
				a := b.adjuster
				a.stop()
				debug.SetGCPercent(a.base)
				debug.SetMemoryLimit(a.baseLimit)
			}
		})
	}
}

// keptBytes is what the runs going keep, together, and the bound they
// ask for together: the smallest headroom, a limit if any asks for one.
func keptBytes() (kept uint64, bound gcBound) {
	b := &gcBounder
	b.keptMu.Lock()
	defer b.keptMu.Unlock()
	bound.headroom = gcHeadroom
	for _, r := range b.runs {
		kept += r.kept()
		bound.headroom = min(bound.headroom, r.bound.headroom)
		bound.limit = bound.limit || r.bound.limit
	}
	return kept, bound
}

// gogc is the GOGC setting in effect (-1: off), read without changing
// it; 100 (the default) when the runtime does not say.
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 100
	}
	v := s[0].Value.Uint64()
	if v > 1<<20 { // off reads as a huge percentage
		return -1
	}
	return int(v)
}

// gcAdjuster sets GOGC (and the memory limit, if asked for: never above
// baseLimit) from the live heap after every collection and once a
// gcEvery. After every collection, because GOGC is a percentage of the
// live heap: one set for a 1 MB heap (64 MB of headroom: 6400%) would
// let a heap that has grown to 4 MB by its next collection reach 260 MB.
type gcAdjuster struct {
	base      int
	baseLimit int64
	floor     bool // GOGC may go above base (the user set none)

	mu      sync.Mutex // step runs on the ticker's goroutine and the finalizers'
	stopped bool
	set     int
	limit   int64
	sample  [1]metrics.Sample
}

// gcSentinel is garbage whose finalizer runs after the collection that
// found it: the adjuster's hook on every collection.
type gcSentinel struct{ a *gcAdjuster }

// armAfterGC has the next collection run step, and arm itself again.
func (a *gcAdjuster) armAfterGC() {
	runtime.SetFinalizer(&gcSentinel{a: a}, func(s *gcSentinel) {
		if s.a.step() {
			s.a.armAfterGC()
		}
	})
}

// stop ends the adjusting: a step after it does nothing.
func (a *gcAdjuster) stop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stopped = true
}

func (a *gcAdjuster) run(stop <-chan struct{}, ended chan<- struct{}) {
	defer close(ended)
	t := time.NewTicker(gcEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		a.step()
	}
}

// step sets GOGC and the limit from the live heap now; false once the
// adjuster has stopped.
func (a *gcAdjuster) step() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped {
		return false
	}
	a.sample[0].Name = "/gc/heap/live:bytes"
	metrics.Read(a.sample[:])
	if a.sample[0].Value.Kind() != metrics.KindUint64 {
		return true
	}
	live := a.sample[0].Value.Uint64()
	kept, bound := keptBytes()
	if p := gcPercentFor(live, kept, a.base, bound.headroom, a.floor); p != a.set {
		debug.SetGCPercent(p)
		a.set = p
	}
	lim := a.baseLimit
	if bound.limit && a.base >= 0 {
		lim = min(a.baseLimit, int64(min(live+2*bound.headroom, math.MaxInt64/2)))
	}
	if lim != a.limit {
		debug.SetMemoryLimit(lim)
		a.limit = lim
	}
	return true
}
