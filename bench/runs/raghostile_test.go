//go:build unix

package runs_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/config"
)

// A hostile rag_qa_quality.json (a FIFO, endless zeros, millions of
// entries) is an error, never a hang or a huge allocation.
func TestReadRAGQualityHostile(t *testing.T) {
	dir := t.TempDir()
	run := runstest.Write(t, dir, runstest.Spec{Name: "a", Workload: config.RAGQAQuality, Started: t0, Requests: 1, Summary: true})
	d, err := runs.Load(run)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(run, record.RAGQualityFile)
	many := "{\"per_sample\":[" + strings.Repeat("{},", 300_000) + "{}]}"
	for name, make := range map[string]func() error{
		"fifo":     func() error { return syscall.Mkfifo(path, 0o644) },
		"zero":     func() error { return os.Symlink("/dev/zero", path) },
		"too many": func() error { return os.WriteFile(path, []byte(many), 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			os.Remove(path)
			if err := make(); err != nil {
				t.Fatal(err)
			}
			done := make2(func() error { _, err := runs.ReadRAGQuality(d); return err })
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), record.RAGQualityFile) {
					t.Errorf("read %v, want an error naming the file", err)
				}
			case <-time.After(time.Minute):
				// A hang, not a slow read: 300,000 samples decode in about 4 s
				// under -race, far longer on a loaded machine.
				t.Fatal("reading blocked")
			}
		})
	}
}

func make2(fn func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- fn() }()
	return ch
}
