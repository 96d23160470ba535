package record

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNewFolderNeverReuses: a taken name gets -2, -3, ...; an existing
// folder is never returned, and its contents are left alone.
func TestNewFolderNeverReuses(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(dir, "x", "kept")
	if err := os.WriteFile(keep, []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 2 {
		id, err := NewFolder(dir, "x")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, id)
	}
	if got[0] != "x-2" || got[1] != "x-3" {
		t.Errorf("ids %v, want [x-2 x-3]", got)
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "a" {
		t.Errorf("the taken folder was touched: %q %v", b, err)
	}
	if _, err := NewFolder(filepath.Join(dir, "missing", "deeper"), "y"); err == nil || err == ErrFolderNamesTaken {
		t.Errorf("a folder in a missing directory: %v, want mkdir's error", err)
	}
}

// A sweep's or series' folder is <stamp>-<kind>-<workload>[-<name>] under
// --output-dir (made if missing), numbered when taken; a failure names
// --output-dir.
func TestNewOutputFolder(t *testing.T) {
	root := filepath.Join(t.TempDir(), "runs")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	dir, id, err := NewOutputFolder(root, "sweep", "long-doc-qa", "a b", at)
	if err != nil || id != "20260102-030405-sweep-long-doc-qa-a-b" || dir != filepath.Join(root, id) {
		t.Fatalf("first: %q %q %v", dir, id, err)
	}
	if _, id2, err := NewOutputFolder(root, "sweep", "long-doc-qa", "a b", at); err != nil || id2 != id+"-2" {
		t.Fatalf("second: %q %v, want %s-2", id2, err, id)
	}
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	if _, _, err := NewOutputFolder(file, "series", "x", "", at); err == nil || !strings.HasPrefix(err.Error(), "--output-dir: ") {
		t.Fatalf("under a file: %v, want an error naming --output-dir", err)
	}
}
