package visual_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report/visual"
	"github.com/kvbench/kvbench/bench/runs/runstest"
)

func sweepHTML(t *testing.T, dir, sd string) string {
	t.Helper()
	rep, err := visual.Open(dir, []string{sd})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.HTML(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// A rate list 2,5,10 whose every cell was held back by the workload's
// in-flight cap establishes no capacity: the page calls it a list, says
// no delivered value passed and names the values not delivered with
// their reason, and shows each cell's status and reasons.
func TestListSweepNothingDelivered(t *testing.T) {
	dir := t.TempDir()
	held := "held back by the in-flight cap of the workload"
	var cells []runstest.SweepCell
	var und []record.Undelivered
	for _, v := range []float64{2, 5, 10} {
		cells = append(cells, runstest.SweepCell{Value: v, Achieved: runstest.F(min(v, 5)), P50TTFTms: runstest.F(30), P99TTFTms: runstest.F(60),
			GoodFraction: runstest.F(1), Undelivered: true, Status: record.CellNotDelivered, Reasons: []string{held}})
		und = append(und, record.Undelivered{Value: v, Reason: held})
	}
	sd := runstest.WriteSweep(t, dir, runstest.SweepSpec{Name: "held", GoodputTarget: runstest.F(0.9), Cells: cells, UndeliveredAbove: und})
	html := sweepHTML(t, dir, sd)
	for _, want := range []string{"Highest passing value (list)",
		"no delivered value passed; not delivered, so not judged: 2 req/s (" + held + "), 5 req/s (" + held + "), 10 req/s (" + held + ")",
		"3 not delivered", ">not delivered<", held} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, bad := range []string{"Capacity (search)", ">10 req/s (good fraction"} {
		if strings.Contains(html, bad) {
			t.Errorf("page shows %q", bad)
		}
	}
	// Without --slo a list reports no highest value at all.
	plain := runstest.WriteSweep(t, dir, runstest.SweepSpec{Name: "plain", Cells: []runstest.SweepCell{{Value: 2, Status: record.CellDone}}})
	if html := sweepHTML(t, dir, plain); !strings.Contains(html, "Highest passing value (list)") || !strings.Contains(html, "n/a: no --slo") {
		t.Error("a list without --slo claims a value")
	}
}

// A search whose delivered cells passed up to 8 and whose 16 was not
// delivered reports "at least 8", names 16; a cell that was not
// sustained and a cut cell are warned about.
func TestSearchCapacityIsALowerBound(t *testing.T) {
	dir := t.TempDir()
	sd := runstest.WriteSweep(t, dir, runstest.SweepSpec{Name: "cap", Search: true, GoodputTarget: runstest.F(0.9), MaxValue: runstest.F(8), GoodFractionAtMax: runstest.F(0.95),
		UndeliveredAbove: []record.Undelivered{{Value: 16, Reason: "client overloaded: dispatch lag 40 ms"}},
		Cells: []runstest.SweepCell{
			{Value: 8, Achieved: runstest.F(7.9), GoodFraction: runstest.F(0.95), Status: record.CellPass},
			{Value: 16, Achieved: runstest.F(12), GoodFraction: runstest.F(0.95), Undelivered: true, Status: record.CellNotDelivered,
				Reasons: []string{"client overloaded: dispatch lag 40 ms"}},
			{Value: 12, Achieved: runstest.F(11.9), GoodFraction: runstest.F(0.97), Status: record.CellNotSustained,
				Reasons: []string{"not sustained: the engine completed 9.10 req/s, 76% of the 12 req/s target"}},
			{Value: 10, Achieved: runstest.F(9.9), GoodFraction: runstest.F(0.97), Status: record.CellCut,
				Reasons: []string{"the run record is incomplete"}},
		}})
	html := sweepHTML(t, dir, sd)
	for _, want := range []string{"Capacity (search)", "at least 8 req/s (good fraction 0.95); not delivered, so not judged: 16 req/s (client overloaded: dispatch lag 40 ms)",
		"the engine did not sustain the load in cell 12 req/s", "the run record of cell 10 req/s could not be written completely",
		"1 pass, 1 not sustained, 1 not delivered, 1 cut", ">not sustained<", ">cut<"} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
