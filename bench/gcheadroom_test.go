package bench

import (
	"runtime/debug"
	"testing"
	"time"
)

func TestGCPercentFor(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		name       string
		live, kept uint64
		base       int
		floor      bool
		want       int
	}{
		{"small heap, the user's GOGC: unchanged", 10 * mb, 10 * mb, 100, false, 100},
		{"small heap: 64 MB beyond it", 10 * mb, 0, 100, true, 640},
		{"a heap just started: as if 4 MB (the runtime's minimum)", 0, 0, 100, true, 1600},
		{"a 2 MB heap: as if 4 MB", 2 * mb, 0, 100, true, 1600},
		{"small heap, a low GOGC: still 64 MB beyond it", 16 * mb, 0, 20, true, 400},
		{"at the headroom: unchanged", 64 * mb, 64 * mb, 100, true, 100},
		{"all kept: 64 MB beyond 128 MB", 128 * mb, 128 * mb, 100, true, 50},
		{"all kept: 64 MB beyond 256 MB", 256 * mb, 256 * mb, 100, true, 25},
		{"1M requests: 100 MB kept of 120 live", 120 * mb, 100 * mb, 100, true, 53},
		{"nothing kept (requests in flight): the default", 1024 * mb, 0, 100, true, 100},
		{"half kept: the rest's 100%", 512 * mb, 256 * mb, 100, true, 50},
		{"never below the floor", 4096 * mb, 4096 * mb, 100, true, 10},
		{"never above the user's GOGC", 128 * mb, 128 * mb, 30, false, 30},
		{"the user's GOGC for the rest", 512 * mb, 256 * mb, 50, false, 25},
		{"GOGC=off stays off", 1024 * mb, 1024 * mb, -1, true, -1},
		{"a user's GOGC below the floor is theirs", 1024 * mb, 1024 * mb, 5, false, 5},
		{"kept above live (read apart) counts as all", 100 * mb, 200 * mb, 100, true, 64},
	} {
		if got := gcPercentFor(c.live, c.kept, c.base, 64*mb, c.floor); got != c.want {
			t.Errorf("%s: gcPercentFor(%d MB live, %d MB kept, %d, floor %v) = %d, want %d", c.name, c.live/mb, c.kept/mb, c.base, c.floor, got, c.want)
		}
	}
}

// Bounding the headroom for overlapping runs restores GOGC when the
// last ends, whatever it set meanwhile.
func TestBoundGCHeadroomRestores(t *testing.T) {
	prev := debug.SetGCPercent(77)
	defer debug.SetGCPercent(prev)
	if got := gogc(); got != 77 {
		t.Fatalf("gogc() = %d, want 77", got)
	}
	end1 := boundGCHeadroom(func() uint64 { return 1 }, mergeBound)
	end2 := boundGCHeadroom(func() uint64 { return 2 }, runBound)
	if got, bound := keptBytes(); got != 3 || bound != mergeBound {
		t.Fatalf("keptBytes() = %d, %+v, want both runs' 3 and the merge's bound %+v", got, bound, mergeBound)
	}
	debug.SetGCPercent(20) // as adjustGC would under a large heap
	end1()
	end1() // a second call is a no-op, not a second run ending
	if got := gogc(); got != 20 {
		t.Fatalf("GOGC after the first of two runs ended = %d, want 20 (still bounded)", got)
	}
	if got, bound := keptBytes(); got != 2 || bound != runBound {
		t.Fatalf("keptBytes() after the first run ended = %d, %+v, want 2 and the run's bound %+v", got, bound, runBound)
	}
	end2()
	if got := gogc(); got != 77 {
		t.Fatalf("GOGC after both runs ended = %d, want 77", got)
	}
}

// A merge's bound sets a soft memory limit near the live heap (never
// above the user's), and its end restores the user's limit.
func TestMergeBoundLimitsMemory(t *testing.T) {
	const user = 1 << 40
	prev := debug.SetMemoryLimit(user)
	defer debug.SetMemoryLimit(prev)
	end := boundGCHeadroom(func() uint64 { return 0 }, mergeBound)
	deadline := time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) == user && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	got := debug.SetMemoryLimit(-1)
	end()
	if got >= user {
		t.Fatalf("memory limit during a merge %d, want one near the live heap", got)
	}
	if after := debug.SetMemoryLimit(-1); after != user {
		t.Fatalf("memory limit after the merge %d, want the user's %d", after, int64(user))
	}
	// A run's bound sets none.
	end = boundGCHeadroom(func() uint64 { return 0 }, runBound)
	time.Sleep(3 * gcEvery)
	got = debug.SetMemoryLimit(-1)
	end()
	if got != user {
		t.Fatalf("memory limit during a run %d, want the user's %d", got, int64(user))
	}
}

// A run's bound gives a small heap 64 MB of headroom from the start, not
// a tick later (1000 streams opened at once grow the heap in their first
// 200 ms); a GOGC the user set in the environment is never raised.
func TestRunBoundFloorsASmallHeapAtOnce(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	t.Setenv("GOGC", "")
	end := boundGCHeadroom(func() uint64 { return 0 }, runBound)
	got := gogc()
	end()
	if got <= 100 {
		t.Fatalf("GOGC right after a run's bound started = %d, want above 100 for this test's small heap", got)
	}
	if after := gogc(); after != 100 {
		t.Fatalf("GOGC after the run = %d, want 100", after)
	}
	t.Setenv("GOGC", "100")
	end = boundGCHeadroom(func() uint64 { return 0 }, runBound)
	got = gogc()
	end()
	if got != 100 {
		t.Fatalf("GOGC with the user's GOGC=100 = %d, want theirs", got)
	}
}
