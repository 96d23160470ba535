package workload

import (
	"fmt"
	"math"

	"github.com/kvbench/kvbench/config"
)

// WorkingSet is how a workload sized to a working-set size sends it
// (spec/load.md, "Working-set sweeps"): Count units (documents,
// sessions, pool entries, prefixes) of Unit distinct prompt tokens each,
// warmed once and then revisited in the workload's order.
type WorkingSet struct {
	// Tokens is Count x Unit: the distinct prompt the run keeps hot.
	Tokens int
	// Count units of Unit tokens each; What names a unit in words
	// ("documents").
	Count, Unit int
	What        string
	// Reusable is what one revisit can reuse from an unbounded cache, in
	// tokens; when 0, Fresh is what it cannot (the rest of its prompt is
	// reusable). IdealHitRatio turns either into a ratio.
	Reusable, Fresh int
}

// IdealHitRatio is the hit ratio of the revisits for a cache that never
// evicts, given their mean prompt tokens: Reusable / mean, else
// 1 - Fresh / mean, in [0, 1]; nil without a mean.
func (ws WorkingSet) IdealHitRatio(meanPrompt float64) *float64 {
	if !(meanPrompt > 0) || math.IsInf(meanPrompt, 0) {
		return nil
	}
	var r float64
	if ws.Reusable > 0 {
		r = float64(ws.Reusable) / meanPrompt
	} else {
		r = 1 - float64(ws.Fresh)/meanPrompt
	}
	r = math.Max(0, math.Min(1, r))
	return &r
}

// WorkingSetter is a workload whose working set can be sized: a sweep
// over working-set sizes (--sweep-working-set) sets each cell's config
// through it. Implementations work on a nil receiver: they read and set
// the config only.
type WorkingSetter interface {
	// SizeWorkingSet sets c (a cell's clone) so the workload keeps about
	// tokens distinct prompt tokens hot, tokensPerGB converting to the
	// GB figures its flags take, and says what it will send.
	SizeWorkingSet(c *config.Config, tokens float64, tokensPerGB int) (WorkingSet, error)
}

// units is how many units of unit tokens make about tokens (at least
// one, at most config.MaxCount), or an error naming the workload.
func units(name string, tokens float64, unit int, what string) (int, error) {
	if unit <= 0 {
		return 0, fmt.Errorf("%s: a %s of %d tokens cannot size a working set", name, what, unit)
	}
	n := math.Round(tokens / float64(unit))
	if n > config.MaxCount {
		return 0, fmt.Errorf("%s: a working set of %.0f tokens is %.0f %ss of %d tokens, over the limit of %d", name, tokens, n, what, unit, config.MaxCount)
	}
	return max(int(n), 1), nil
}

// volumeFor is the --kv-cache-volume in GB that sizes n units of unit
// tokens at tokensPerGB, a hair over so int() in the workload's own
// sizing gives back n.
func volumeFor(n, unit, tokensPerGB int) float64 {
	return (float64(n) + 0.5) * float64(unit) / float64(tokensPerGB)
}
