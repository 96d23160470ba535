package sim

import (
	"math/rand/v2"
	"sync"
)

// draw is everything random about one request, taken from one generator
// seeded by --fault-seed. Every request takes the same number of values in
// the same order whatever the flags say, so the n-th request's draws depend
// only on the seed and n.
type draw struct {
	HTTP500, Midstream, Truncate, Malformed, DropUsage, Stall, Nondeterministic bool
	// Where a mid-stream fault strikes, as a share of the reply in [0,1).
	MidstreamAt, TruncateAt, MalformedAt, StallAt float64
	// Nonce makes a sampled (temperature > 0, no seed) reply unique.
	Nonce uint64
}

type dice struct {
	mu  sync.Mutex
	rng *rand.Rand
	cfg Config
}

func newDice(cfg Config) *dice {
	seed := uint64(cfg.FaultSeed)
	return &dice{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), cfg: cfg}
}

func (d *dice) next() draw {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.cfg
	var u [12]float64
	for i := range u {
		u[i] = d.rng.Float64()
	}
	return draw{
		HTTP500:          u[0] < c.FaultHTTP500,
		Midstream:        u[1] < c.FaultMidstreamError,
		Truncate:         u[2] < c.FaultTruncate,
		Malformed:        u[3] < c.FaultMalformed,
		DropUsage:        u[4] < c.FaultDropUsage,
		Stall:            c.FaultStall > 0 && u[5] < c.FaultStallRate,
		Nondeterministic: u[6] < c.NondeterministicRate,
		MidstreamAt:      u[7],
		TruncateAt:       u[8],
		MalformedAt:      u[9],
		StallAt:          u[10],
		Nonce:            uint64(u[11] * (1 << 53)),
	}
}

// faultPoint turns a share into the number of tokens sent before a fault:
// at least one (the client has seen a first token), at most all of them.
func faultPoint(share float64, tokens int) int {
	if tokens <= 1 {
		return tokens
	}
	return 1 + int(share*float64(tokens))%tokens
}
