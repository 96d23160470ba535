package stat

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// ExactLimit is the largest sample size (of either side) for which
// MannWhitney uses the exact null distribution of U; larger samples, and
// samples with ties, use the normal approximation (scipy's choice for
// ties; benchstat's go-moremath uses the same limit of 50 without ties).
const ExactLimit = 50

// UTest is the result of a two-sided Mann-Whitney U test.
type UTest struct {
	// U is the statistic of the first sample: the pairs (x, y) with x > y,
	// plus half the tied pairs.
	U float64
	// P is the two-sided p-value.
	P float64
	// Exact says P comes from the exact distribution of U.
	Exact bool
}

// MannWhitney tests whether x and y come from one distribution against
// the alternative that one tends to be larger (two-sided), as scipy's
// mannwhitneyu(x, y, alternative="two-sided", method="auto") does except
// for the size limit of the exact method (ExactLimit, scipy's is 8). ok
// is false when either sample is empty. NaNs must not be passed.
func MannWhitney(x, y []float64) (t UTest, ok bool) {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return UTest{}, false
	}
	xs, ys := slices.Clone(x), slices.Clone(y)
	slices.Sort(xs)
	slices.Sort(ys)
	// Walk the merged order one run of equal values at a time: each value
	// of the run gets the run's mean rank.
	var r1, ties float64
	i, j, rank := 0, 0, 0
	groups := 0
	for i < n1 || j < n2 {
		var v float64
		switch {
		case j >= n2 || (i < n1 && xs[i] <= ys[j]):
			v = xs[i]
		default:
			v = ys[j]
		}
		cx, cy := 0, 0
		for i < n1 && xs[i] == v {
			i++
			cx++
		}
		for j < n2 && ys[j] == v {
			j++
			cy++
		}
		t := float64(cx + cy)
		mean := float64(rank) + (t+1)/2
		r1 += mean * float64(cx)
		ties += t*t*t - t
		rank += cx + cy
		groups++
	}
	f1, f2 := float64(n1), float64(n2)
	u1 := r1 - f1*(f1+1)/2
	t = UTest{U: u1, P: 1}
	if groups == 1 {
		return t, true // every value equal: nothing tells the samples apart
	}
	u2 := f1*f2 - u1
	if ties == 0 && n1 <= ExactLimit && n2 <= ExactLimit {
		t.Exact = true
		t.P = min(1, 2*exactCDF(n1, n2, int(math.Round(min(u1, u2)))))
		return t, true
	}
	t.P = normalP(u1, f1, f2, ties)
	return t, true
}

// normalP is the two-sided p-value of U = u1 from the normal law of U
// with the tie correction (ties is the sum of t^3 - t over groups of t
// equal values) and the continuity correction.
func normalP(u1, f1, f2, ties float64) float64 {
	n := f1 + f2
	sigma := math.Sqrt(f1 * f2 / 12 * ((n + 1) - ties/(n*(n-1))))
	if sigma == 0 {
		return 1
	}
	z := (max(u1, f1*f2-u1) - f1*f2/2 - 0.5) / sigma
	// The lower tail at -z, not the survival at z: gonum's Survival is
	// 1 - CDF, which is 0 past z of about 8.3.
	return min(1, max(0, 2*distuv.UnitNormal.CDF(-z)))
}

// exactCDF is P(U <= u) for samples of n1 and n2 distinct values under
// the null hypothesis. The number of orderings with U = k is the
// coefficient of q^k in the Gaussian binomial [n1+n2, n1]_q =
// prod_{i=1..n1} (1 - q^(n2+i)) / (1 - q^i), built one factor at a time.
func exactCDF(n1, n2, u int) float64 {
	if n1 > n2 {
		n1, n2 = n2, n1
	}
	deg := n1 * n2
	c := make([]float64, deg+1)
	c[0] = 1
	for i := 1; i <= n1; i++ {
		// times (1 - q^(n2+i)), from the top so each coefficient is used once
		for k := deg; k >= n2+i; k-- {
			c[k] -= c[k-n2-i]
		}
		// divided by (1 - q^i): a running sum with stride i
		for k := i; k <= deg; k++ {
			c[k] += c[k-i]
		}
	}
	var below, total float64
	for k, v := range c {
		total += v
		if k <= u {
			below += v
		}
	}
	return below / total
}
