package workload

import (
	"sort"

	"github.com/kvbench/kvbench/config"
)

// Kind is one workload as the rest of kvbench sees it before it is
// built: how to build it and what it answers from its settings alone.
// Each workload's file registers its Kind (Register); preparation, the
// runner, merge, the sweep and the form ask the Kind and never compare a
// workload's name. Its settings rows, rate setting and cross-setting
// rules are its config.WorkloadSpec.
type Kind struct {
	Name string
	// New builds it from resolved parameters.
	New Factory
	// Rebuildable: kvbench merge rebuilds its outcome from its record;
	// it is an Observer and New honours Params.FromRecord. Any other is
	// never built from a record, so no file its config names (a prompt
	// file, a dataset) is opened then.
	Rebuildable bool
	// Estimate sizes its plan from its settings with float arithmetic,
	// so absurd values are seen before anything is built; nil when its
	// size is bounded by its flags' ranges alone.
	Estimate func(c *config.Config, tokensPerGB int) Plan
	// WorkingSet sizes its working set for a working-set sweep; nil when
	// it cannot be swept so.
	WorkingSet WorkingSetter
	// NeedsL1 reports whether preparation reads the LMCache server's
	// first-tier capacity for it (Params.L1GB); nil means never.
	NeedsL1 func(c *config.Config) bool
	// BuiltinLowerTierGB is the CPU tier in GB the built-in engine starts
	// with for it (0: its GPU tier alone).
	BuiltinLowerTierGB float64
}

var kinds = map[string]Kind{}

// Register adds a workload's Kind; each workload file registers its own.
// A later registration of the same name replaces the earlier one.
func Register(k Kind) { kinds[k.Name] = k }

// KindOf is the named workload's Kind.
func KindOf(name string) (Kind, bool) {
	k, ok := kinds[name]
	return k, ok
}

// Registered reports whether a workload has an implementation.
func Registered(name string) bool { _, ok := kinds[name]; return ok }

// NeedsL1 reports whether preparation reads the LMCache server's
// first-tier capacity for c's workload.
func NeedsL1(c *config.Config) bool {
	k := kinds[c.Workload()]
	return k.NeedsL1 != nil && k.NeedsL1(c)
}

// BuiltinLowerTierGB is the CPU tier the built-in engine starts with for
// workload.
func BuiltinLowerTierGB(workload string) float64 { return kinds[workload].BuiltinLowerTierGB }

// WorkingSetterOf is the named workload's WorkingSetter, ok false when
// it has none.
func WorkingSetterOf(name string) (WorkingSetter, bool) {
	ws := kinds[name].WorkingSet
	return ws, ws != nil
}

// WorkingSetWorkloads are the workloads a working-set sweep can size,
// sorted.
func WorkingSetWorkloads() []string {
	var out []string
	for n, k := range kinds {
		if k.WorkingSet != nil {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
