//go:build unix && !aix && !solaris

package record

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/kvbench/kvbench/bench/sender"
)

// A writer holds its folder's lock from Create to Close; the lock file is
// gone afterwards, and what is written after Close still lands.
func TestWriterHoldsLock(t *testing.T) {
	out := t.TempDir()
	w, err := Create(out, "random-prefill", "", started)
	if err != nil {
		t.Fatal(err)
	}
	if !Locked(w.Dir()) {
		t.Fatal("a run being written is not locked")
	}
	if err := w.Append(&sender.Result{RequestID: "a", Phase: sender.PhaseMeasured}); err != nil {
		t.Fatal(err)
	}
	if !Locked(w.Dir()) {
		t.Fatal("the lock went with the first line")
	}
	// The lock file is not a line of the record.
	n, corrupt := 0, 0
	if corrupt, err = ReadRequests(w.Dir(), func(*sender.Result) error { n++; return nil }); err != nil || n != 1 || corrupt != 0 {
		t.Fatalf("read back %d lines, %d corrupt, %v", n, corrupt, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if Locked(w.Dir()) {
		t.Error("locked after Close")
	}
	if _, err := os.Lstat(filepath.Join(w.Dir(), LockFile)); !os.IsNotExist(err) {
		t.Errorf("lock file left after Close: %v", err)
	}
	if err := w.WriteSummary(&Summary{SchemaVersion: SchemaVersion}); err != nil {
		t.Errorf("summary after Close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// Only the record's own files are left.
	entries, _ := os.ReadDir(w.Dir())
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 2 || names[0] != SummaryFile || names[1] != RequestsFile {
		t.Errorf("folder holds %v", names)
	}
}

// A named folder (a sweep's cell) and a folder locked on its own (a
// sweep's) are locked the same way; Unlock is idempotent and nil-safe.
func TestLockDir(t *testing.T) {
	out := t.TempDir()
	w, err := CreateNamed(out, "01-rate-2")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if !Locked(w.Dir()) {
		t.Error("a sweep cell being written is not locked")
	}
	dir := t.TempDir()
	l, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !Locked(dir) {
		t.Error("LockDir: not locked")
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, LockFile+".*")); len(tmp) != 0 {
		t.Errorf("temporary lock files left: %v", tmp)
	}
	if err := l.Unlock(); err != nil || Locked(dir) {
		t.Errorf("Unlock: %v, locked %v", err, Locked(dir))
	}
	if err := l.Unlock(); err != nil {
		t.Errorf("second Unlock: %v", err)
	}
	var none *Lock
	if err := none.Unlock(); err != nil {
		t.Errorf("nil Unlock: %v", err)
	}
}

// A lock file that is free, not a regular file, or a symlink to a locked
// file does not make a run in progress; reading it never blocks.
func TestLockedHostile(t *testing.T) {
	free := t.TempDir()
	if err := os.WriteFile(filepath.Join(free, LockFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifo, LockFile), 0o644); err != nil {
		t.Fatal(err)
	}
	held := t.TempDir()
	l, err := LockDir(held)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	link := t.TempDir()
	if err := os.Symlink(filepath.Join(held, LockFile), filepath.Join(link, LockFile)); err != nil {
		t.Fatal(err)
	}
	dirLock := t.TempDir()
	if err := os.Mkdir(filepath.Join(dirLock, LockFile), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, dir := range map[string]string{"free": free, "fifo": fifo, "symlink": link, "directory": dirLock, "none": t.TempDir()} {
		if Locked(dir) {
			t.Errorf("%s lock file: read as locked", name)
		}
	}
	if !Locked(held) {
		t.Error("the held lock reads as free")
	}
}

// checkKilledLock: the OS released the lock of a writer killed with
// SIGKILL; its file stays, unlocked.
func checkKilledLock(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, LockFile)); err != nil {
		t.Errorf("lock file of the killed run: %v", err)
	}
	if Locked(dir) {
		t.Error("the folder of a killed run is still locked")
	}
}
