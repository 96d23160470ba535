package runs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
)

// A sweep folder is one row: its workload and model from its cells, the
// cells' request totals, how many cells, list or search, and the highest
// passing value; its cells are not rows of their own.
func TestListSweeps(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)
	runstest.Write(t, dir, runstest.Spec{Name: "plain", Started: t0, Requests: 5, Summary: true})
	search := runstest.WriteRecordedSweep(t, dir, runstest.RecordedSweep{Name: "cap", Started: t0.Add(time.Hour), Values: []float64{4, 8, 16, 12},
		Search: true, SLO: true, PassUpTo: 12, FailIn: 3})
	list := runstest.WriteRecordedSweep(t, dir, runstest.RecordedSweep{Workload: "long-doc-qa", Started: t0.Add(2 * time.Hour), Dimension: "concurrency",
		Values: []float64{1, 2}, Unfinished: true})

	rs, err := runs.List(dir)
	if err != nil || len(rs) != 1 || rs[0].Name != "plain" {
		t.Fatalf("runs.List lists sweeps or their cells: %+v %v", rs, err)
	}
	sw, err := runs.ListSweeps(dir)
	if err != nil || len(sw) != 2 {
		t.Fatalf("ListSweeps: %+v %v", sw, err)
	}
	l, s := sw[0], sw[1] // newest first
	if l.Dir != list || s.Dir != search {
		t.Fatalf("order: %s, %s", l.ID, s.ID)
	}
	if s.Sweep == nil || s.Sweep.Cells != 4 || !s.Sweep.Search || s.Sweep.MaxValue == nil || *s.Sweep.MaxValue != 12 || !s.Sweep.SLO {
		t.Errorf("search sweep: %+v", s.Sweep)
	}
	if s.Name != "cap" || s.Workload != "random-prefill" || s.Model != "sim-model" || s.EngineHost() != "127.0.0.1:8000" {
		t.Errorf("search sweep identity: %q %q %q %q", s.Name, s.Workload, s.Model, s.EngineHost())
	}
	if s.TotalRequests != 40 || s.FailedRequests != 2 || s.Status() != runs.StatusFailed || !s.StartedAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("search sweep totals: %d/%d, status %s, started %v", s.TotalRequests, s.FailedRequests, s.Status(), s.StartedAt)
	}
	if got := s.Sweep.Describe(80); got != "sweep of 4 cells (capacity search over rate), max rate 12 req/s" {
		t.Errorf("describe: %q", got)
	}
	if got := s.Sweep.Describe(24); got != "sweep 4 cells, max 12" {
		t.Errorf("describe in 24: %q", got)
	}
	if l.Sweep.Cells != 2 || l.Sweep.Search || l.Sweep.MaxValue != nil || l.Workload != "long-doc-qa" || l.Status() != runs.StatusIncomplete {
		t.Errorf("unfinished list sweep: %+v %+v %s", l, l.Sweep, l.Status())
	}
	if got := l.Sweep.Describe(80); got != "sweep of 2 cells (list over concurrency)" {
		t.Errorf("describe: %q", got)
	}

	// A sweep is renamed and annotated like a run.
	if _, err := runs.WriteAnnotations(search, runs.Annotations{Name: "capacity, prefix cache on", Note: "before the upgrade"}, annotatedAt); err != nil {
		t.Fatal(err)
	}
	if r := runs.ReadSweep(search); r.Name != "capacity, prefix cache on" || r.RecordedName != "cap" || r.Note != "before the upgrade" {
		t.Errorf("annotated sweep: %q %q %q", r.Name, r.RecordedName, r.Note)
	}

	// An unreadable sweep.json is still a row, with its error.
	bad := filepath.Join(dir, "20260301-150000-sweep-kv-tier-pressure-x")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, record.SweepFile), []byte("{"), 0o644)
	if r := runs.ReadSweep(bad); r.Err == nil || r.Workload != "kv-tier-pressure" || r.Status() != runs.StatusIncomplete || r.StartedAt.Hour() != 15 {
		t.Errorf("broken sweep: %+v", r)
	}
}

