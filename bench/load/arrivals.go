package load

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/kvbench/kvbench/config"
)

// Schedule yields the release offsets of requests 0, 1, 2, ... from the
// start of the measured phase: request 0 at 0, then gaps of mean 1/Rate
// (fixed, exponential, or gamma of shape Burstiness). With a ramp-up the
// same gaps are laid on a rate that grows linearly from zero to Rate over
// RampUp (the process is time-warped, so its shape is kept). The gaps
// derive from the seed only: the same seed gives the same schedule.
//
// Shard I of N releases at Rate/N: constant arrivals are the whole run's
// arrivals I, I+N, I+2N, ... (the shards interleave into the whole run's
// schedule); random arrivals are the shard's own seeded process at
// Rate/N (independent Poisson processes add up to one at Rate), and a
// shard other than the first waits a gap for its first request too.
type Schedule struct {
	rate, shape float64
	arrival     string
	ramp        float64 // seconds
	shard       config.Shard
	rng         *rand.Rand
	n           int
	sum         float64 // expected arrivals of the whole run so far (unit-rate time)
}

// NewSchedule builds the schedule of s; s must be Timed.
func NewSchedule(s Settings) *Schedule {
	sh := s.Shard
	if sh.Count < 1 {
		sh = config.Shard{Index: 0, Count: 1}
	}
	stream := uint64(0x6c6f6164)
	if sh.Sharded() {
		stream += uint64(sh.Index+1) << 32
	}
	return &Schedule{
		rate: s.Rate, shape: s.Burstiness, arrival: s.Arrival,
		ramp: s.RampUp.Seconds(), shard: sh,
		rng: rand.New(rand.NewPCG(uint64(s.Seed), stream)),
	}
}

// Next returns the offset of the next request.
func (a *Schedule) Next() time.Duration {
	n := float64(a.shard.Count)
	switch {
	case a.arrival == Constant:
		a.sum = float64(a.n)*n + float64(a.shard.Index)
	case a.n > 0 || a.shard.Index > 0:
		a.sum += a.gap() * n
	}
	a.n++
	return time.Duration(a.warp(a.sum) * float64(time.Second))
}

// gap is one inter-arrival gap in unit-rate time (mean 1).
func (a *Schedule) gap() float64 {
	switch a.arrival {
	case Constant:
		return 1
	case Gamma:
		return gammaVariate(a.rng, a.shape) / a.shape
	}
	return a.rng.ExpFloat64()
}

// warp maps unit-rate time s (expected arrivals) to seconds: s/rate, or
// the inverse of the ramp's cumulative rate rate*t^2/(2*ramp) while it
// ramps.
func (a *Schedule) warp(s float64) float64 {
	if a.ramp <= 0 {
		return s / a.rate
	}
	during := a.rate * a.ramp / 2
	if s <= during {
		return math.Sqrt(2 * a.ramp * s / a.rate)
	}
	return a.ramp + (s-during)/a.rate
}

// gammaVariate draws from Gamma(shape, 1) (Marsaglia and Tsang; for a
// shape below 1 the boost Gamma(k+1) * U^(1/k)).
func gammaVariate(rng *rand.Rand, k float64) float64 {
	if k < 1 {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		return gammaVariate(rng, k+1) * math.Pow(u, 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x {
			return d * v
		}
		if math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
