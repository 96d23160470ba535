package stat

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	gstat "gonum.org/v1/gonum/stat"
)

func TestPercentile(t *testing.T) {
	if got := Percentile([]float64{1, 2, 3, 4}, 50); got != 2.5 {
		t.Errorf("[1,2,3,4] p50 = %v", got)
	}
	var h []float64
	for i := 1; i <= 100; i++ {
		h = append(h, float64(i))
	}
	if got := Percentile(h, 90); math.Abs(got-90.1) > 1e-12 {
		t.Errorf("1..100 p90 = %v", got)
	}
	if !math.IsNaN(Percentile(nil, 50)) {
		t.Error("no values gave a number")
	}
}

// The law of a resample's percentile, worked by hand: for {1, 2, 3} the
// median of three draws is 1 when at least two draws are 1 (7/27), 3
// likewise, 2 otherwise (13/27); for {10, 20} the p90 is 10 (1/4), 20
// (1/4) or 10 + 0.9 x 10 = 19 (1/2).
func TestBootPercentileLaw(t *testing.T) {
	const draws = 200000
	for _, c := range []struct {
		sorted []float64
		p      float64
		want   map[float64]float64
	}{
		{[]float64{1, 2, 3}, 50, map[float64]float64{1: 7.0 / 27, 2: 13.0 / 27, 3: 7.0 / 27}},
		{[]float64{10, 20}, 90, map[float64]float64{10: 0.25, 19: 0.5, 20: 0.25}},
		{[]float64{10, 20}, 50, map[float64]float64{10: 0.25, 15: 0.5, 20: 0.25}},
	} {
		b := NewBootPercentile(c.sorted, c.p, NewRand("law"))
		seen := map[float64]int{}
		for range draws {
			seen[math.Round(b.Draw()*1e9)/1e9]++
		}
		for v, p := range c.want {
			got := float64(seen[v]) / draws
			// 5 standard errors of a share out of 200,000 draws
			if se := math.Sqrt(p * (1 - p) / draws); math.Abs(got-p) > 5*se {
				t.Errorf("%v p%v: P(%v) = %v, want %v", c.sorted, c.p, v, got, p)
			}
			delete(seen, v)
		}
		if len(seen) > 0 {
			t.Errorf("%v p%v: values outside the law: %v", c.sorted, c.p, seen)
		}
	}
}

// Against resampling by hand: the quantiles of the two sets of draws
// agree for a skewed sample and a tail percentile.
func TestBootPercentileMatchesResampling(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	n := 200
	x := make([]float64, n)
	for i := range x {
		x[i] = rnd.ExpFloat64() * 100
	}
	slices.Sort(x)
	for _, p := range []float64{50, 90, 99} {
		b := NewBootPercentile(x, p, NewRand("fast"))
		fast := make([]float64, 10000)
		slow := make([]float64, 10000)
		res := make([]float64, n)
		for i := range fast {
			fast[i] = b.Draw()
			for j := range res {
				res[j] = x[rnd.IntN(n)]
			}
			slices.Sort(res)
			slow[i] = Percentile(res, p)
		}
		slices.Sort(fast)
		slices.Sort(slow)
		// Kolmogorov-Smirnov distance of the two sets of draws: 0.03 is
		// past its 0.1% critical value for 10,000 draws each.
		if d := gstat.KolmogorovSmirnov(fast, nil, slow, nil); d > 0.03 {
			t.Errorf("p%v: KS distance %v", p, d)
		}
	}
}

func TestBootSeeded(t *testing.T) {
	x := []float64{1, 4, 9, 16, 25, 36}
	a, b := NewBootPercentile(x, 50, NewRand("k")), NewBootPercentile(x, 50, NewRand("k"))
	c := NewBootPercentile(x, 50, NewRand("other"))
	same, differ := true, false
	for range 100 {
		va, vb, vc := a.Draw(), b.Draw(), c.Draw()
		same = same && va == vb
		differ = differ || va != vc
	}
	if !same || !differ {
		t.Errorf("seeding: same key equal %v, other key differs %v", same, differ)
	}
}

