//go:build unix

package runs_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
)

// A hostile annotations.json (a FIFO, garbage) never blocks or breaks
// the listing: the run is listed with its recorded name.
func TestAnnotationsHostile(t *testing.T) {
	dir := t.TempDir()
	a := runstest.Write(t, dir, runstest.Spec{Name: "fifo", Requests: 3, Summary: true, Started: time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)})
	b := runstest.Write(t, dir, runstest.Spec{Name: "garbage", Requests: 3, Summary: true, Started: time.Date(2026, 3, 1, 13, 0, 0, 0, time.Local)})
	if err := syscall.Mkfifo(filepath.Join(a, runs.AnnotationsFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b, runs.AnnotationsFile), []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	list, err := runs.List(dir)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %v %v", list, err)
	}
	for _, r := range list {
		if r.Name != r.RecordedName || r.Note != "" || (r.Name != "fifo" && r.Name != "garbage") {
			t.Errorf("%s listed as %q, note %q", r.ID, r.Name, r.Note)
		}
	}
}
