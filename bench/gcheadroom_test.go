package bench

import (
	"runtime/debug"
	"testing"
)

func TestGCPercentFor(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		live uint64
		base int
		want int
	}{
		{live: 10 * mb, base: 100, want: 100},  // small heap: the default
		{live: 64 * mb, base: 100, want: 100},  // at the headroom: unchanged
		{live: 128 * mb, base: 100, want: 50},  // 64 MB beyond 128 MB
		{live: 256 * mb, base: 100, want: 25},  // 64 MB beyond 256 MB
		{live: 1024 * mb, base: 100, want: 10}, // never below the floor
		{live: 128 * mb, base: 30, want: 30},   // never above the user's GOGC
		{live: 1024 * mb, base: -1, want: -1},  // GOGC=off stays off
		{live: 1024 * mb, base: 5, want: 5},    // a user's GOGC below the floor is theirs
	} {
		if got := gcPercentFor(c.live, c.base, 64*mb); got != c.want {
			t.Errorf("gcPercentFor(%d MB, %d) = %d, want %d", c.live/mb, c.base, got, c.want)
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
	end1 := boundGCHeadroom()
	end2 := boundGCHeadroom()
	debug.SetGCPercent(20) // as adjustGC would under a large heap
	end1()
	end1() // a second call is a no-op, not a second run ending
	if got := gogc(); got != 20 {
		t.Fatalf("GOGC after the first of two runs ended = %d, want 20 (still bounded)", got)
	}
	end2()
	if got := gogc(); got != 77 {
		t.Fatalf("GOGC after both runs ended = %d, want 77", got)
	}
}
