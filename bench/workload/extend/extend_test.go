package extend_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/spf13/cobra"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/workload"
	"github.com/kvbench/kvbench/cli"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/form"
	"github.com/kvbench/kvbench/screens/screentest"
)

// The new workload: "echo-burst" sends --eb-requests short prompts, at
// most --eb-inflight at once, each saying --eb-word.
const name = "echo-burst"

func init() {
	config.RegisterWorkload(config.WorkloadSpec{
		Name: name, Prefix: "eb", Info: "short prompts sent a few at a time: does the engine answer them all?",
		Rows: []config.Field{
			config.Row(name, "eb", "requests", config.Int, 6, "requests to send").AtLeast(1).AtMost(1000),
			config.Row(name, "eb", "inflight", config.Int, 2, "most requests in flight").AtLeast(1).AtMost(64),
			config.Row(name, "eb", "word", config.String, "hello", "the word every prompt repeats"),
		},
	})
	workload.Register(workload.Kind{Name: name, New: newEchoBurst,
		Estimate: func(c *config.Config, _ int) workload.Plan {
			o := decode(c)
			return workload.Plan{Requests: float64(o.Requests), Tokens: float64(o.Requests * 8), Flags: []string{"--eb-requests"}}
		}})
}

// options are the workload's settings, decoded once.
type options struct {
	Requests, InFlight int
	Word               string
}

func decode(c *config.Config) options {
	return options{Requests: c.Int("eb_requests"), InFlight: c.Int("eb_inflight"), Word: c.String("eb_word")}
}

type echoBurst struct {
	o        options
	endpoint sender.Endpoint
	ok, sent atomic.Int64
}

// builds counts the workloads built, so the test sees the command ran
// this workload and not another.
var builds atomic.Int64

func newEchoBurst(_ context.Context, p workload.Params) (workload.Workload, error) {
	builds.Add(1)
	return &echoBurst{o: decode(p.Config), endpoint: p.Endpoint}, nil
}

func (w *echoBurst) Name() string { return name }
func (w *echoBurst) Describe() []string {
	return []string{fmt.Sprintf("%s: %d requests, %d in flight", name, w.o.Requests, w.o.InFlight)}
}

func (w *echoBurst) PlanStreams(ls load.Settings) workload.StreamPlan {
	n, flag := min(w.o.InFlight, w.o.Requests), "--eb-inflight"
	if m := ls.MaxConcurrency; m > 0 && m < n {
		n, flag = m, "--max-concurrency"
	}
	return workload.StreamPlan{Streams: n, Flag: flag}
}

func (w *echoBurst) Run(ctx context.Context, env workload.Env) error {
	env.Phase("measuring", w.o.Requests, 0)
	next := make(chan int)
	var wg sync.WaitGroup
	for range w.o.InFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				text := fmt.Sprintf("Request %d: %s", i, strings.Repeat(w.o.Word+" ", 4))
				req := &sender.Request{ID: fmt.Sprintf("eb_%d", i), Phase: sender.PhaseMeasured, Endpoint: w.endpoint,
					Messages: []sender.Message{{Role: "user", Content: text}}, MaxTokens: 2}
				if w.endpoint == sender.Completions {
					req.Prompt = text
				}
				res, ok := env.Send(ctx, req)
				if !ok {
					continue
				}
				w.sent.Add(1)
				if res.Successful {
					w.ok.Add(1)
				}
			}
		}()
	}
	for i := 0; i < w.o.Requests && ctx.Err() == nil; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return nil
}

func (w *echoBurst) Outcome() workload.Outcome {
	return workload.Outcome{Block: map[string]any{"requests": w.o.Requests, "sent": w.sent.Load(), "answered": w.ok.Load()}}
}

// kvbench runs a command line of the CLI (run, sweep) in this process.
func kvbench(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := &cobra.Command{Use: "kvbench", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(cli.NewRunCommand())
	cli.AddCommands(root)
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String() + errb.String(), err
}

// onlyDir is the one folder under dir.
func onlyDir(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range ents {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(dir, e.Name()))
		}
	}
	if len(dirs) != 1 {
		t.Fatalf("%d folders in %s, want 1", len(dirs), dir)
	}
	return dirs[0]
}

