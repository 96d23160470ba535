package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestLiveQuantile: up to exactLive samples the live percentile is
// Linear's exactly; past them it stays within sketchAlpha of it, for
// spread, repeated and zero samples alike.
func TestLiveQuantile(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	draws := map[string]func(i int) float64{
		"exponential": func(int) float64 { return rng.ExpFloat64() * 50 },
		"lognormal":   func(int) float64 { return math.Exp(rng.NormFloat64()*2 + 3) },
		"repeats":     func(i int) float64 { return float64(i%7) * 12.5 },
		"zeros":       func(i int) float64 { return float64(i%3) * rng.Float64() * 1000 },
		"descending":  func(i int) float64 { return 1e5 / float64(i+1) },
	}
	for name, draw := range draws {
		var q liveQuantile
		var all []float64
		for i := range 20_000 {
			v := draw(i)
			q.add(v)
			all = append(all, v)
			if i%997 != 0 && i != exactLive-1 && i != exactLive {
				continue
			}
			sorted := slices.Sorted(slices.Values(all))
			for _, p := range []float64{0, 50, 90, 99, 99.9, 100} {
				got, want := q.linear(p), Linear(sorted, p)
				if len(all) <= exactLive && got != want {
					t.Fatalf("%s p%g of %d samples: %v, want %v exactly", name, p, len(all), got, want)
				}
				if math.Abs(got-want) > sketchAlpha*want+sketchMin {
					t.Fatalf("%s p%g of %d samples: %v, want %v within %g", name, p, len(all), got, want, sketchAlpha)
				}
			}
		}
	}
	var empty liveQuantile
	if empty.linear(99) != 0 {
		t.Error("no sample: not 0")
	}
}

// BenchmarkSnapshot is a live snapshot of a collector holding a million
// TTFTs (one new result between snapshots, as in a run): O(1) in the
// number of results, where copying and sorting every TTFT took ~110 ms
// (268 ms on a busy machine).
func BenchmarkSnapshot(b *testing.B) {
	c := NewWithClock(func() time.Time { return at(100) })
	rng := rand.New(rand.NewPCG(3, 4))
	add := func(i int) {
		c.Add(res("r", float64(i)/10000, rng.ExpFloat64()*0.05, 0.1))
	}
	const n = 1_000_000
	for i := range n {
		add(i)
	}
	c.Snapshot() // the completed seconds are summarised once
	for i := 0; b.Loop(); i++ {
		add(n + i)
		if s := c.Snapshot(); s.Done < n || s.P99TTFTms <= 0 {
			b.Fatal("results lost")
		}
	}
}

// TestSnapshotP99FollowsFinal: past exactLive results, the live p99 TTFT
// is within sketchAlpha of the exact one the results block gives.
func TestSnapshotP99FollowsFinal(t *testing.T) {
	c := NewWithClock(func() time.Time { return at(100) })
	rng := rand.New(rand.NewPCG(9, 10))
	for i := range 5000 {
		c.Add(res("r", float64(i)/100, 0.02+rng.ExpFloat64()*0.03, 0.1))
	}
	live := c.Snapshot().P99TTFTms
	final := c.Final(ClientInfo{}).Results.P99TTFTms
	if final == nil || math.Abs(live-*final) > sketchAlpha**final {
		t.Fatalf("live p99 %v, final %v", live, final)
	}
}

// TestSeriesKeepsAMinuteOfEntries: seconds older than seriesExact keep
// their points and drop their entries, so the series' memory does not
// grow with the window; a late result still counts in its second.
func TestSeriesKeepsAMinuteOfEntries(t *testing.T) {
	now := at(0)
	c := NewWithClock(func() time.Time { return now })
	for sec := range 200 {
		for k := 1; k <= 3; k++ {
			// TTFTs of (sec+1) x k ms, finishing inside second sec.
			c.Add(res("r", float64(sec)+0.1, float64((sec+1)*k)/1000, 0.5))
		}
	}
	now = at(200.5)
	s := c.Snapshot()
	if len(s.Series) != 200 {
		t.Fatalf("%d points, want 200", len(s.Series))
	}
	for sec, p := range s.Series {
		if p.Second != sec || p.Requests != 3 || math.Abs(p.TTFTP50ms-float64(2*(sec+1))) > 1e-3 || math.Abs(p.TTFTMaxms-float64(3*(sec+1))) > 1e-3 {
			t.Fatalf("second %d: %+v", sec, p)
		}
	}
	kept := 0
	for i := range c.series.ring {
		if b := &c.series.ring[i]; b.used && len(b.entries) > 0 {
			kept++
			if b.sec < 200-seriesExact-1 {
				t.Errorf("second %d still holds %d entries", b.sec, len(b.entries))
			}
		}
	}
	if kept == 0 || kept > seriesExact+1 {
		t.Errorf("%d seconds hold entries, want at most %d", kept, seriesExact+1)
	}
	c.Add(res("late", 9.5, 0.9, 0.45)) // finishes in second 9, long frozen
	if p := c.Snapshot().Series[9]; p.Requests != 4 || math.Abs(p.TTFTMaxms-900) > 1e-3 || math.Abs(p.TTFTP50ms-20) > 1e-3 {
		t.Errorf("late result in a frozen second: %+v", p)
	}
}
