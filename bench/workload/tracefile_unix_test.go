//go:build unix

package workload

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/config"
)

// --tr-file must be a regular file: a FIFO (it hung), /dev/zero (it spun
// forever) or a directory is a usage error naming the flag, from the
// config's validation before anything starts, and from the workload.
func TestTraceReplayRefusesFilesThatAreNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "trace.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{fifo: "a FIFO", "/dev/zero": "a device", dir: "a directory"} {
		want := "--tr-file " + path + ": not a regular file (" + kind + ")"
		c := config.Default()
		c.Set("workload", config.TraceReplay)
		c.Set("tr_file", path)
		if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Validate, %s: %v", path, err)
		}
		for _, format := range []string{"auto", "mooncake"} {
			done := make(chan error, 1)
			go func() {
				_, err := New(context.Background(), traceParams(t, "http://127.0.0.1:1", 0, map[string]any{"tr_file": path, "tr_format": format}))
				done <- err
			}()
			select {
			case err := <-done:
				var unavailable *UnavailableError
				if err == nil || errors.As(err, &unavailable) || !strings.HasPrefix(err.Error(), want) {
					t.Errorf("New, %s, format %s: %v", path, format, err)
				}
			case <-time.After(time.Minute): // a guard against a hang, not a speed check
				t.Fatalf("New, %s, format %s: did not return", path, format)
			}
		}
	}
	// A missing file is the workload's to name; a regular one passes.
	for _, path := range []string{filepath.Join(dir, "missing.jsonl"), bailianTrace} {
		c := config.Default()
		c.Set("workload", config.TraceReplay)
		c.Set("tr_file", path)
		if err := c.Validate(); err != nil {
			t.Errorf("Validate, %s: %v", path, err)
		}
	}
}
