package stats

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestRankOrderIsLinear: after every sample, the order's percentile is
// Linear's over the sorted samples bit for bit, whatever the order the
// samples came in (repeats and zeros included), and sorted gives every
// sample back.
func TestRankOrderIsLinear(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range []float64{0, 1, 37.5, 50, 90, 99, 99.9, 100} {
		o := rankOrder{p: p}
		var all []float64
		for i := 0; i < 3000; i++ {
			var v float64
			switch i % 4 {
			case 0:
				v = rng.ExpFloat64() * 100
			case 1:
				v = float64(rng.IntN(5)) // repeats
			case 2:
				v = 0
			default:
				v = 1e4 - float64(i) // descending
			}
			o.add(v)
			all = append(all, v)
			sorted := slices.Sorted(slices.Values(all))
			if got, want := o.linear(), Linear(sorted, p); got != want {
				t.Fatalf("p%g after %d samples: %v, want %v", p, i+1, got, want)
			}
		}
		if got := o.sorted(); !slices.Equal(got, slices.Sorted(slices.Values(all))) {
			t.Fatalf("p%g: sorted does not give the samples back", p)
		}
	}
	var empty rankOrder
	if empty.linear() != 0 || len(empty.sorted()) != 0 {
		t.Error("an empty order is not 0")
	}
}

// BenchmarkSnapshot is a live snapshot of a collector holding a million
// TTFTs (one new result between snapshots, as in a run): O(1) for the
// p99, where copying and sorting every TTFT took ~110 ms.
func BenchmarkSnapshot(b *testing.B) {
	c := NewWithClock(func() time.Time { return at(100) })
	rng := rand.New(rand.NewPCG(3, 4))
	add := func(i int) {
		r := res("r", float64(i)/10000, rng.ExpFloat64()*0.05, 0.1)
		c.Add(r)
	}
	const n = 1_000_000
	for i := range n {
		add(i)
	}
	c.Snapshot() // the completed seconds are summarised once
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		add(n + i)
		if s := c.Snapshot(); s.Done < n {
			b.Fatal("results lost")
		}
	}
}
