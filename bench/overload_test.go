package bench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/overload"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/workload"
	"github.com/kvbench/kvbench/config"
)

// waitWorkload sends one request, then waits until the probe has been
// read enough times.
type waitWorkload struct{ enough <-chan struct{} }

func (w *waitWorkload) Name() string              { return "wait" }
func (w *waitWorkload) Describe() []string        { return nil }
func (w *waitWorkload) Outcome() workload.Outcome { return workload.Outcome{} }
func (w *waitWorkload) Run(ctx context.Context, env workload.Env) error {
	env.Phase("measuring", 1, 0)
	env.Send(ctx, &sender.Request{ID: "r0", Phase: sender.PhaseMeasured, MaxTokens: 2,
		Messages: []sender.Message{{Role: "user", Content: "hi"}}})
	select {
	case <-w.enough:
	case <-ctx.Done():
	}
	return nil
}

// busyMachine is a probe on its own clock (a second per reading) of a
// machine 99% busy; it closes enough after n readings.
func busyMachine(n int, enough chan struct{}) overload.Probe {
	var mu sync.Mutex
	calls := 0
	t0 := time.Unix(1000, 0)
	return func(time.Time) overload.Reading {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == n {
			close(enough)
		}
		return overload.Reading{At: t0.Add(time.Duration(calls) * time.Second), MachineOK: true,
			MachineBusy: uint64(calls * 99), MachineTotal: uint64(calls * 100)}
	}
}

// TestOverloadReachesSummaryAndLiveWarning: a machine busy for more than
// 3 s marks the run overloaded, warns live (a log line, the snapshot's
// warning) and lands in the summary's client block with its reason.
func TestOverloadReachesSummaryAndLiveWarning(t *testing.T) {
	enough := make(chan struct{})
	workload.Register("wait", func(context.Context, workload.Params) (workload.Workload, error) {
		return &waitWorkload{enough: enough}, nil
	})
	cfg := config.Default()
	cfg.Set("workload", "wait")
	cfg.Set("model", "m")
	cfg.Set("output_dir", t.TempDir())
	r, err := New(context.Background(), &Prepared{Config: cfg, EngineURL: testEngine(t)})
	if err != nil {
		t.Fatal(err)
	}
	r.monitorEvery = time.Millisecond
	r.probe = busyMachine(6, enough)
	var warnings []string
	live := ""
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range r.Events() {
			if e.Kind == LogLine && e.Warn {
				warnings = append(warnings, e.Text)
				if live == "" {
					live = r.Snapshot().Warning
				}
			}
		}
	}()
	fin := r.Run(context.Background())
	sum, code := fin.Summary, fin.ExitCode
	<-done
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "client overloaded, latencies may be inflated: machine CPU > 95% busy for 3 s") {
		t.Fatalf("live warnings %q", warnings)
	}
	if !strings.Contains(live, "machine CPU") {
		t.Fatalf("snapshot warning %q", live)
	}
	// An overloaded client never delivered the load it claims.
	if sum.Load == nil || sum.Load.Delivered || !strings.Contains(strings.Join(sum.Load.DegradedReasons, " "), "client overloaded: machine CPU") {
		t.Fatalf("load block of an overloaded run: %+v", sum.Load)
	}
	c := sum.Client
	if !c.Overloaded || len(c.OverloadReasons) != 1 || c.MachineCPUBusyMax == nil || *c.MachineCPUBusyMax != 99 || c.SchedLatencyP99Ms != nil {
		t.Fatalf("client block %+v", c)
	}
	b, err := os.ReadFile(filepath.Join(r.Dir(), record.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk struct {
		Client map[string]json.RawMessage `json:"client"`
	}
	json.Unmarshal(b, &onDisk)
	for _, k := range []string{"cpu_seconds", "max_dispatch_lag_ms", "p99_dispatch_lag_ms", "retries", "sched_latency_p99_ms", "machine_cpu_busy_max", "overloaded", "overload_reasons"} {
		if _, ok := onDisk.Client[k]; !ok {
			t.Errorf("client.%s missing from bench_summary.json", k)
		}
	}
	if string(onDisk.Client["overloaded"]) != "true" || string(onDisk.Client["sched_latency_p99_ms"]) != "null" {
		t.Errorf("client block on disk: %s", b)
	}
	if ov := r.Overload(); !ov.Overloaded {
		t.Error("Runner.Overload must report the final verdict")
	}
}
