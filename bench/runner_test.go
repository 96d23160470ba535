package bench

import (
	"context"
	"fmt"
	"github.com/kvbench/kvbench/bench/load"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/overload"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/workload"
	"github.com/kvbench/kvbench/config"
)

// lateWorkload sends one request scheduled well in the past.
type lateWorkload struct{ held bool }

func (w *lateWorkload) Name() string       { return "late" }
func (w *lateWorkload) Describe() []string { return nil }
func (w *lateWorkload) PlanStreams(load.Settings) workload.StreamPlan {
	return workload.StreamPlan{Streams: 1}
}
func (w *lateWorkload) Outcome() workload.Outcome {
	return workload.Outcome{}
}
func (w *lateWorkload) Run(ctx context.Context, env workload.Env) error {
	env.Phase("measuring", 1, 0)
	env.Send(ctx, &sender.Request{ID: "r0", Phase: sender.PhaseMeasured, MaxTokens: 2,
		Messages:  []sender.Message{{Role: "user", Content: "hi"}},
		Scheduled: time.Now().Add(-200 * time.Millisecond), HeldBack: w.held})
	// Give the monitor a few periods to look at the lag.
	select {
	case <-time.After(100 * time.Millisecond):
	case <-ctx.Done():
	}
	return nil
}

func testEngine(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,\"prompt_tokens_details\":{\"cached_tokens\":0}}}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func runLate(t *testing.T, held bool) []string {
	t.Helper()
	name := fmt.Sprintf("late-%v", held)
	workload.Register(workload.Kind{Name: name, New: func(context.Context, workload.Params) (workload.Workload, error) {
		return &lateWorkload{held: held}, nil
	}})
	cfg := config.Default()
	cfg.Set("workload", name)
	cfg.Set("model", "m")
	cfg.Set("output_dir", t.TempDir())
	cfg.Set("no_csv", true)
	r, err := New(context.Background(), &Prepared{Config: cfg, EngineURL: testEngine(t)})
	if err != nil {
		t.Fatal(err)
	}
	r.monitorEvery = 10 * time.Millisecond
	r.probe = quietProbe
	r.timing = quietTiming()
	var warnings []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range r.Events() {
			if e.Kind == LogLine && e.Warn {
				warnings = append(warnings, e.Text)
			}
		}
	}()
	code := r.Run(context.Background()).ExitCode
	<-done
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	return warnings
}

func TestDispatchLagWarning(t *testing.T) {
	w := runLate(t, false)
	if len(w) != 1 || !strings.Contains(w[0], "p99 dispatch lag ") || !strings.Contains(w[0], " ms > 10.0 ms allowed") {
		t.Fatalf("a client-late request must warn once, got %q", w)
	}
	if w := runLate(t, true); len(w) != 0 {
		t.Fatalf("a request the workload held back must not warn, got %q", w)
	}
}

// quietProbe is a machine with nothing to report: no /proc/stat, no
// CPU used.
func quietProbe(now time.Time) overload.Reading { return overload.Reading{At: now} }
