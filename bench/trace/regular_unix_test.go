//go:build unix

package trace

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A trace must be a regular file: a FIFO would block the open or the
// read, /dev/zero never ends, a directory is no trace. Each is refused
// at once, naming the flag.
func TestTraceFileMustBeRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "trace.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{fifo: "a FIFO", "/dev/zero": "a device", dir: "a directory"} {
		done := make(chan [2]error, 1)
		go func() {
			_, derr := Detect(path)
			r, oerr := Open(path, Mooncake, 512)
			if oerr == nil {
				r.Close()
			}
			done <- [2]error{derr, oerr}
		}()
		var errs [2]error
		select {
		case errs = <-done:
		case <-time.After(time.Minute): // a guard against a hang, not a speed check
			t.Fatalf("%s: opening it did not return", path)
		}
		for i, err := range errs {
			if !errors.Is(err, ErrNotRegular) || !strings.HasPrefix(err.Error(), "--tr-file "+path+": not a regular file ("+kind+")") {
				t.Errorf("%s (%s): error %d %v", path, kind, i, err)
			}
		}
	}
}
