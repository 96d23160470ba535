package visual

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/sweep"
)

// A sweep.json as the sweep writes it reads back cell for cell, and its
// cells' run folders are found by run id under cells/.
func TestReadsTheSweepsOwnFile(t *testing.T) {
	dir := t.TempDir()
	sd := filepath.Join(dir, "20260302-090000-sweep-long-doc-qa")
	cells := filepath.Join(sd, record.SweepCellsDir)
	os.MkdirAll(cells, 0o755)
	rd := writeRun(t, cells, fixture{name: "c1", n: 20, coldTTFT: 100, itlMs: 10})
	id := filepath.Base(rd)
	good, target := 0.95, 0.9
	yes := true
	f := sweep.File{
		SchemaVersion: 1, Tool: record.Tool{Name: "kvbench", Version: "test"},
		Sweep: sweep.Info{ID: filepath.Base(sd), Name: "n", Dimension: "concurrency", Values: []float64{4}, GoodputTarget: &target},
		Cells: []sweep.Cell{{Value: 4, RunID: id, AchievedRate: fp(3.5), MeanConcurrency: fp(3.9), Delivered: &yes,
			TotalRequests: 20, P50TTFTms: fp(90), P99TTFTms: fp(140), OutputThroughput: 500, GoodFraction: &good}},
		Result: &sweep.Result{MaxValue: fp(4), GoodFractionAtMax: &good},
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(sd, record.SweepFile), b, 0o644)
	s, err := LoadSweep(sd)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Cells[0]
	if len(s.Cells) != 1 || c.Value != 4 || c.RunID != id || *s.loadAxis(c) != 3.9 || *c.GoodFraction != 0.95 || *c.P99TTFTms != 140 {
		t.Errorf("cells %+v", s.Cells)
	}
	if s.Dimension != "concurrency" || s.MaxValue == nil || *s.MaxValue != 4 || s.GoodputTarget == nil || len(s.runs) != 1 {
		t.Errorf("sweep %+v (%d cell runs)", s, len(s.runs))
	}
}
