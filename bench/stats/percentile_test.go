package stats

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func seq(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i + 1)
	}
	return v
}

func TestLinearWorkedNumbers(t *testing.T) {
	cases := []struct {
		name string
		v    []float64
		p    float64
		want float64
	}{
		{"1234 p50", []float64{1, 2, 3, 4}, 50, 2.5},
		{"1..100 p90", seq(100), 90, 90.1},
		{"1..100 p99", seq(100), 99, 99.01},
		{"1..100 p50", seq(100), 50, 50.5},
		{"empty", nil, 50, 0},
		{"one", []float64{7}, 99, 7},
		{"p0", []float64{3, 5}, 0, 3},
		{"p100", []float64{3, 5}, 100, 5},
	}
	for _, c := range cases {
		if got := Linear(c.v, c.p); !near(got, c.want) {
			t.Errorf("%s: Linear = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestNearestRank(t *testing.T) {
	v := []float64{15, 20, 35, 40, 50}
	cases := []struct {
		p    float64
		want float64
	}{
		{0, 15}, {5, 15}, {30, 20}, {40, 20}, {50, 35}, {95, 50}, {100, 50},
	}
	for _, c := range cases {
		if got := NearestRank(v, c.p); got != c.want {
			t.Errorf("NearestRank(p%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if got := NearestRank(seq(20), 95); got != 19 {
		t.Errorf("NearestRank(1..20, 95) = %v, want 19", got)
	}
	// 7*100/100 is exactly rank 7, where 0.07*100 drifts to rank 8.
	if got := NearestRank(seq(100), 7); got != 7 {
		t.Errorf("NearestRank(1..100, 7) = %v, want 7", got)
	}
	if got := NearestRank(seq(100), 50); got != 50 {
		t.Errorf("NearestRank(1..100, 50) = %v, want 50", got)
	}
	if got := NearestRank(nil, 50); got != 0 {
		t.Errorf("NearestRank(empty) = %v, want 0", got)
	}
}

func TestNearestRankZerosMatchesMaterialised(t *testing.T) {
	gaps := []float32{5, 10, 20, 30}
	for zeros := 0; zeros < 8; zeros++ {
		full := make([]float64, zeros)
		for _, g := range gaps {
			full = append(full, float64(g))
		}
		for _, p := range []float64{1, 25, 50, 75, 95, 99, 100} {
			if got, want := nearestRankZeros(gaps, zeros, p), NearestRank(full, p); got != want {
				t.Errorf("zeros=%d p%v: got %v, want %v", zeros, p, got, want)
			}
		}
	}
}

func TestNearestRankZerosFloat64MatchesMaterialised(t *testing.T) {
	gaps := []float64{0.5, 10, 20.25, 30}
	for zeros := 0; zeros < 8; zeros++ {
		full := append(make([]float64, zeros), gaps...)
		for _, p := range []float64{1, 25, 50, 75, 95, 99, 100} {
			if got, want := NearestRankZeros(gaps, zeros, p), NearestRank(full, p); got != want {
				t.Errorf("zeros=%d p%v: got %v, want %v", zeros, p, got, want)
			}
		}
	}
	if got := NearestRankZeros(nil, 0, 50); got != 0 {
		t.Errorf("empty: got %v, want 0", got)
	}
}
