package form

import (
	"strings"
	"testing"

	bsweep "github.com/kvbench/kvbench/bench/sweep"
)

// The form's Sweep choice offers the working-set dimension: its list is
// of sizes in tokens (GB at the run's tokens per GB), it needs no SLO,
// and the target field is its hit target.
func TestSweepKindWorkingSet(t *testing.T) {
	found := 0
	for _, k := range sweepKinds {
		if isWorkingSet(k) {
			found++
			if dimensionOf(k) != bsweep.WorkingSet || listFlagOf(k) != "sweep-working-set" || targetFlag(k) != "hit-target" {
				t.Errorf("%s: %s %s %s", k, dimensionOf(k), listFlagOf(k), targetFlag(k))
			}
		}
	}
	if found != 2 || !isSearch(sweepWSSearch) || isSearch(sweepWSList) {
		t.Fatalf("working-set kinds: %d", found)
	}
	v, err := parseList(sweepWSList, "10k:40k:x2,1GB", 5000)
	if err != nil || len(v) != 4 || v[3] != 5000 {
		t.Fatalf("%v %v", v, err)
	}
	if _, err := parseList(sweepRateList, "10k", 5000); err == nil {
		t.Error("a rate list takes a size")
	}
	if _, err := parseList(sweepWSList, "1GB", 0); err == nil || !strings.Contains(err.Error(), "--sweep-working-set") {
		t.Errorf("GB without tokens per GB: %v", err)
	}
}
