package runstest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// SweepCell is one cell of a generated sweep. Nil figures are null.
type SweepCell struct {
	Value                float64
	Achieved             *float64 // achieved rate (rate sweeps) or mean concurrency
	P50TTFTms, P99TTFTms *float64
	GoodFraction         *float64
	Undelivered          bool
	FailedRequests       int
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
	id := s.Started.Format("20060102-150405") + "-sweep-" + s.Workload
	if s.Name != "" {
		id += "-" + s.Name
	}
	sd := filepath.Join(runsDir, id)
	cellsDir := filepath.Join(sd, "cells")
	if err := os.MkdirAll(cellsDir, 0o755); err != nil {
		tb.Fatal(err)
	}
	var cells, values []any
	for i, c := range s.Cells {
		runID := fmt.Sprintf("%02d-%s-%s", i+1, s.Dimension, strconv.FormatFloat(c.Value, 'f', -1, 64))
		rd := Write(tb, cellsDir, Spec{Name: runID, Workload: s.Workload, Started: s.Started.Add(time.Duration(i) * time.Minute),
			Requests: 10, Summary: true})
		if err := os.Rename(rd, filepath.Join(cellsDir, runID)); err != nil {
			tb.Fatal(err)
		}
		cell := map[string]any{
			"value": c.Value, "run_id": runID, "target_rate": nil, "achieved_rate": nil, "mean_concurrency": nil,
			"delivered": !c.Undelivered, "total_requests": 10, "failed_requests": c.FailedRequests,
			"p50_ttft_ms": c.P50TTFTms, "p99_ttft_ms": c.P99TTFTms, "mean_tpot_ms": nil, "output_throughput": 100,
			"hit_ratio": nil, "good_fraction": c.GoodFraction, "goodput_rps": nil,
		}
		if s.Dimension == "rate" {
			cell["target_rate"], cell["achieved_rate"] = c.Value, c.Achieved
		} else {
			cell["mean_concurrency"] = c.Achieved
		}
		cells = append(cells, cell)
		values = append(values, c.Value)
	}
	var result any
	if s.MaxValue != nil {
		result = map[string]any{"max_value": *s.MaxValue, "good_fraction_at_max": s.GoodFractionAtMax}
	}
	var slo any
	if s.GoodputTarget != nil {
		slo = map[string]any{"ttft_ms": 500, "tpot_ms": nil, "e2e_ms": nil}
	}
	doc := map[string]any{
		"schema_version": 1,
		"tool":           map[string]any{"name": "kvbench", "version": "test"},
		"sweep": map[string]any{"id": id, "name": s.Name, "started_at": s.Started.UTC().Format(time.RFC3339),
			"finished_at": s.Started.Add(time.Hour).UTC().Format(time.RFC3339), "interrupted": s.Interrupted,
			"dimension": s.Dimension, "values": values, "search": s.Search, "goodput_target": s.GoodputTarget, "slo": slo},
		"cells":  cells,
		"result": result,
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sd, "sweep.json"), b, 0o644); err != nil {
		tb.Fatal(err)
	}
	return sd
}
