package home

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/stats"
	"github.com/kvbench/kvbench/config"
)

func writeRun(t *testing.T, dir, workload, name string, started time.Time, sum *record.Summary) string {
	t.Helper()
	w, err := record.Create(dir, workload, name, started)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if sum != nil {
		cfg := config.Default()
		cfg.SetString("workload", workload)
		sum.Config = record.SummaryConfig(cfg, "builtin", w.Dir())
		sum.Run.StartedAt = started.UTC().Format(time.RFC3339)
		sum.Run.Name = name
		if err := w.WriteSummary(sum); err != nil {
			t.Fatal(err)
		}
	}
	return w.Dir()
}

func TestRecentRuns(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)
	hit := 0.75
	for i := range 7 {
		writeRun(t, dir, config.LongDocQA, "", base.Add(time.Duration(i)*time.Minute), &record.Summary{
			Results: stats.Results{SuccessfulRequests: 10 + i, FailedRequests: i % 2, MeanTTFTms: ptrTo(float64(100 + i))},
			Cache:   stats.Cache{HitRatio: &hit},
		})
	}
	// The newest: a crash (no summary), then one interrupted, with a name.
	writeRun(t, dir, config.CacheProbe, "", base.Add(9*time.Minute), nil)
	writeRun(t, dir, config.MultiRoundChat, "a100", base.Add(8*time.Minute), &record.Summary{Run: record.RunInfo{Interrupted: true}})
	os.MkdirAll(filepath.Join(dir, "not-a-run"), 0o755)

	runs, err := RecentFrom(dir, RecentRuns)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != RecentRuns {
		t.Fatalf("%d runs, want %d", len(runs), RecentRuns)
	}
	if r := runs[0]; r.Complete || r.Workload != config.CacheProbe {
		t.Errorf("newest: %+v, want the incomplete cache-probe", r)
	}
	if r := runs[1]; !r.Interrupted || r.Name != "a100" || r.Workload != config.MultiRoundChat {
		t.Errorf("second: %+v", r)
	}
	r := runs[2] // the 7th long-doc-qa run (i = 6)
	if !r.Complete || r.OK != 16 || r.Failed != 0 || r.MeanTTFTms == nil || *r.MeanTTFTms != 106 || r.HitRatio == nil || *r.HitRatio != 0.75 ||
		!r.Started.Equal(base.Add(6*time.Minute)) || r.Workload != config.LongDocQA {
		t.Errorf("third: %+v", r)
	}
	if runs, err := RecentFrom(filepath.Join(dir, "missing"), 5); err != nil || len(runs) != 0 {
		t.Errorf("missing dir: %v %v", runs, err)
	}
}

func ptrTo(v float64) *float64 { return &v }

// A run still being written is `running` on the home screen, not
// `incomplete`; once its writer has closed it is incomplete.
func TestRecentRunRunning(t *testing.T) {
	dir := t.TempDir()
	w, err := record.Create(dir, config.LongDocQA, "", time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	list, err := RecentFrom(dir, RecentRuns)
	if err != nil || len(list) != 1 || !list[0].Running {
		t.Fatalf("while written: %+v, %v", list, err)
	}
	m := New(testCommon(100, 30))
	if line := m.runLine(list[0], false); !strings.Contains(line, "running") || strings.Contains(line, "incomplete") {
		t.Errorf("line %q", line)
	}
	w.Close()
	if list, _ = RecentFrom(dir, RecentRuns); list[0].Running {
		t.Errorf("after Close: still running")
	}
	if line := m.runLine(list[0], false); !strings.Contains(line, "incomplete") {
		t.Errorf("after Close: line %q", line)
	}
}
