package stat

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The p-values below were computed by enumerating every split of the
// pooled values (exact) and with the tie-corrected normal formula, in
// Python; the first pair is scipy's documentation example
// (mannwhitneyu(males, females) = 17, 0.1111111111111111; with
// method="asymptotic" 0.11134688653314041).
func TestMannWhitneyKnownValues(t *testing.T) {
	for _, c := range []struct {
		name  string
		x, y  []float64
		u, p  float64
		exact bool
	}{
		{"scipy docs", []float64{19, 22, 16, 29, 24}, []float64{20, 11, 17, 12}, 17, 0.1111111111111111, true},
		{"separated", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0, 2.0 / 252, true},
		{"7 vs 9", []float64{3.1, 0.4, 7.7, 2.2, 9.9, 5.5, 1.3}, []float64{4.4, 8.8, 6.1, 2.9, 7.2, 9.1, 5.9, 8.3, 6.6}, 18, 0.1737762237762238, true},
		{"ties", []float64{1, 2, 2, 3, 3, 3}, []float64{2, 3, 4, 4, 5}, 5.5, 0.08871369199677624, false},
		{"one each", []float64{1}, []float64{2}, 0, 1, true},
	} {
		got, ok := MannWhitney(c.x, c.y)
		if !ok || got.U != c.u || math.Abs(got.P-c.p) > 1e-12 || got.Exact != c.exact {
			t.Errorf("%s: got %+v ok=%v, want U=%v p=%v exact=%v", c.name, got, ok, c.u, c.p, c.exact)
		}
		// Two-sided: the order of the samples does not matter.
		if sw, _ := MannWhitney(c.y, c.x); math.Abs(sw.P-got.P) > 1e-12 {
			t.Errorf("%s: swapped p %v != %v", c.name, sw.P, got.P)
		}
	}
}

// The scipy example with the normal approximation: the same data, forced
// past the exact limit by repeating it would change U, so the normal
// path is checked on its own formula with a hand-computed z.
func TestMannWhitneyNormal(t *testing.T) {
	// 60 vs 60 distinct values, y shifted: no ties, past ExactLimit.
	var x, y []float64
	for i := range 60 {
		x = append(x, float64(2*i))
		y = append(y, float64(2*i+41))
	}
	got, _ := MannWhitney(x, y)
	// U1 counts pairs x > y: x=2i > 2j+41 iff i-j >= 21: sum over i of
	// (i-20) for i = 21..59 = 39*40/2 = 780.
	if got.U != 780 || got.Exact {
		t.Fatalf("U = %v exact=%v, want 780 normal", got.U, got.Exact)
	}
	sigma := math.Sqrt(60.0 * 60 * 121 / 12)
	z := (3600 - 780 - 1800 - 0.5) / sigma
	want := math.Erfc(z / math.Sqrt2)
	if math.Abs(got.P-want) > 1e-12 {
		t.Errorf("p = %v, want %v", got.P, want)
	}
}

func TestMannWhitneyEdges(t *testing.T) {
	if _, ok := MannWhitney(nil, []float64{1}); ok {
		t.Error("an empty side was tested")
	}
	same, ok := MannWhitney([]float64{5, 5, 5}, []float64{5, 5})
	if !ok || same.P != 1 {
		t.Errorf("all equal: %+v", same)
	}
	// 0/1 samples (error rates): ties everywhere, normal approximation.
	a := make([]float64, 200)
	b := make([]float64, 200)
	for i := range 40 {
		b[i] = 1
	}
	r, _ := MannWhitney(a, b)
	if r.Exact || r.P > 1e-6 {
		t.Errorf("0 of 200 vs 40 of 200 failed: %+v", r)
	}
}

// The exact distribution sums to one and matches enumeration for a size
// where enumeration is cheap.
func TestExactCDF(t *testing.T) {
	if p := exactCDF(50, 50, 2500); math.Abs(p-1) > 1e-12 {
		t.Errorf("P(U <= n1 n2) = %v", p)
	}
	// 2 vs 2: U takes 0,1,2,2,3,4 over the C(4,2) = 6 orderings.
	for u, want := range []float64{1.0 / 6, 2.0 / 6, 4.0 / 6, 5.0 / 6, 1} {
		if got := exactCDF(2, 2, u); math.Abs(got-want) > 1e-15 {
			t.Errorf("P(U <= %d) = %v, want %v", u, got, want)
		}
	}
	// Near the limit the exact and normal p-values agree closely.
	rnd := rand.New(rand.NewPCG(1, 2))
	var x, y []float64
	for range 50 {
		x = append(x, rnd.Float64())
		y = append(y, rnd.Float64()+0.12)
	}
	e, _ := MannWhitney(x, y)
	n := normalP(e.U, 50, 50, 0)
	if !e.Exact || e.P < 0.001 || e.P > 0.5 || math.Abs(e.P/n-1) > 0.05 {
		t.Errorf("exact %+v vs normal %v", e, n)
	}
}

// The exact p-value equals the share of all splits of the pooled values
// whose U is at least as extreme, counted one by one.
func TestExactMatchesEnumeration(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for trial := range 5 {
		n1, n2 := 3+trial, 8-trial
		pool := make([]float64, n1+n2)
		for i := range pool {
			pool[i] = rnd.Float64() + float64(i%2)*0.4
		}
		got, _ := MannWhitney(pool[:n1], pool[n1:])
		uMin := min(got.U, float64(n1*n2)-got.U)
		extreme, total := 0, 0
		for mask := 0; mask < 1<<(n1+n2); mask++ {
			if popcount(mask) != n1 {
				continue
			}
			var x, y []float64
			for i, v := range pool {
				if mask&(1<<i) != 0 {
					x = append(x, v)
				} else {
					y = append(y, v)
				}
			}
			r, _ := MannWhitney(x, y)
			total++
			if min(r.U, float64(n1*n2)-r.U) <= uMin {
				extreme++
			}
		}
		if want := min(1, float64(extreme)/float64(total)); math.Abs(got.P-want) > 1e-12 {
			t.Errorf("%d vs %d: p = %v, enumeration %v", n1, n2, got.P, want)
		}
	}
}

func popcount(m int) int {
	n := 0
	for ; m > 0; m &= m - 1 {
		n++
	}
	return n
}

// Far in the tail the p-value stays a positive number: 60 against 60
// values that do not overlap give z = 9.45 and p about 3.4e-21.
func TestMannWhitneyFarTail(t *testing.T) {
	var x, y []float64
	for i := range 60 {
		x = append(x, float64(i))
		y = append(y, float64(100+i))
	}
	got, _ := MannWhitney(x, y)
	sigma := math.Sqrt(60.0 * 60 * 121 / 12)
	want := math.Erfc((1800 - 0.5) / sigma / math.Sqrt2)
	if got.P <= 0 || math.Abs(got.P/want-1) > 1e-9 {
		t.Errorf("p = %v, want %v", got.P, want)
	}
}