func TestDeleteSweep(t *testing.T) {
	dir := t.TempDir()
	run := runstest.Write(t, dir, runstest.Spec{Name: "plain", Requests: 3, Summary: true})
	sw := runstest.WriteRecordedSweep(t, dir, runstest.RecordedSweep{Values: []float64{1, 2}})
	if err := runs.DeleteSweep(run); err == nil || !strings.Contains(err.Error(), "not a sweep folder") {
		t.Errorf("DeleteSweep on a run: %v", err)
	}
	if err := runs.Delete(sw); err == nil {
		t.Errorf("Delete (runs only) removed a sweep folder")
	}
	if err := runs.DeleteAny(sw); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sw); !os.IsNotExist(err) {
		t.Errorf("sweep folder still there: %v", err)
	}
	if err := runs.DeleteAny(run); err != nil {
		t.Fatal(err)
	}
	if err := runs.DeleteAny(t.TempDir()); err == nil {
		t.Errorf("DeleteAny removed a folder that is neither")
	}
}

// A sweep's row never claims a value it could not deliver: it names the
// values not delivered above the highest passing one, or that nothing
// delivered passed; a cut sweep says where it stopped and is failed.
func TestSweepRowUndeliveredAndCut(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)
	held := []runstest.SweepCell{
		{Value: 2, Undelivered: true, GoodFraction: runstest.F(1), Status: record.CellNotDelivered, Reasons: []string{"held back"}},
		{Value: 5, Undelivered: true, GoodFraction: runstest.F(1), Status: record.CellNotDelivered, Reasons: []string{"held back"}},
		{Value: 10, Undelivered: true, GoodFraction: runstest.F(1), Status: record.CellNotDelivered, Reasons: []string{"held back"}},
	}
	none := runstest.WriteSweep(t, dir, runstest.SweepSpec{Name: "held", Started: t0, GoodputTarget: runstest.F(0.9), Cells: held,
		UndeliveredAbove: []record.Undelivered{{Value: 2, Reason: "held back"}, {Value: 5, Reason: "held back"}, {Value: 10, Reason: "held back"}}})
	r := runs.ReadSweep(none)
	if r.Sweep.MaxValue != nil || len(r.Sweep.Undelivered) != 3 {
		t.Fatalf("row %+v", r.Sweep)
	}
	if got := r.Sweep.Describe(80); got != "sweep of 3 cells (list over rate), not delivered at 2,5,10 req/s" {
		t.Errorf("describe: %q", got)
	}
	if got := r.Sweep.Describe(30); got != "sweep 3 cells, not delivered" {
		t.Errorf("describe in 30: %q", got)
	}
	cut := runstest.WriteSweep(t, dir, runstest.SweepSpec{Name: "cut", Search: true, Started: t0.Add(time.Hour), GoodputTarget: runstest.F(0.9),
		MaxValue: runstest.F(32), GoodFractionAtMax: runstest.F(1), UndeliveredAbove: []record.Undelivered{{Value: 64, Reason: "client overloaded"}},
		Cells: []runstest.SweepCell{
			{Value: 32, GoodFraction: runstest.F(1), Status: record.CellPass},
			{Value: 64, Undelivered: true, GoodFraction: runstest.F(1), Status: record.CellNotDelivered, Reasons: []string{"client overloaded"}},
			{Value: 48, GoodFraction: runstest.F(1), Status: record.CellCut, Reasons: []string{"the run record is incomplete"}},
		}})
	r = runs.ReadSweep(cut)
	if got := r.Sweep.Describe(120); got != "sweep of 3 cells (capacity search over rate), max rate 32 req/s, 64 not delivered, cut at 48 (record incomplete)" {
		t.Errorf("describe: %q", got)
	}
	if r.Status() != runs.StatusFailed || r.ExitCode != 4 {
		t.Errorf("a cut sweep's status %s (exit %d)", r.Status(), r.ExitCode)
	}
}
