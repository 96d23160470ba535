package bench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/simtest"
)

// A run whose measured requests failed is never met, and says so first
// (spec/workloads.md, "Verdicts count failures").
func TestVerdictCountsFailures(t *testing.T) {
	clean := simtest.Start(t, func(c *sim.Config) { c.Speed = 20 })
	sum, _ := loadRun(t, clean, nil)
	if e := record.WorkloadExpectation(sum); e == nil || e.Verdict != record.VerdictMet {
		t.Fatalf("without faults the expectation is %+v, want met", e)
	}

	faulty := simtest.Start(t, func(c *sim.Config) { c.Speed = 20; c.FaultHTTP500 = 0.3; c.FaultSeed = 3 })
	sum, _ = loadRun(t, faulty, nil)
	failed, total := sum.Results.FailedRequests, sum.Results.TotalRequests
	if failed == 0 || failed == total {
		t.Fatalf("%d of %d failed: the test needs both outcomes", failed, total)
	}
	e := record.WorkloadExpectation(sum)
	if e == nil || e.Verdict != record.VerdictNotMet {
		t.Fatalf("with %d of %d failed the expectation is %+v, want not_met", failed, total, e)
	}
	if want := fmt.Sprintf("%d of %d requests failed", failed, total); !strings.HasPrefix(e.Reason, want) {
		t.Fatalf("reason %q does not lead with %q", e.Reason, want)
	}
	if sum.Run.ExitCode != 1 {
		t.Fatalf("exit code %d, want 1", sum.Run.ExitCode)
	}
}

// An engine whose context is shorter than the prompts is warned about
// before the first request, in the summary's warnings, and the verdict
// says it.
func TestPlanWarnsOfAShortContext(t *testing.T) {
	url := simtest.Start(t, func(c *sim.Config) { c.Speed = 20; c.MaxModelLen = 30 })
	sum, _ := loadRun(t, url, nil)
	if len(sum.Warnings) != 1 || !strings.Contains(sum.Warnings[0], "longer than the engine's context of 30 tokens") {
		t.Fatalf("warnings %q", sum.Warnings)
	}
	e := record.WorkloadExpectation(sum)
	if e == nil || e.Verdict != record.VerdictNotMet || !strings.Contains(e.Reason, "before the run: random-prefill") {
		t.Fatalf("expectation %+v", e)
	}
}
