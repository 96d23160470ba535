package bench

import (
	"context"
	"encoding/json"
	"github.com/kvbench/kvbench/bench/load"
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

// scriptedClock is the timing probe's clock in runner tests: once start
// is closed, each wake is as late as the next value of late says; then
// it closes delivered and sleeps until the probe is stopped.
type scriptedClock struct {
	start     <-chan struct{}
	late      []time.Duration
	delivered chan struct{}

	now time.Time // the probe's goroutine only
}

func (c *scriptedClock) Now() time.Time { return c.now }

func (c *scriptedClock) Sleep(d time.Duration, stop <-chan struct{}) bool {
	select {
	case <-c.start:
	case <-stop:
		return false
	}
	if len(c.late) == 0 {
		if c.delivered != nil {
			close(c.delivered)
			c.delivered = nil
		}
		<-stop
		return false
	}
	c.now = c.now.Add(d + c.late[0])
	c.late = c.late[1:]
	return true
}

// quietTiming is a timing probe that never wakes and no scheduler
// histogram: no timing figure at all.
func quietTiming() *overload.Timing {
	return overload.NewTiming(&scriptedClock{start: make(chan struct{})}, nil)
}

// probeWorkload enters its measured phase, lets the timing probe run,
// sends one request, then waits until the monitor has judged the run
// after the last wake.
type probeWorkload struct {
	start     chan struct{}
	delivered <-chan struct{}
	readings  <-chan struct{}
}

func (w *probeWorkload) Name() string       { return "probe" }
func (w *probeWorkload) Describe() []string { return nil }
func (w *probeWorkload) PlanStreams(load.Settings) workload.StreamPlan {
	return workload.StreamPlan{Streams: 1}
}
func (w *probeWorkload) Outcome() workload.Outcome { return workload.Outcome{} }
func (w *probeWorkload) Run(ctx context.Context, env workload.Env) error {
	env.Phase("measuring", 1, 0)
	close(w.start) // the probe's wakes count from the measured phase on
	env.Send(ctx, &sender.Request{ID: "r0", Phase: sender.PhaseMeasured, MaxTokens: 2,
		Messages: []sender.Message{{Role: "user", Content: "hi"}}})
	select {
	case <-w.delivered:
	case <-ctx.Done():
		return nil
	}
	// Two readings begun after the last wake: the first pass judged it,
	// the second began after that pass (and its warnings) ended.
	for len(w.readings) > 0 {
		<-w.readings
	}
	for range 2 {
		select {
		case <-w.readings:
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// machine is a probe on its own clock (a second per reading) of a
// machine busy at the given share; it signals each reading.
func machine(busy float64, readings chan<- struct{}) overload.Probe {
	var mu sync.Mutex
	calls := 0
	t0 := time.Unix(1000, 0)
	return func(time.Time) overload.Reading {
		mu.Lock()
		defer mu.Unlock()
		calls++
		select {
		case readings <- struct{}{}:
		default:
		}
		return overload.Reading{At: t0.Add(time.Duration(calls) * time.Second), MachineOK: true,
			MachineBusy: uint64(float64(calls*100) * busy), MachineTotal: uint64(calls * 100)}
	}
}

type probeRun struct {
	r        *Runner
	fin      Finish
	warnings []string
	live     string // the snapshot's warning at the first warning
	onDisk   map[string]json.RawMessage
}

// runProbed runs probeWorkload with the timing probe's wakes late as
// given, on a machine busy at the given share.
func runProbed(t *testing.T, name string, late []time.Duration, busy float64) probeRun {
	t.Helper()
	start, delivered := make(chan struct{}), make(chan struct{})
	readings := make(chan struct{}, 1)
	workload.Register(workload.Kind{Name: name, New: func(context.Context, workload.Params) (workload.Workload, error) {
		return &probeWorkload{start: start, delivered: delivered, readings: readings}, nil
	}})
	cfg := config.Default()
	cfg.Set("workload", name)
	cfg.Set("model", "m")
	cfg.Set("output_dir", t.TempDir())
	r, err := New(context.Background(), &Prepared{Config: cfg, EngineURL: testEngine(t)})
	if err != nil {
		t.Fatal(err)
	}
	r.monitorEvery = time.Millisecond
	r.probe = machine(busy, readings)
	r.timing = overload.NewTiming(&scriptedClock{start: start, late: late, delivered: delivered, now: time.Unix(50, 0)}, nil)
	pr := probeRun{r: r}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range r.Events() {
			if e.Kind == LogLine && e.Warn {
				pr.warnings = append(pr.warnings, e.Text)
				if pr.live == "" {
					pr.live = r.Snapshot().Warning
				}
			}
		}
	}()
	pr.fin = r.Run(context.Background())
	<-done
	if pr.fin.ExitCode != 0 {
		t.Fatalf("exit %d", pr.fin.ExitCode)
	}
	b, err := os.ReadFile(filepath.Join(r.Dir(), record.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Client map[string]json.RawMessage `json:"client"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	pr.onDisk = sum.Client
	for _, k := range []string{"cpu_seconds", "max_dispatch_lag_ms", "p99_dispatch_lag_ms", "retries", "timing_error_p99_ms",
		"timing_error_max_ms", "sched_latency_p99_ms", "machine_cpu_busy_max", "overloaded", "overload_reasons"} {
		if _, ok := sum.Client[k]; !ok {
			t.Errorf("client.%s missing from bench_summary.json", k)
		}
	}
	return pr
}

func lateWakes(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// TestBusyMachineIsANote: a machine 99% busy, with the client still
// waking on time, is a note beside the figures, never overload: the
// load is delivered and nothing warns.
func TestBusyMachineIsANote(t *testing.T) {
	pr := runProbed(t, "probe-busy", lateWakes(500, 200*time.Microsecond), 0.99)
	if len(pr.warnings) != 0 {
		t.Fatalf("a busy machine warned: %q", pr.warnings)
	}
	sum := pr.fin.Summary
	c := sum.Client
	if c.Overloaded || len(c.OverloadReasons) != 0 || c.MachineCPUBusyMax == nil || *c.MachineCPUBusyMax != 99 {
		t.Fatalf("client block %+v", c)
	}
	if c.TimingErrorP99Ms == nil || *c.TimingErrorP99Ms != 0.2 || *c.TimingErrorMaxMs != 0.2 || c.SchedLatencyP99Ms != nil {
		t.Fatalf("timing error p99 %v max %v sched %v, want the probe's 0.2 ms", c.TimingErrorP99Ms, c.TimingErrorMaxMs, c.SchedLatencyP99Ms)
	}
	if sum.Load == nil || !sum.Load.Delivered {
		t.Fatalf("load block of a run on time: %+v", sum.Load)
	}
	if n := pr.r.Snapshot().Note; n != "machine busy; timing error p99 0.20 ms" {
		t.Fatalf("note %q", n)
	}
	if string(pr.onDisk["overloaded"]) != "false" || string(pr.onDisk["timing_error_p99_ms"]) != "0.2" {
		t.Fatalf("client block on disk: %s %s", pr.onDisk["overloaded"], pr.onDisk["timing_error_p99_ms"])
	}
}

// TestLateClientIsOverloaded: a client whose wakes are 8 ms late 5% of
// the time is overloaded, warns once live with the inflation figure, and
// its load is not delivered.
func TestLateClientIsOverloaded(t *testing.T) {
	late := append(lateWakes(950, 100*time.Microsecond), lateWakes(50, 8*time.Millisecond)...)
	pr := runProbed(t, "probe-late", late, 0.3)
	want := "client overloaded, latencies may be inflated by up to 8.00 ms (timing error p99; max 8.00 ms): timing error p99 8.00 ms > 2.00 ms allowed"
	if len(pr.warnings) != 1 || !strings.HasPrefix(pr.warnings[0], want) {
		t.Fatalf("live warnings %q, want one starting %q", pr.warnings, want)
	}
	if !strings.HasPrefix(pr.live, want) {
		t.Fatalf("snapshot warning %q", pr.live)
	}
	sum := pr.fin.Summary
	c := sum.Client
	if !c.Overloaded || len(c.OverloadReasons) != 1 || !strings.HasPrefix(c.OverloadReasons[0], "timing error p99 8.00 ms > 2.00 ms allowed (max(2 ms, 5% of TTFT p50 ") ||
		*c.TimingErrorP99Ms != 8 || *c.MachineCPUBusyMax != 30 {
		t.Fatalf("client block %+v", c)
	}
	if sum.Load == nil || sum.Load.Delivered || !strings.Contains(strings.Join(sum.Load.DegradedReasons, " "), "client overloaded: timing error p99 8.00 ms") {
		t.Fatalf("load block of an overloaded run: %+v", sum.Load)
	}
	if ov := pr.r.Overload(); !ov.Overloaded || ov.Note != "" {
		t.Errorf("Runner.Overload must report the final verdict: %+v", ov)
	}
	if string(pr.onDisk["overloaded"]) != "true" {
		t.Errorf("client block on disk: overloaded %s", pr.onDisk["overloaded"])
	}
}
