package bench

import (
	"math"
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
// base gives the part of it that is not kept figures, at least
// headroom; never above base nor below gcMinPercent (or base, if lower).
func gcPercentFor(live, kept uint64, base int, headroom uint64) int {
	if base < 0 || live <= headroom {
		return base // GOGC=off, or a heap too small to matter
	}
	rest := live - min(kept, live)
	extra := max(headroom, rest*uint64(base)/100)
	p := int(min(extra*100/live, uint64(base)))
	return max(p, min(gcMinPercent, base))
}

// gcBounder holds the headroom of one process's runs; runs overlap only
// in tests, and the first to start restores the setting when the last
// ends.
var gcBounder struct {
	mu     sync.Mutex        // starts and ends
	keptMu sync.Mutex        // runs, read by the adjuster
	runs   map[*int]boundRun // each run's, by a key of its own
	base   int
	limit  int64 // the memory limit before the first run
	stop   chan struct{}
	ended  chan struct{}
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
		b.base, b.limit = gogc(), debug.SetMemoryLimit(-1)
		b.stop, b.ended = make(chan struct{}), make(chan struct{})
		go adjustGC(b.base, b.limit, b.stop, b.ended)
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
				debug.SetGCPercent(b.base)
				debug.SetMemoryLimit(b.limit)
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

// adjustGC sets GOGC (and the memory limit, if asked for: never above
// baseLimit) from the live heap every gcEvery until stop.
func adjustGC(base int, baseLimit int64, stop <-chan struct{}, ended chan<- struct{}) {
	defer close(ended)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	t := time.NewTicker(gcEvery)
	defer t.Stop()
	set, limit := base, baseLimit
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		live := sample[0].Value.Uint64()
		kept, bound := keptBytes()
		if p := gcPercentFor(live, kept, base, bound.headroom); p != set {
			debug.SetGCPercent(p)
			set = p
		}
		lim := baseLimit
		if bound.limit && base >= 0 {
			lim = min(baseLimit, int64(min(live+2*bound.headroom, math.MaxInt64/2)))
		}
		if lim != limit {
			debug.SetMemoryLimit(lim)
			limit = lim
		}
	}
}
