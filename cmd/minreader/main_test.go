package main

import (
	"math"
	"testing"
)

// The reader's percentiles must be kvbench's (spec/record.md): linear
// interpolation at rank (n-1)p/100.
func TestLinear(t *testing.T) {
	seq := make([]float64, 100)
	for i := range seq {
		seq[i] = float64(i + 1)
	}
	for _, c := range []struct {
		v    []float64
		p    float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, 50, 2.5},
		{seq, 90, 90.1},
		{seq, 99, 99.01},
		{seq, 100, 100},
		{[]float64{7}, 99, 7},
		{nil, 50, 0},
	} {
		if got := linear(c.v, c.p); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("linear(n=%d, p%v) = %v, want %v", len(c.v), c.p, got, c.want)
		}
	}
}
