package stats

import (
	"math"
	"strconv"
)

// Linear is the p-th percentile (0..100) of sorted values by linear
// interpolation at rank (n-1)p/100, LMCache's method: [1,2,3,4] p50 = 2.5,
// 1..100 p90 = 90.1. It is 0 for no values.
func Linear(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if n == 1 {
		return sorted[0]
	}
	k := float64(n-1) * p / 100
	if k <= 0 {
		return sorted[0]
	}
	if k >= float64(n-1) {
		return sorted[n-1]
	}
	f := int(k)
	c := min(f+1, n-1)
	return sorted[f] + (k-float64(f))*(sorted[c]-sorted[f])
}

// NearestRank is the p-th percentile (0..100) of sorted values by the
// nearest-rank method: the value at rank ceil(p/100 * n), at least 1. It
// is 0 for no values.
func NearestRank(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	return sorted[nearestRankIndex(n, p)]
}

// nearestRankIndex is the zero-based index of the nearest-rank p-th
// percentile among n values. p*n is formed before dividing by 100 so that
// whole ranks stay exact (7*100/100 = 7, where 0.07*100 is just above 7).
func nearestRankIndex(n int, p float64) int {
	rank := int(math.Ceil(p * float64(n) / 100))
	return min(max(rank, 1), n) - 1
}

// NearestRankZeros is NearestRank over sorted (all >= 0) merged with
// zeros extra zero values, without materialising the zeros: pooled ITL
// samples are mostly chunk gaps plus many zeros.
func NearestRankZeros(sorted []float64, zeros int, p float64) float64 {
	return rankWithZeros(sorted, zeros, p)
}

// nearestRankZeros is NearestRankZeros over float32 samples, widened.
func nearestRankZeros(sorted []float32, zeros int, p float64) float64 {
	return widen(rankWithZeros(sorted, zeros, p))
}

// rankWithZeros is the nearest-rank p-th percentile of sorted (all >= 0)
// merged with zeros extra zero values; 0 for no values.
func rankWithZeros[T float32 | float64](sorted []T, zeros int, p float64) T {
	n := len(sorted) + zeros
	if n == 0 {
		return 0
	}
	i := nearestRankIndex(n, p)
	if i < zeros {
		return 0
	}
	return sorted[i-zeros]
}

// linearWidened is Linear of sorted's values widened: only the two it
// reads are.
func linearWidened(sorted []float32, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	k := float64(n-1) * p / 100
	if n == 1 || k <= 0 {
		return widen(sorted[0])
	}
	if k >= float64(n-1) {
		return widen(sorted[n-1])
	}
	f := int(k)
	c := min(f+1, n-1)
	lo := widen(sorted[f])
	return lo + (k-float64(f))*(widen(sorted[c])-lo)
}

// widen converts a float32 to the float64 with the shortest decimal form
// that rounds back to it, so JSON shows 12.345679 rather than
// 12.345678329467773.
func widen(f float32) float64 {
	v, err := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
	if err != nil {
		return float64(f)
	}
	return v
}

func mean(sum float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func ptr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// finite maps NaN and infinities (which JSON cannot carry) to 0.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}
