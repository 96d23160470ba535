// Package seriestest writes series folders for tests: run folders
// written by runstest under runs/NN, and series.json made from them by
// the code `kvbench run --repeat` uses.
package seriestest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
)

// Write creates <runsDir>/<stamp>-series-<workload>-<name> with n runs of
// spec (run i gets JitterSeed spec.JitterSeed+i and starts i minutes
// later) and returns its path.
func Write(tb testing.TB, runsDir, name string, n int, spec runstest.Spec) string {
	tb.Helper()
	if spec.Started.IsZero() {
		spec.Started = time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)
	}
	wl := spec.Workload
	if wl == "" {
		wl = "long-doc-qa"
	}
	id := record.FolderName("series-"+wl, name, spec.Started)
	dir := filepath.Join(runsDir, id)
	if err := os.MkdirAll(filepath.Join(dir, record.SeriesRunsDir), 0o755); err != nil {
		tb.Fatal(err)
	}
	f := &record.SeriesRecord{SchemaVersion: 1, Tool: record.Tool{Name: "kvbench", Version: "test"},
		Series: record.SeriesInfo{ID: id, Name: name, StartedAt: spec.Started.UTC().Format(time.RFC3339),
			FinishedAt: spec.Started.Add(time.Duration(n) * time.Minute).UTC().Format(time.RFC3339), Repeat: n}}
	for i := range n {
		s := spec
		s.Name, s.Folder = name, record.SeriesRunID(i)
		s.JitterSeed = spec.JitterSeed + uint64(i)
		s.Started = spec.Started.Add(time.Duration(i) * time.Minute)
		rd := runstest.Write(tb, filepath.Join(dir, record.SeriesRunsDir), s)
		sum, _ := record.ReadSummary(rd)
		e, err := runs.SeriesEntry(rd, s.Folder, s.ExitCode, sum)
		if err != nil {
			tb.Fatal(err)
		}
		f.Runs = append(f.Runs, e)
	}
	f.Summary = runs.SummariseSeries(f.Runs)
	if err := runs.WriteSeriesFile(dir, f); err != nil {
		tb.Fatal(err)
	}
	return dir
}