func TestBootRatio(t *testing.T) {
	// Pair by pair: every draw is a ratio of resampled sums, within the
	// pairs' extreme ratios, centred on the ratio of sums.
	num := []float64{0, 50, 100, 80, 0, 90}
	den := []float64{100, 100, 100, 100, 100, 100}
	b := NewBootRatio(num, den, NewRand("r"))
	var draws []float64
	for range 20000 {
		v := b.Draw()
		if v < 0 || v > 1 {
			t.Fatalf("draw %v outside [0, 1]", v)
		}
		draws = append(draws, v)
	}
	mean, sd := gstat.MeanStdDev(draws, nil)
	// sum 320 / 600; the resampled mean's sd is the population sd / sqrt(6)
	if math.Abs(mean-320.0/600) > 0.005 {
		t.Errorf("mean %v", mean)
	}
	pop := math.Sqrt(gstat.PopVariance([]float64{0, .5, 1, .8, 0, .9}, nil) / 6)
	if math.Abs(sd-pop)/pop > 0.05 {
		t.Errorf("sd %v, want %v", sd, pop)
	}

	// Past the pair-by-pair limit the normal law gives the same spread as
	// resampling by hand.
	rnd := rand.New(rand.NewPCG(7, 8))
	n := 3000
	num, den = make([]float64, n), make([]float64, n)
	for i := range num {
		den[i] = float64(100 + rnd.IntN(900))
		if rnd.Float64() < 0.6 {
			num[i] = den[i] - float64(rnd.IntN(50))
		}
	}
	fast := NewBootRatio(num, den, NewRand("n"))
	if !fast.normal {
		t.Fatal("3000 pairs were not drawn from the normal law")
	}
	slow := &BootRatio{num: num, den: den, rnd: rnd}
	var f, s []float64
	for range 4000 {
		f = append(f, fast.Draw())
		s = append(s, slow.Draw())
	}
	fm, fs := gstat.MeanStdDev(f, nil)
	sm, ss := gstat.MeanStdDev(s, nil)
	if math.Abs(fm-sm) > 0.2*ss || math.Abs(fs/ss-1) > 0.1 {
		t.Errorf("normal law %v±%v vs resampling %v±%v", fm, fs, sm, ss)
	}
}

func TestBootProportion(t *testing.T) {
	b := NewBootProportion(30, 200, NewRand("p"))
	var d []float64
	for range 20000 {
		d = append(d, b.Draw())
	}
	mean, sd := gstat.MeanStdDev(d, nil)
	want := math.Sqrt(0.15 * 0.85 / 200)
	if math.Abs(mean-0.15) > 0.002 || math.Abs(sd/want-1) > 0.05 {
		t.Errorf("%v±%v, want 0.15±%v", mean, sd, want)
	}
	if z := NewBootProportion(0, 50, NewRand("p")); z.Draw() != 0 {
		t.Error("0 of 50 resampled to something else")
	}
}

func TestInterval95(t *testing.T) {
	var d []float64
	for i := 1000; i >= 0; i-- {
		d = append(d, float64(i))
	}
	ci, ok := Interval95(d)
	if !ok || ci != [2]float64{25, 975} {
		t.Errorf("0..1000: %v", ci)
	}
	if _, ok := Interval95(nil); ok {
		t.Error("an interval of nothing")
	}
}

func TestDescribe(t *testing.T) {
	s := Describe([]float64{3, 1, 2, math.NaN(), 10}, "d")
	if s.N != 4 || *s.Median != 2.5 || *s.Mean != 4 {
		t.Fatalf("%+v", s)
	}
	// sample sd of 1,2,3,10: variance (9+4+1+36)/3
	if math.Abs(*s.Stdev-math.Sqrt(50.0/3)) > 1e-12 {
		t.Errorf("stdev %v", *s.Stdev)
	}
	if s.CI95 == nil || s.CI95[0] < 1 || s.CI95[1] > 10 || s.CI95[0] > 2.5 || s.CI95[1] < 2.5 {
		t.Errorf("ci %v", s.CI95)
	}
	if again := Describe([]float64{1, 2, 3, 10}, "d"); *again.CI95 != *s.CI95 {
		t.Error("the interval is not seeded")
	}
	one := Describe([]float64{7}, "d")
	if one.N != 1 || *one.Median != 7 || one.Stdev != nil || one.CI95 != nil {
		t.Errorf("one value: %+v", one)
	}
	if none := Describe(nil, "d"); none.N != 0 || none.Median != nil || none.Mean != nil {
		t.Errorf("no value: %+v", none)
	}
}
