package sweep

import (
	"strings"
	"testing"

	"github.com/kvbench/kvbench/bench/record"
	bsweep "github.com/kvbench/kvbench/bench/sweep"
	"github.com/kvbench/kvbench/screens/screentest"
)

// A working-set sweep's screen: hit ratio and reused TTFT p50 against
// the working set, the table's working-set columns, and the found and
// declared capacities named in the legend and the result.
func TestWorkingSetScreen(t *testing.T) {
	m := New(screentest.Common(120, 32, screentest.Now), Info{Workload: "long-doc-qa", Dimension: bsweep.WorkingSet, Values: []float64{10000}, Search: true, MaxCells: 24}, nil)
	m.SetSize(120, 32)
	cell := func(tok, hit, reused float64, status string) bsweep.Cell {
		return bsweep.Cell{Value: tok, HitRatio: f(hit), P99TTFTms: f(reused * 2), Status: status,
			WorkingSetCell: &record.WorkingSetCell{WorkingSetTokens: tok, IdealHitRatio: f(0.98), ReusedTTFTP50ms: f(reused), Units: int(tok / 2000), UnitTokens: 2000, Unit: "documents"}}
	}
	for i, c := range []bsweep.Cell{cell(10000, 0.98, 8, record.CellPass), cell(40000, 0.98, 9, record.CellPass),
		cell(80000, 0.98, 80, record.CellPass), cell(320000, 0.33, 180, record.CellFail)} {
		m.apply(Event{Kind: CellDone, Index: i, Cell: c})
	}
	if v := m.View(); !strings.Contains(v, "passing so far 80000") {
		t.Errorf("while running:\n%s", v)
	}
	res := &bsweep.Result{WorkingSetResult: &record.WorkingSetResult{CapacityTokens: f(80000), FastTierTokens: f(40000),
		Declared: &record.Declared{Source: "engine /status tiers", GPUTokens: f(40000), CPUTokens: f(120000), TotalTokens: f(160000)}}}
	m.apply(Event{Kind: Done, Code: 0, Dir: "/runs/x-sweep", File: &bsweep.File{Result: res}})
	v := m.View()
	for _, want := range []string{"hit ratio (%)", "●─ observed", "○⠒ ideal", "reused TTFT p50 (ms)", "WORKING SET", "REUSED P50",
		"320000", "33.0", "180.0", "┆ capacity 80000, fast tier 40000", "┆ declared total 160000, GPU 40000",
		"capacity 80000 tokens, fast tier 40000; declared 160000 (GPU 40000)"} {
		if !strings.Contains(v, want) {
			t.Errorf("%q missing:\n%s", want, v)
		}
	}
	for _, sz := range [][2]int{{40, 12}, {60, 20}, {250, 80}} {
		m.SetSize(sz[0], sz[1])
		if out := m.View(); out == "" {
			t.Errorf("%v: empty", sz)
		}
	}
}
