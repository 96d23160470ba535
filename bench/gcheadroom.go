package bench

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// A run keeps a few pointer-free figures of every measured request for
// its exact summary (about 100 bytes each: a million requests hold
// ~100 MB). With the default GOGC the heap may grow to twice what is
// live before a collection, so those figures would cost twice their
// size in memory. While a run is going, the garbage collector's headroom
// is bounded instead: GOGC is lowered so that the heap grows at most
// gcHeadroom beyond the live heap once the live heap is larger than
// that. The retained figures hold no pointers, so the extra collections
// mark little (the connections, streams and requests in flight); below
// gcHeadroom of live heap nothing changes.
const (
	gcHeadroom   = 64 << 20
	gcMinPercent = 10 // the most often a collection runs: every 10% of the live heap
	gcEvery      = time.Second
)

// gcPercentFor is the GOGC that bounds the heap's growth to headroom
// beyond live, never above base (the setting before the run) nor below
// gcMinPercent.
func gcPercentFor(live uint64, base int, headroom uint64) int {
	if base < 0 || live <= headroom {
		return base // GOGC=off, or a heap too small to matter
	}
	p := int(headroom * 100 / live)
	return max(min(p, base), min(gcMinPercent, base))
}

// gcBounder holds the headroom of one process's runs; runs overlap only
// in tests, and the first to start restores the setting when the last
// ends.
var gcBounder struct {
	mu    sync.Mutex
	runs  int
	base  int
	stop  chan struct{}
	ended chan struct{}
}

// boundGCHeadroom starts bounding the collector's headroom for a run and
// returns the function that ends it (restoring GOGC when no other run is
// going).
func boundGCHeadroom() func() {
	b := &gcBounder
	b.mu.Lock()
	defer b.mu.Unlock()
	b.runs++
	if b.runs == 1 {
		b.base = gogc()
		b.stop, b.ended = make(chan struct{}), make(chan struct{})
		go adjustGC(b.base, b.stop, b.ended)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.runs--
			if b.runs == 0 {
				close(b.stop)
				<-b.ended
				debug.SetGCPercent(b.base)
			}
		})
	}
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

// adjustGC sets GOGC from the live heap every gcEvery until stop.
func adjustGC(base int, stop <-chan struct{}, ended chan<- struct{}) {
	defer close(ended)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	t := time.NewTicker(gcEvery)
	defer t.Stop()
	set := base
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
		if p := gcPercentFor(sample[0].Value.Uint64(), base, gcHeadroom); p != set {
			debug.SetGCPercent(p)
			set = p
		}
	}
}
