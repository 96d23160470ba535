package stat

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Resamples is how many bootstrap resamples an interval is drawn from.
const Resamples = 10000

// baseSeed seeds every bootstrap ("kvbench"): the same samples give the
// same interval on every machine and in every output.
const baseSeed = 0x6b7662656e6368

// NewRand is the seeded source of one bootstrap, keyed by what it
// measures (a metric name), so an interval does not depend on which
// other intervals were drawn before it.
func NewRand(key string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(key))
	k := h.Sum64()
	return rand.New(rand.NewPCG(baseSeed^k, (baseSeed>>1)^(k<<1)))
}

// Percentile is the p-th percentile (0..100) of sorted values by linear
// interpolation at rank (n-1)p/100, as bench/stats.Linear and numpy's
// default; NaN for no values.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	k := float64(n-1) * p / 100
	if k <= 0 {
		return sorted[0]
	}
	if k >= float64(n-1) {
		return sorted[n-1]
	}
	f := int(k)
	return sorted[f] + (k-float64(f))*(sorted[f+1]-sorted[f])
}

// BootPercentile draws the p-th percentile (as Percentile) of a
// bootstrap resample (n values drawn with replacement) of sorted in O(1),
// whatever n: a resample's j-th smallest value is sorted[floor(n*U)] for
// U the j-th smallest of n uniforms, which is Beta(j, n+1-j), and the next
// one is U + (1-U) x Beta(1, n-j). So 10,000 resamples of a run of a
// million requests cost what they cost for ten.
type BootPercentile struct {
	sorted     []float64
	first, gap distuv.Beta
	frac       float64 // weight of the next order statistic
	single     bool    // the percentile is one order statistic
}

// NewBootPercentile draws from rnd; sorted must be sorted and not empty.
func NewBootPercentile(sorted []float64, p float64, rnd *rand.Rand) *BootPercentile {
	n := len(sorted)
	k := float64(n-1) * p / 100
	k = min(max(k, 0), float64(n-1))
	f := int(k)
	j := f + 1 // the 1-based order statistic below the rank
	b := &BootPercentile{sorted: sorted, frac: k - float64(f),
		first: distuv.Beta{Alpha: float64(j), Beta: float64(n + 1 - j), Src: rnd}}
	b.single = b.frac == 0 || j >= n
	if !b.single {
		b.gap = distuv.Beta{Alpha: 1, Beta: float64(n - j), Src: rnd}
	}
	return b
}

func (b *BootPercentile) at(u float64) float64 {
	n := len(b.sorted)
	return b.sorted[min(max(int(u*float64(n)), 0), n-1)]
}

// Draw is the percentile of one resample.
func (b *BootPercentile) Draw() float64 {
	u := b.first.Rand()
	lo := b.at(u)
	if b.single {
		return lo
	}
	v := u + (1-u)*b.gap.Rand()
	return lo + b.frac*(b.at(v)-lo)
}

// Interval95 is the 2.5th and 97.5th percentiles of draws (reordered in
// place); ok is false without draws.
func Interval95(draws []float64) (ci [2]float64, ok bool) {
	if len(draws) == 0 {
		return ci, false
	}
	slices.Sort(draws)
	return [2]float64{Percentile(draws, 2.5), Percentile(draws, 97.5)}, true
}

// exactRatioLimit is the most pairs a ratio of sums is resampled pair by
// pair; above it a resample's sums are drawn from their normal law.
const exactRatioLimit = 2000

// BootRatio draws sum(num)/sum(den) over a bootstrap resample of the
// pairs (num[i], den[i]): pair by pair up to 2,000 pairs, beyond that
// from the normal law the resampled sums follow (the central limit
// theorem, with the pairs' own covariance), so a draw stays O(1).
type BootRatio struct {
	num, den []float64
	rnd      *rand.Rand
	// the normal law of the resampled sums: means, and the Cholesky
	// factor of their covariance
	mn, md, l11, l21, l22 float64
	normal                bool
}

// NewBootRatio resamples the pairs; num and den have one length > 0.
func NewBootRatio(num, den []float64, rnd *rand.Rand) *BootRatio {
	b := &BootRatio{num: num, den: den, rnd: rnd}
	n := len(num)
	if n <= exactRatioLimit {
		return b
	}
	b.normal = true
	var sn, sd float64
	for i := range num {
		sn += num[i]
		sd += den[i]
	}
	f := float64(n)
	mn, md := sn/f, sd/f
	var vn, vd, c float64
	for i := range num {
		dn, dd := num[i]-mn, den[i]-md
		vn += dn * dn
		vd += dd * dd
		c += dn * dd
	}
	// The sums of n draws have mean n*mu and covariance n times the
	// pairs' population covariance: the raw sums of products above.
	b.mn, b.md = sn, sd
	b.l11 = math.Sqrt(vn)
	if b.l11 > 0 {
		b.l21 = c / b.l11
	}
	b.l22 = math.Sqrt(max(vd-b.l21*b.l21, 0))
	return b
}

// Draw is the ratio of one resample; NaN when its denominator is 0.
func (b *BootRatio) Draw() float64 {
	var sn, sd float64
	if b.normal {
		z1, z2 := b.rnd.NormFloat64(), b.rnd.NormFloat64()
		sn = b.mn + b.l11*z1
		sd = b.md + b.l21*z1 + b.l22*z2
	} else {
		n := len(b.num)
		for range n {
			i := b.rnd.IntN(n)
			sn += b.num[i]
			sd += b.den[i]
		}
	}
	if sd <= 0 {
		return math.NaN()
	}
	return sn / sd
}

// BootProportion draws the share of successes in a bootstrap resample of
// n trials with k successes: Binomial(n, k/n) / n, O(1) per draw.
type BootProportion struct {
	n    float64
	dist distuv.Binomial
	flat bool // k is 0 or n: every resample is the same
	p    float64
}

// NewBootProportion resamples n > 0 trials with k successes.
func NewBootProportion(k, n int, rnd *rand.Rand) *BootProportion {
	p := float64(k) / float64(n)
	b := &BootProportion{n: float64(n), p: p, flat: k == 0 || k == n}
	if !b.flat {
		b.dist = distuv.Binomial{N: float64(n), P: p, Src: rnd}
	}
	return b
}

// Draw is the proportion of one resample.
func (b *BootProportion) Draw() float64 {
	if b.flat {
		return b.p
	}
	return b.dist.Rand() / b.n
}
