//go:build unix

package runs_test

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/bench/sender"
)

// hostileDir is a runs directory where every folder but one is hostile.
func hostileDir(t *testing.T) (dir string, good, nulTail string) {
	t.Helper()
	dir = t.TempDir()
	day := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	good = filepath.Base(runstest.Write(t, dir, runstest.Spec{Name: "good", Started: day, Requests: 4, Summary: true}))

	// requests.jsonl is a FIFO nobody writes to: reading it would block.
	fifo := runstest.Write(t, dir, runstest.Spec{Name: "fifo", Started: day.Add(time.Second), Requests: 1})
	os.Remove(filepath.Join(fifo, record.RequestsFile))
	if err := syscall.Mkfifo(filepath.Join(fifo, record.RequestsFile), 0o644); err != nil {
		t.Fatal(err)
	}
	// requests.jsonl is a symlink to /dev/zero: endless NUL bytes.
	zero := runstest.Write(t, dir, runstest.Spec{Name: "zero", Started: day.Add(2 * time.Second), Requests: 1})
	os.Remove(filepath.Join(zero, record.RequestsFile))
	if err := os.Symlink("/dev/zero", filepath.Join(zero, record.RequestsFile)); err != nil {
		t.Fatal(err)
	}
	// The summary is a FIFO too, and the config a symlink loop.
	sfifo := runstest.Write(t, dir, runstest.Spec{Name: "sfifo", Started: day.Add(3 * time.Second), Requests: 2})
	if err := syscall.Mkfifo(filepath.Join(sfifo, record.SummaryFile), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(sfifo, record.ConfigFile))
	os.Symlink(record.ConfigFile, filepath.Join(sfifo, record.ConfigFile))
	// A summary holding null.
	null := runstest.Write(t, dir, runstest.Spec{Name: "null", Started: day.Add(4 * time.Second), Requests: 3})
	os.WriteFile(filepath.Join(null, record.SummaryFile), []byte("null\n"), 0o644)
	// Two good lines, then 300 MB of NUL bytes (sparse: no disk used).
	nt := runstest.Write(t, dir, runstest.Spec{Name: "nultail", Started: day.Add(5 * time.Second), Requests: 2})
	f, err := os.OpenFile(filepath.Join(nt, record.RequestsFile), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	if err := f.Truncate(fi.Size() + 300<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return dir, good, filepath.Base(nt)
}

// TestHostileFoldersNeverStopTheListing: FIFOs, devices, symlink loops,
// a null summary and a 300 MB NUL tail are each listed (incomplete where
// the summary is not an object), within bounded memory, and the good run
// is listed as complete.
func TestHostileFoldersNeverStopTheListing(t *testing.T) {
	dir, good, nulTail := hostileDir(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	done := make(chan struct{})
	var list []runs.Run
	var err error
	go func() {
		defer close(done)
		list, err = runs.List(dir)
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the listing hangs on a hostile folder")
	}
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 6 {
		t.Fatalf("%d runs listed, want all 6", len(list))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 100<<20 {
		t.Fatalf("listing allocated %d MB: a NUL tail or a device was read as data", alloc>>20)
	}
	byID := map[string]runs.Run{}
	for _, r := range list {
		byID[r.ID] = r
	}
	if r := byID[good]; !r.Complete || r.Status() != runs.StatusOK || r.TotalRequests != 4 {
		t.Errorf("good run: %+v", r)
	}
	for id, r := range byID {
		if id == good {
			continue
		}
		if r.Complete {
			t.Errorf("%s listed as complete (%s)", id, r.Status())
		}
	}
	if r := byID[nulTail]; r.TotalRequests != 2 || r.Corrupt != 1 {
		t.Errorf("NUL tail: %d requests, %d corrupt; want the 2 good lines and one torn tail", r.TotalRequests, r.Corrupt)
	}
}

// TestLoadAndIndexRefuseNonRegular: opening a hostile run in full or
// paging its requests ends with an error or a bounded result, never a
// hang or a read of a device.
func TestLoadAndIndexRefuseNonRegular(t *testing.T) {
	dir, _, nulTail := hostileDir(t)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		runs.Load(path)
		if x, err := runs.BuildIndex(t.Context(), path); err == nil && e.Name() == nulTail {
			if x.Len() != 2 || x.Corrupt != 1 {
				t.Errorf("NUL tail index: %d lines, %d corrupt", x.Len(), x.Corrupt)
			}
			if _, err := x.Window([]int32{0, 1}); err != nil {
				t.Errorf("window: %v", err)
			}
		}
		n := 0
		corrupt, _ := record.ReadRequests(path, func(*sender.Result) error { n++; return nil })
		if e.Name() == nulTail && (n != 2 || corrupt != 1) {
			t.Errorf("ReadRequests of the NUL tail: %d results, %d corrupt", n, corrupt)
		}
	}
}
