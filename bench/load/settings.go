package load

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/config"
)

// Arrival processes.
const (
	Constant = "constant"
	Poisson  = "poisson"
	Gamma    = "gamma"
)

// Settings are a run's load-shaping choices, resolved from its config.
type Settings struct {
	// Rate is measured requests per second; +Inf keeps the workload's
	// own schedule.
	Rate float64
	// Arrival is Constant, Poisson or Gamma; Burstiness is the gamma
	// shape (1 for Poisson).
	Arrival    string
	Burstiness float64
	// MaxConcurrency caps the measured requests in flight (0: no cap).
	MaxConcurrency int
	// RampUp grows the rate (or the cap) linearly from near zero to its
	// target over this long.
	RampUp time.Duration
	Seed   int64
	// SelfTimed is set for a workload that times its own releases
	// (multi-round-chat): the gate then only applies the cap.
	SelfTimed bool
	// SLO is the service-level objective, nil when none was given.
	SLO *SLO
	// Shard is the share of the run this process sends: rates are per
	// run, so a shard releases at Rate/N (spec/scale-out.md).
	Shard config.Shard
}

// Timed reports whether releases follow an arrival process.
func (s Settings) Timed() bool { return !math.IsInf(s.Rate, 1) && s.Rate > 0 }

// ProcessRate is the rate this process sends at: the run's rate, divided
// among its shards.
func (s Settings) ProcessRate() float64 { return s.Shard.Rate(s.Rate) }

// MeanGap is 1/Rate, 0 when the rate is infinite.
func (s Settings) MeanGap() time.Duration {
	if !s.Timed() {
		return 0
	}
	return time.Duration(float64(time.Second) / s.Rate)
}

// ParseRate reads a --request-rate value: a positive number or "inf".
func ParseRate(s string) (float64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" || t == "inf" || t == "+inf" {
		return math.Inf(1), nil
	}
	x, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 || x > config.MaxRate {
		return 0, fmt.Errorf("--request-rate must be a number in (0, %d] or inf (got %q)", config.MaxRate, s)
	}
	return x, nil
}

// FromConfig resolves the load settings of a run. For multi-round-chat
// --request-rate is a synonym of --mrc-qps (different values of both are
// an error) and, unless --arrival or --burstiness is given, its arrivals
// keep --mrc-arrival (fixed = constant). Errors name the flag.
func FromConfig(c *config.Config) (Settings, error) {
	given := c.Settings()
	g := given.Load
	s := Settings{
		Arrival:        g.Arrival,
		Burstiness:     g.Burstiness,
		MaxConcurrency: g.MaxConcurrency,
		RampUp:         g.RampUp,
		Seed:           int64(given.Seed),
		Shard:          c.Shard(),
	}
	rate, err := ParseRate(g.RequestRate)
	if err != nil {
		return s, err
	}
	s.Rate = rate
	if !(s.Burstiness > 0) || math.IsInf(s.Burstiness, 0) {
		return s, fmt.Errorf("--burstiness must be > 0 (got %v)", s.Burstiness)
	}
	if g.BurstinessGiven {
		if g.ArrivalGiven && s.Arrival != Gamma {
			return s, fmt.Errorf("--burstiness sets the shape of gamma arrivals; it cannot be used with --arrival %s", s.Arrival)
		}
		s.Arrival = Gamma
	}
	switch s.Arrival {
	case Poisson:
		s.Burstiness = 1
	case Constant, Gamma:
	default:
		return s, fmt.Errorf("--arrival must be one of constant, poisson, gamma (got %q)", s.Arrival)
	}
	if s.MaxConcurrency < 0 {
		return s, fmt.Errorf("--max-concurrency must be >= 1 (got %d)", s.MaxConcurrency)
	}
	if s.RampUp < 0 {
		return s, fmt.Errorf("--ramp-up must be >= 0 (got %s)", s.RampUp)
	}
	if r := config.RateOf(c.Workload()); r != nil {
		// The workload's own rate setting is the run's rate.
		qps := c.Float(r.Key)
		if s.Timed() && c.IsSet(r.Key) && qps != s.Rate {
			return s, fmt.Errorf("--request-rate %g and %s %g disagree: they are the same setting for %s, give one", s.Rate, r.Flag(), qps, c.Workload())
		}
		if !s.Timed() {
			s.Rate = qps
		}
		if !g.ArrivalGiven && !g.BurstinessGiven {
			s.Arrival, s.Burstiness = Constant, 1
			if r.Arrival(c) == Poisson {
				s.Arrival = Poisson
			}
		}
		s.SelfTimed = true
	}
	if s.SLO, err = ParseSLO(g.SLO); err != nil {
		return s, err
	}
	return s, nil
}

// SLO is a service-level objective: a request meets it when it succeeded
// and every limit that is set holds.
type SLO struct {
	TTFT, TPOT, E2E time.Duration // 0: not set
}

// ParseSLO reads --slo: comma-separated ttft=, tpot= (or itl=) and e2e=
// limits, each a Go duration. Empty means no SLO (nil).
func ParseSLO(s string) (*SLO, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var o SLO
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("--slo: %q is not name=duration (names: ttft, tpot, itl, e2e)", part)
		}
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("--slo: %s must be a duration > 0 such as 500ms (got %q)", k, v)
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "ttft":
			o.TTFT = d
		case "tpot", "itl":
			o.TPOT = d
		case "e2e":
			o.E2E = d
		default:
			return nil, fmt.Errorf("--slo: unknown figure %q (names: ttft, tpot, itl, e2e)", k)
		}
	}
	if o == (SLO{}) {
		return nil, fmt.Errorf("--slo: no limit given in %q (e.g. ttft=500ms,tpot=50ms,e2e=20s)", s)
	}
	return &o, nil
}

// String renders the SLO as --slo accepts it.
func (o *SLO) String() string {
	if o == nil {
		return ""
	}
	var parts []string
	for _, p := range []struct {
		k string
		d time.Duration
	}{{"ttft", o.TTFT}, {"tpot", o.TPOT}, {"e2e", o.E2E}} {
		if p.d > 0 {
			parts = append(parts, p.k+"="+p.d.String())
		}
	}
	return strings.Join(parts, ",")
}
