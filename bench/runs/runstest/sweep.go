package runstest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
)

// SweepCell is one cell of a generated sweep. Nil figures are null.
type SweepCell struct {
	Value                float64
	Achieved             *float64 // achieved rate (rate sweeps) or mean concurrency
	P50TTFTms, P99TTFTms *float64
	GoodFraction         *float64
	Undelivered          bool
	FailedRequests       int
	// Status and Reasons as the sweep records them ("" and nil: a
	// sweep.json written before cells had a status).
	Status  string
	Reasons []string
}

// SweepSpec describes a sweep folder as `kvbench sweep` writes it.
type SweepSpec struct {
	Name      string
	Workload  string // default long-doc-qa
	Dimension string // default rate
	Started   time.Time
	Cells     []SweepCell
	// GoodputTarget is null without an SLO; MaxValue is the result's
	// max_value (nil: result null).
	GoodputTarget, MaxValue, GoodFractionAtMax *float64
	Search, Interrupted                        bool
	// UndeliveredAbove is the result's undelivered_above (a result with
	// a nil MaxValue is written when it is set).
	UndeliveredAbove []record.Undelivered
}

// F is a figure for a SweepCell.
func F(v float64) *float64 { return &v }

// WriteSweep writes the sweep folder of s under runsDir (sweep.json and
// one run folder per cell under cells/) and returns its path.
func WriteSweep(tb testing.TB, runsDir string, s SweepSpec) string {
	tb.Helper()
	s.Workload = orStr(s.Workload, "long-doc-qa")
	s.Dimension = orStr(s.Dimension, "rate")
	if s.Started.IsZero() {
		s.Started = time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)
	}
	id := record.FolderName("sweep-"+s.Workload, s.Name, s.Started)
	sd := filepath.Join(runsDir, id)
	f := &record.SweepSummary{SchemaVersion: 1, Tool: record.Tool{Name: "kvbench", Version: "test"},
		Sweep: record.SweepInfo{ID: id, Name: s.Name, StartedAt: s.Started.UTC().Format(time.RFC3339),
			FinishedAt: s.Started.Add(time.Hour).UTC().Format(time.RFC3339), Interrupted: s.Interrupted,
			Dimension: s.Dimension, Values: []float64{}, Search: s.Search, GoodputTarget: s.GoodputTarget},
		Cells: []record.SweepCell{}}
	for i, c := range s.Cells {
		runID := fmt.Sprintf("%02d-%s-%s", i+1, s.Dimension, strconv.FormatFloat(c.Value, 'f', -1, 64))
		Write(tb, filepath.Join(sd, record.SweepCellsDir), Spec{Folder: runID, Name: runID, Workload: s.Workload,
			Started: s.Started.Add(time.Duration(i) * time.Minute), Requests: 10, Summary: true})
		delivered := !c.Undelivered
		cell := record.SweepCell{Value: c.Value, RunID: runID, Delivered: &delivered, TotalRequests: 10,
			FailedRequests: c.FailedRequests, P50TTFTms: c.P50TTFTms, P99TTFTms: c.P99TTFTms, OutputThroughput: 100,
			GoodFraction: c.GoodFraction, Status: c.Status, Reasons: c.Reasons}
		if s.Dimension == "rate" {
			cell.TargetRate, cell.AchievedRate = F(c.Value), c.Achieved
		} else {
			cell.MeanConcurrency = c.Achieved
		}
		f.Cells = append(f.Cells, cell)
		f.Sweep.Values = append(f.Sweep.Values, c.Value)
	}
	if s.MaxValue != nil || s.UndeliveredAbove != nil {
		f.Result = &record.SweepResult{MaxValue: s.MaxValue, GoodFractionAtMax: s.GoodFractionAtMax, UndeliveredAbove: s.UndeliveredAbove}
	}
	if s.GoodputTarget != nil {
		f.Sweep.SLO = &load.SLOms{TTFTms: F(500)}
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sd, record.SweepFile), b, 0o644); err != nil {
		tb.Fatal(err)
	}
	return sd
}

// TwoSweeps writes two sweeps under a new directory for the comparison
// tests: a list sweep "base" over 2, 4, 8 (the 8 cell not delivered) and,
// an hour later, a search "cache" over 4, 8, 16 that is faster at 4 and
// 8; both with a goodput target of 90%.
func TwoSweeps(t testing.TB, started time.Time) (dir, a, b string) {
	t.Helper()
	dir = t.TempDir()
	a = WriteSweep(t, dir, SweepSpec{Name: "base", Started: started, GoodputTarget: F(0.9), MaxValue: F(4), GoodFractionAtMax: F(0.95),
		Cells: []SweepCell{
			{Value: 2, Achieved: F(1.98), P50TTFTms: F(40), P99TTFTms: F(100), GoodFraction: F(1)},
			{Value: 4, Achieved: F(3.9), P50TTFTms: F(60), P99TTFTms: F(200), GoodFraction: F(0.95)},
			{Value: 8, Achieved: F(5.5), P50TTFTms: F(300), P99TTFTms: F(900), GoodFraction: F(0.4), Undelivered: true},
		}})
	b = WriteSweep(t, dir, SweepSpec{Name: "cache", Started: started.Add(time.Hour), GoodputTarget: F(0.9), MaxValue: F(8), GoodFractionAtMax: F(0.92), Search: true,
		Cells: []SweepCell{
			{Value: 4, Achieved: F(3.95), P50TTFTms: F(30), P99TTFTms: F(150), GoodFraction: F(1)},
			{Value: 8, Achieved: F(7.8), P50TTFTms: F(50), P99TTFTms: F(450), GoodFraction: F(0.92)},
			{Value: 16, Achieved: F(12), P50TTFTms: F(400), P99TTFTms: F(2000), GoodFraction: F(0.1)},
		}})
	return dir, a, b
}
