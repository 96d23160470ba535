package stats

import (
	"math/rand/v2"
	"slices"

	"github.com/kvbench/kvbench/internal/stat"
)

// What reuse changed: cold TTFT p50 over reused TTFT p50, with a seeded
// bootstrap interval (spec/record.md, "The headline").

// Baselines of the speedup's cold side.
const (
	BaselineMeasuredCold = "measured_cold"
	BaselineWarmupCold   = "warmup_cold"
)

// minSpeedupSide is the fewest requests a side of the speedup needs.
const minSpeedupSide = 3

// speedupResamples and speedupSeed make the interval: 10,000 resamples
// from a fixed seed, so a summary recomputed from the same requests
// (kvbench merge, a report) gives the same interval.
const (
	speedupResamples = 10000
	speedupSeed      = 0x6b7662656e6368 // "kvbench"
)

// Speedup is the headline's figures of what reuse changed; nil figures
// where a side has too few requests.
type Speedup struct {
	Baseline           *string
	ColdP50, ReusedP50 *float64
	Ratio              *float64
	CI95               *[2]float64
	ColdN, ReusedN     int
}

// speedupOf computes the speedup from the cold side (measured cold
// requests when there are at least 3, else the warmup's cold ones) and
// the measured reused requests.
func speedupOf(measuredCold, warmupCold, reused []float64) Speedup {
	var sp Speedup
	cold, base := measuredCold, BaselineMeasuredCold
	if len(cold) < minSpeedupSide {
		cold, base = warmupCold, BaselineWarmupCold
	}
	// Sorted already at the end of a run (figures.sortAll): no copy.
	if !slices.IsSorted(cold) {
		cold = slices.Sorted(slices.Values(cold))
	}
	if !slices.IsSorted(reused) {
		reused = slices.Sorted(slices.Values(reused))
	}
	sp.ColdN, sp.ReusedN = len(cold), len(reused)
	if len(cold) > 0 && (len(cold) >= minSpeedupSide || base == BaselineWarmupCold) {
		sp.Baseline, sp.ColdP50 = &base, ptr(Linear(cold, 50))
	}
	if len(reused) > 0 {
		sp.ReusedP50 = ptr(Linear(reused, 50))
	}
	if sp.ColdP50 != nil && sp.ReusedP50 != nil && *sp.ReusedP50 > 0 {
		sp.Ratio = ptr(*sp.ColdP50 / *sp.ReusedP50)
	}
	if sp.Ratio != nil && len(cold) >= minSpeedupSide && len(reused) >= minSpeedupSide {
		lo, hi := bootstrapRatio(cold, reused)
		sp.CI95 = &[2]float64{lo, hi}
	}
	return sp
}

// bootstrapRatio is the 95% percentile interval of median(a)/median(b)
// over resamples of a and b (each sorted).
func bootstrapRatio(a, b []float64) (lo, hi float64) {
	rnd := rand.New(rand.NewPCG(speedupSeed, speedupSeed>>1))
	ma, mb := newBootMedian(a, rnd), newBootMedian(b, rnd)
	ratios := make([]float64, 0, speedupResamples)
	for range speedupResamples {
		if d := mb.draw(); d > 0 {
			ratios = append(ratios, ma.draw()/d)
		}
	}
	if len(ratios) == 0 {
		return 0, 0
	}
	slices.Sort(ratios)
	return Linear(ratios, 2.5), Linear(ratios, 97.5)
}

// bootMedian draws the median of a resample of sorted in O(1): the
// percentile bootstrap of internal/stat at 50 (a resample's order
// statistics drawn from their Beta laws).
type bootMedian struct{ b *stat.BootPercentile }

func newBootMedian(sorted []float64, rnd *rand.Rand) bootMedian {
	return bootMedian{stat.NewBootPercentile(sorted, 50, rnd)}
}

func (m bootMedian) draw() float64 { return m.b.Draw() }