// workloadBlock is the workload block of a run folder's summary.
func workloadBlock(t *testing.T, run string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(run, record.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Workload map[string]any `json:"workload"`
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	return sum.Workload
}

// TestANewWorkloadFromOneFile: a workload registered from this file
// alone is a --workload choice with its own flags, runs headless
// against the built-in engine, sweeps, shows in the form with its plan
// and is reproduced from its finished run by the command its record
// gives.
func TestANewWorkloadFromOneFile(t *testing.T) {
	t.Setenv("KVBENCH_CONFIG_DIR", t.TempDir())
	out := t.TempDir()

	// run
	before := builds.Load()
	msg, err := kvbench(t, "run", "--engine-url", "builtin", "--workload", name, "--eb-requests", "5", "--eb-word", "ping",
		"--output-dir", out, "--no-interactive", "--quiet", "--builtin-speed", "1000")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, msg)
	}
	if builds.Load() == before {
		t.Fatal("run did not build the new workload")
	}
	run := onlyDir(t, out)
	if b := workloadBlock(t, run); b["requests"] != 5.0 || b["sent"] != 5.0 || b["answered"] != 5.0 {
		t.Errorf("workload block %v, want 5 requests sent and answered", b)
	}
	cfgJSON, err := os.ReadFile(filepath.Join(run, record.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"workload": "echo-burst"`, `"eb_requests": 5`, `"eb_inflight": 2`, `"eb_word": "ping"`} {
		if !strings.Contains(string(cfgJSON), want) {
			t.Errorf("config.json lacks %s:\n%s", want, cfgJSON)
		}
	}

	// reproduce: the command the record gives names the workload's own
	// flags and runs the same config again.
	args, err := runs.Command(run)
	if err != nil {
		t.Fatal(err)
	}
	line := runs.ShellJoin(args)
	t.Logf("reproduce: %s", line)
	for _, want := range []string{"--workload echo-burst", "--eb-requests 5", "--eb-word ping"} {
		if !strings.Contains(line, want) {
			t.Errorf("reproduce command lacks %q: %s", want, line)
		}
	}
	again := t.TempDir()
	rargs := append(slices.Clone(args[1:]), "--output-dir", again, "--no-interactive", "--quiet", "--builtin-speed", "1000")
	if !slices.Contains(rargs, "--engine-url") {
		rargs = append(rargs, "--engine-url", "builtin")
	}
	if msg, err := kvbench(t, rargs...); err != nil {
		t.Fatalf("reproduced run %q: %v\n%s", rargs, err, msg)
	}
	cfgAgain, err := os.ReadFile(filepath.Join(onlyDir(t, again), record.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(cfgAgain, cfgJSON) {
		t.Errorf("the reproduced run's config.json:\n%s\nthe run's:\n%s", cfgAgain, cfgJSON)
	}

	// sweep: two concurrency cells, each a run of the new workload.
	sw := t.TempDir()
	if msg, err := kvbench(t, "sweep", "--engine-url", "builtin", "--workload", name, "--eb-requests", "4",
		"--sweep-concurrency", "1,2", "--output-dir", sw, "--no-interactive", "--quiet", "--builtin-speed", "1000"); err != nil {
		t.Fatalf("sweep: %v\n%s", err, msg)
	}
	cells, err := os.ReadDir(filepath.Join(onlyDir(t, sw), record.SweepCellsDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 2 {
		t.Fatalf("%d sweep cells, want 2", len(cells))
	}
	for _, c := range cells {
		if b := workloadBlock(t, filepath.Join(onlyDir(t, sw), record.SweepCellsDir, c.Name())); b["sent"] != 4.0 {
			t.Errorf("cell %s: workload block %v, want 4 sent", c.Name(), b)
		}
	}
}

// TestANewWorkloadInTheForm: the form lists the new workload's settings
// with its own description, shows the plan its estimate gives, and
// hands back the values it was given.
func TestANewWorkloadInTheForm(t *testing.T) {
	cfg := config.Default()
	for k, v := range map[string]string{"engine_url": "builtin", "workload": name, "eb_requests": "7", "eb_word": "pong"} {
		if err := cfg.SetString(k, v); err != nil {
			t.Fatal(err)
		}
	}
	c := screentest.Common(120, 60, screentest.Now)
	c.RunsDir, c.ConfigDir = t.TempDir(), t.TempDir()
	m := form.NewReview(c, cfg, false)
	view := m.View()
	for _, want := range []string{"echo-burst", "requests", "≈ 7"} {
		if !strings.Contains(view, want) {
			t.Errorf("the form's summary lacks %q:\n%s", want, view)
		}
	}
	got, err := m.Config()
	if err != nil {
		t.Fatal(err)
	}
	if got.Int("eb_requests") != 7 || got.String("eb_word") != "pong" || got.Int("eb_inflight") != 2 {
		t.Errorf("the form gave %s", got.ExportJSON())
	}
	// A value out of its row's range is refused with the CLI's message.
	bad := cfg.Clone()
	if err := bad.SetString("eb_inflight", "0"); err != nil {
		t.Fatal(err)
	}
	if _, err := form.NewReview(c, bad, false).Config(); err == nil || err.Error() != "--eb-inflight must be in [1, 64] (got 0)" {
		t.Errorf("an out-of-range --eb-inflight: %v", err)
	}
}

// The help lists it too, with its flags in their own section.
func TestANewWorkloadInHelp(t *testing.T) {
	msg, err := kvbench(t, "run", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"echo-burst", config.WorkloadInfo[name], "--eb-requests", "--eb-inflight", "--eb-word"} {
		if !strings.Contains(msg, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}
