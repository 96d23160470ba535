package bench

import (
	"context"
	"fmt"
	"github.com/kvbench/kvbench/bench/load"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/workload"
	"github.com/kvbench/kvbench/config"
)

// serialWorkload sends n requests one after another until Send refuses.
type serialWorkload struct{ n, sent int }

func (w *serialWorkload) Name() string       { return "serial" }
func (w *serialWorkload) Describe() []string { return nil }
func (w *serialWorkload) PlanStreams(load.Settings) workload.StreamPlan {
	return workload.StreamPlan{Streams: 1}
}
func (w *serialWorkload) Outcome() workload.Outcome { return workload.Outcome{} }
func (w *serialWorkload) Run(ctx context.Context, env workload.Env) error {
	env.Phase("measuring", w.n, 0)
	for i := range w.n {
		if _, ok := env.Send(ctx, &sender.Request{ID: fmt.Sprintf("r%d", i), Phase: sender.PhaseMeasured, MaxTokens: 2,
			Messages: []sender.Message{{Role: "user", Content: "hi"}}}); !ok {
			break
		}
		w.sent++
	}
	return nil
}

// TestFailedRecordWriteStopsDispatch: an injected write error stops new
// requests, ends with exit code 4 and a message naming what is missing,
// and the summary counts exactly the lines on disk.
func TestFailedRecordWriteStopsDispatch(t *testing.T) {
	wl := &serialWorkload{n: 100}
	workload.Register(workload.Kind{Name: "serial", New: func(context.Context, workload.Params) (workload.Workload, error) { return wl, nil }})
	cfg := config.Default()
	cfg.Set("workload", "serial")
	cfg.Set("model", "m")
	cfg.Set("output_dir", t.TempDir())
	r, err := New(context.Background(), &Prepared{Config: cfg, EngineURL: testEngine(t)})
	if err != nil {
		t.Fatal(err)
	}
	r.rec.FailWritesAfter(3000, syscall.EIO)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range r.Events() {
		}
	}()
	fin := r.Run(context.Background())
	<-done
	sum, code := fin.Summary, fin.ExitCode
	if code != 4 || sum.Run.ExitCode != 4 {
		t.Fatalf("exit %d (summary %d), want 4", code, sum.Run.ExitCode)
	}
	if wl.sent >= wl.n || wl.sent == 0 {
		t.Fatalf("%d of %d requests sent: dispatch must stop at the failed write", wl.sent, wl.n)
	}
	data, err := os.ReadFile(filepath.Join(r.Dir(), record.RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(string(data), "\n")
	if len(data) == 0 || data[len(data)-1] != '\n' || lines != wl.sent-1 {
		t.Fatalf("requests.jsonl: %d lines, %d bytes; want %d whole lines (the one that failed cut off)", lines, len(data), wl.sent-1)
	}
	if sum.Results.TotalRequests != lines {
		t.Fatalf("summary counts %d requests, the record holds %d", sum.Results.TotalRequests, lines)
	}
	want := fmt.Sprintf("requests.jsonl holds %d complete lines and lacks 1 finished request(s) (input/output error)", lines)
	if !strings.Contains(fin.RecordError, want) {
		t.Fatalf("record error %q, want it to contain %q", fin.RecordError, want)
	}
	if _, err := record.ReadSummary(r.Dir()); err != nil {
		t.Fatalf("the summary must still be written: %v", err)
	}
}
