package stats

import (
	"math"
	"slices"
)

// The live p99 TTFT is read many times a second while results arrive, so
// it comes from bounded structures (the final figures sort every sample):
// exactly from the first exactLive samples, then from a sketch.
const (
	exactLive = 1024
	// sketchAlpha is the sketch's relative error: every value it returns
	// is within 0.5% of a sample value of the rank asked for.
	sketchAlpha = 0.005
	// Samples below sketchMin (1 µs, in ms) are counted as 0; above
	// sketchMax (about 28 hours) as sketchMax.
	sketchMin = 1e-3
	sketchMax = 1e8
)

var (
	sketchGamma   = (1 + sketchAlpha) / (1 - sketchAlpha)
	sketchLnGamma = math.Log(sketchGamma)
	sketchOffset  = int(math.Ceil(math.Log(sketchMin) / sketchLnGamma))
	sketchBuckets = int(math.Ceil(math.Log(sketchMax)/sketchLnGamma)) - sketchOffset + 1
)

// liveQuantile is a percentile of non-negative samples read in O(1)
// memory and time per sample: Linear over the samples exactly up to
// exactLive of them, then within sketchAlpha. The sketch is DDSketch's:
// bucket i counts the samples in (γ^(i-1), γ^i], γ = (1+α)/(1-α), and
// stands for 2γ^i/(γ+1), within α of any of them. Linear interpolates
// between the samples at two ranks; each is read within α, so the result
// is within α of the exact percentile (1 µs below sketchMin).
type liveQuantile struct {
	n        int
	exact    []float64 // the first exactLive samples; nil past them
	zero     int       // samples below sketchMin
	counts   []uint32
	min, max float64
}

func (q *liveQuantile) add(v float64) {
	v = max(v, 0)
	if q.n == 0 || v < q.min {
		q.min = v
	}
	if q.n == 0 || v > q.max {
		q.max = v
	}
	q.n++
	if q.n <= exactLive {
		q.exact = append(q.exact, v)
	} else {
		q.exact = nil
	}
	if v < sketchMin {
		q.zero++
		return
	}
	if q.counts == nil {
		q.counts = make([]uint32, sketchBuckets)
	}
	i := int(math.Ceil(math.Log(min(v, sketchMax))/sketchLnGamma)) - sketchOffset
	q.counts[min(max(i, 0), len(q.counts)-1)]++
}

// linear is Linear(sorted samples, p): exact up to exactLive samples,
// within sketchAlpha past them; 0 without samples.
func (q *liveQuantile) linear(p float64) float64 {
	if q.n <= exactLive {
		return Linear(slices.Sorted(slices.Values(q.exact)), p)
	}
	k := float64(q.n-1) * p / 100
	switch {
	case k <= 0:
		return q.min
	case k >= float64(q.n-1):
		return q.max
	}
	f := int(k)
	lo, hi := q.rank(f), q.rank(f+1)
	return lo + (k-float64(f))*(hi-lo)
}

// rank is the sketch's value of the sample of zero-based rank r.
func (q *liveQuantile) rank(r int) float64 {
	if r < q.zero {
		return 0
	}
	seen := q.zero
	for i, c := range q.counts {
		if seen += int(c); seen > r {
			v := 2 * math.Pow(sketchGamma, float64(i+sketchOffset)) / (sketchGamma + 1)
			return min(max(v, q.min), q.max)
		}
	}
	return q.max
}
