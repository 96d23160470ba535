package record

import (
	"os"
	"path/filepath"
	"testing"
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
