//go:build unix && !aix && !solaris

package runs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
)

// A run whose writer holds its folder's lock is running, in the list, in
// Read and Load, and in compare; it is not deleted. Once the writer ends
// without a summary the folder is incomplete, and deletable.
func TestRunInProgress(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)
	done := runstest.Write(t, dir, runstest.Spec{Name: "done", Started: t0, Requests: 5, Summary: true})
	w := runstest.Start(t, dir, runstest.Spec{Name: "live", Started: t0.Add(time.Hour), Requests: 4})

	rs, err := runs.List(dir)
	if err != nil || len(rs) != 2 {
		t.Fatalf("List: %+v %v", rs, err)
	}
	live := rs[0]
	if live.Dir != w.Dir() || live.Status() != runs.StatusRunning || !live.Running || live.Complete || live.Interrupted ||
		live.TotalRequests != 4 {
		t.Errorf("run in progress listed as %s: %+v", live.Status(), live)
	}
	if rs[1].Status() != runs.StatusOK || rs[1].Running {
		t.Errorf("finished run listed as %s", rs[1].Status())
	}
	if r, err := runs.Read(w.Dir()); err != nil || r.Status() != runs.StatusRunning {
		t.Errorf("Read: %+v %v", r, err)
	}
	d, err := runs.Load(w.Dir())
	if err != nil || d.Run.Status() != runs.StatusRunning || d.Run.Interrupted {
		t.Fatalf("Load: %+v %v", d, err)
	}
	od, err := runs.Load(done)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := runs.Compare(od, d).WriteText(&b); err != nil || !strings.Contains(b.String(), "(running)") {
		t.Errorf("compare text does not say running (%v):\n%s", err, b.String())
	}

	err = runs.Delete(w.Dir())
	if !errors.Is(err, runs.ErrRunning) || !strings.Contains(err.Error(), w.ID()) || !strings.Contains(err.Error(), "running") {
		t.Errorf("Delete of a run in progress: %v", err)
	}
	if err := runs.DeleteAny(w.Dir()); !errors.Is(err, runs.ErrRunning) {
		t.Errorf("DeleteAny of a run in progress: %v", err)
	}
	if _, err := os.Stat(filepath.Join(w.Dir(), record.RequestsFile)); err != nil {
		t.Fatalf("the run in progress lost its record: %v", err)
	}
	if err := runs.DeleteRefusal(&live); !errors.Is(err, runs.ErrRunning) {
		t.Errorf("DeleteRefusal of the listed run: %v", err)
	}
	if err := runs.DeleteRefusal(&rs[1]); err != nil {
		t.Errorf("DeleteRefusal of a finished run: %v", err)
	}

	// The writer ends without a summary: a crashed run's folder.
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := runs.Read(w.Dir())
	if err != nil || r.Status() != runs.StatusIncomplete || r.Running || !r.Interrupted || r.TotalRequests != 4 {
		t.Errorf("after the writer ended: %+v %v", r, err)
	}
	if err := runs.Delete(w.Dir()); err != nil {
		t.Errorf("Delete of an incomplete run: %v", err)
	}
}

// A run that writes its summary and then ends is ok; while it still holds
// the lock after the summary it is running.
func TestRunInProgressThenDone(t *testing.T) {
	dir := t.TempDir()
	w := runstest.Start(t, dir, runstest.Spec{Name: "live", Requests: 3})
	if err := w.WriteSummary(&record.Summary{SchemaVersion: record.SchemaVersion,
		Run: record.RunInfo{ID: w.ID(), Name: "live", StartedAt: "2026-03-01T11:00:00Z", FinishedAt: "2026-03-01T11:01:00Z"}}); err != nil {
		t.Fatal(err)
	}
	if r, _ := runs.Read(w.Dir()); r == nil || r.Status() != runs.StatusRunning || !r.Complete {
		t.Errorf("summary written, lock held: %+v", r)
	}
	w.Close()
	if r, _ := runs.Read(w.Dir()); r == nil || r.Status() != runs.StatusOK {
		t.Errorf("after Close: %+v", r)
	}
}

// A sweep in progress holds its folder's lock (bench/sweep); it is
// running, and neither it nor a sweep whose cell is being written is
// deleted.
func TestSweepInProgress(t *testing.T) {
	dir := t.TempDir()
	sd := runstest.WriteRecordedSweep(t, dir, runstest.RecordedSweep{Values: []float64{1, 2}, Unfinished: true})
	l, err := record.LockDir(sd)
	if err != nil {
		t.Fatal(err)
	}
	sw, err := runs.ListSweeps(dir)
	if err != nil || len(sw) != 1 || sw[0].Status() != runs.StatusRunning {
		t.Fatalf("sweep in progress: %+v %v", sw, err)
	}
	if err := runs.DeleteAny(sd); !errors.Is(err, runs.ErrRunning) {
		t.Errorf("DeleteAny of a sweep in progress: %v", err)
	}
	l.Unlock()
	if s := runs.ReadSweep(sd); s.Status() != runs.StatusIncomplete {
		t.Errorf("unlocked unfinished sweep: %s", s.Status())
	}

	// A cell being written (a sweep folder written without its own lock).
	cell := runstest.Start(t, filepath.Join(sd, record.SweepCellsDir), runstest.Spec{Folder: "03-rate-3", Requests: 1})
	if err := runs.DeleteSweep(sd); !errors.Is(err, runs.ErrRunning) {
		t.Errorf("DeleteSweep with a cell in progress: %v", err)
	}
	cell.Close()
	if err := runs.DeleteSweep(sd); err != nil {
		t.Errorf("DeleteSweep once its cells ended: %v", err)
	}
	if _, err := os.Stat(sd); !os.IsNotExist(err) {
		t.Errorf("sweep folder still there: %v", err)
	}
}
