package load

import (
	"math"
	"sort"
	"testing"
	"time"
)

func gaps(s Settings, n int) []float64 {
	a := NewSchedule(s)
	out := make([]float64, 0, n)
	last := a.Next()
	for i := 0; i < n; i++ {
		t := a.Next()
		out = append(out, (t - last).Seconds())
		last = t
	}
	return out
}

func meanCV(x []float64) (mean, cv float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss/float64(len(x)-1)) / mean
}

// ks is the Kolmogorov-Smirnov statistic of x against the CDF F.
func ks(x []float64, F func(float64) float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	n := float64(len(s))
	d := 0.0
	for i, v := range s {
		f := F(v)
		d = math.Max(d, math.Max(f-float64(i)/n, float64(i+1)/n-f))
	}
	return d
}

// gammaCDF is the regularised lower incomplete gamma P(k, x) (series
// below k+1, continued fraction above; Numerical Recipes 6.2).
func gammaCDF(k, x float64) float64 {
	if x <= 0 {
		return 0
	}
	lg, _ := math.Lgamma(k)
	if x < k+1 {
		sum, term := 1/k, 1/k
		for n := 1; n < 1000; n++ {
			term *= x / (k + float64(n))
			sum += term
			if term < sum*1e-15 {
				break
			}
		}
		return sum * math.Exp(-x+k*math.Log(x)-lg)
	}
	b := x + 1 - k
	c, d := 1/1e-300, 1/b
	h := d
	for i := 1; i < 1000; i++ {
		an := -float64(i) * (float64(i) - k)
		b += 2
		d = an*d + b
		if math.Abs(d) < 1e-300 {
			d = 1e-300
		}
		c = b + an/c
		if math.Abs(c) < 1e-300 {
			c = 1e-300
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return 1 - math.Exp(-x+k*math.Log(x)-lg)*h
}

// TestConstantSchedule: gaps of exactly 1/R, request 0 at 0.
func TestConstantSchedule(t *testing.T) {
	a := NewSchedule(Settings{Rate: 100, Arrival: Constant, Burstiness: 1, Seed: 3})
	for i := 0; i < 1000; i++ {
		got := a.Next()
		want := time.Duration(float64(i) * float64(10*time.Millisecond))
		if d := got - want; d < -time.Microsecond || d > time.Microsecond {
			t.Fatalf("request %d at %v, want %v", i, got, want)
		}
	}
}

// TestPoissonGammaFit: the gaps follow their distributions (KS at 1%
// with fixed seeds), mean 1/R, coefficient of variation 1 (Poisson) and
// 1/sqrt(B) (gamma).
func TestPoissonGammaFit(t *testing.T) {
	const n, rate = 20000, 100.0
	crit := 1.63 / math.Sqrt(n) // KS critical value at alpha = 0.01
	cases := []struct {
		arrival string
		b       float64
	}{{Poisson, 1}, {Gamma, 0.25}, {Gamma, 0.5}, {Gamma, 1}, {Gamma, 4}}
	for _, c := range cases {
		for _, seed := range []int64{1, 42} {
			g := gaps(Settings{Rate: rate, Arrival: c.arrival, Burstiness: c.b, Seed: seed}, n)
			mean, cv := meanCV(g)
			if math.Abs(mean*rate-1) > 0.05 {
				t.Errorf("%s B=%g seed %d: mean gap %.5f s, want %.5f", c.arrival, c.b, seed, mean, 1/rate)
			}
			if want := 1 / math.Sqrt(c.b); math.Abs(cv/want-1) > 0.05 {
				t.Errorf("%s B=%g seed %d: CV %.3f, want %.3f", c.arrival, c.b, seed, cv, want)
			}
			// Gap*rate*B ~ Gamma(B, 1).
			d := ks(g, func(x float64) float64 { return gammaCDF(c.b, x*rate*c.b) })
			if d > crit {
				t.Errorf("%s B=%g seed %d: KS distance %.4f > %.4f", c.arrival, c.b, seed, d, crit)
			}
			// The fit test must be able to fail: the same gaps are not
			// exponential unless B is 1.
			if c.b != 1 {
				if d := ks(g, func(x float64) float64 { return 1 - math.Exp(-x*rate) }); d <= crit {
					t.Errorf("%s B=%g: gaps also pass as exponential (KS %.4f)", c.arrival, c.b, d)
				}
			}
		}
	}
}

// TestScheduleSeeded: the same seed gives the same schedule, another
// seed a different one.
func TestScheduleSeeded(t *testing.T) {
	for _, arr := range []string{Poisson, Gamma} {
		s := Settings{Rate: 50, Arrival: arr, Burstiness: 0.7, Seed: 9}
		a, b := NewSchedule(s), NewSchedule(s)
		s.Seed = 10
		c := NewSchedule(s)
		differs := false
		for i := 0; i < 500; i++ {
			x, y, z := a.Next(), b.Next(), c.Next()
			if x != y {
				t.Fatalf("%s: request %d at %v and %v with the same seed", arr, i, x, y)
			}
			differs = differs || x != z
		}
		if !differs {
			t.Fatalf("%s: seeds 9 and 10 give the same schedule", arr)
		}
	}
}

// TestRampUp: with a ramp the rate grows linearly: R*D/2 requests in the
// ramp, then R per second.
func TestRampUp(t *testing.T) {
	a := NewSchedule(Settings{Rate: 100, Arrival: Constant, Burstiness: 1, RampUp: 10 * time.Second})
	var in, after int
	for {
		at := a.Next()
		if at >= 20*time.Second {
			break
		}
		if at < 10*time.Second {
			in++
		} else {
			after++
		}
	}
	if in < 499 || in > 501 || after < 999 || after > 1001 {
		t.Fatalf("ramp of 10 s to 100/s: %d requests during it (want 500), %d in the next 10 s (want 1000)", in, after)
	}
	// The first second of the ramp holds about R/(2D) = 5 requests.
	b := NewSchedule(Settings{Rate: 100, Arrival: Constant, Burstiness: 1, RampUp: 10 * time.Second})
	n := 0
	for b.Next() < time.Second {
		n++
	}
	if n < 5 || n > 6 {
		t.Fatalf("first second of the ramp: %d requests, want 5 or 6", n)
	}
}
