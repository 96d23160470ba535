package stat

import (
	"math"
	"slices"

	gstat "gonum.org/v1/gonum/stat"
)

// Summary describes a few values (a series' runs): the median, the mean,
// the sample standard deviation and a 95% bootstrap interval of the
// median; nil where undefined (no value; fewer than two for the
// deviation and the interval).
type Summary struct {
	Median *float64    `json:"median"`
	Mean   *float64    `json:"mean"`
	Stdev  *float64    `json:"stdev"`
	CI95   *[2]float64 `json:"ci95"`
	N      int         `json:"n"`
}

// Describe summarises values; key seeds the interval's bootstrap.
func Describe(values []float64, key string) Summary {
	v := finiteSorted(values)
	s := Summary{N: len(v)}
	if len(v) == 0 {
		return s
	}
	s.Median = ptr(Percentile(v, 50))
	s.Mean = ptr(gstat.Mean(v, nil))
	if len(v) < 2 {
		return s
	}
	s.Stdev = ptr(gstat.StdDev(v, nil))
	b := NewBootPercentile(v, 50, NewRand(key))
	draws := make([]float64, Resamples)
	for i := range draws {
		draws[i] = b.Draw()
	}
	if ci, ok := Interval95(draws); ok {
		s.CI95 = &ci
	}
	return s
}

// finiteSorted is a sorted copy of values without NaNs and infinities.
func finiteSorted(values []float64) []float64 {
	out := make([]float64, 0, len(values))
	for _, x := range values {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

func ptr(v float64) *float64 { return &v }
