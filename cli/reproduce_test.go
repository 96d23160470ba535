package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/cli"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/testbin"
)

// resolveRun parses a `kvbench run` command line through the run
// command's own flags and resolves it as the CLI does (no config file,
// no environment).
func resolveRun(t *testing.T, args []string) *config.Config {
	t.Helper()
	if len(args) < 2 || args[0] != "kvbench" || args[1] != "run" {
		t.Fatalf("not a kvbench run command: %q", args)
	}
	t.Setenv("KVBENCH_CONFIG_DIR", t.TempDir())
	cmd := cli.NewRunCommand()
	if err := cmd.ParseFlags(args[2:]); err != nil {
		t.Fatalf("the run command does not take %q: %v", args, err)
	}
	if rest := cmd.Flags().Args(); len(rest) > 0 {
		t.Fatalf("arguments left over: %q", rest)
	}
	cfg, err := config.Resolve(cmd.Flags(), config.Layers{Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("the command does not validate: %v\n%q", err, args)
	}
	return cfg
}

// shellWords splits a command line as sh does.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	out, err := exec.Command("sh", "-c", `for a in `+line+`; do printf '%s\0' "$a"; done`).Output()
	if err != nil {
		t.Fatalf("sh: %v", err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

func fp(v float64) *float64 { return &v }
func ip(v int) *int         { return &v }
func sp(v string) *string   { return &v }

// The command copied from the explorer parses through `kvbench run`'s
// own flags into the run's config: the same config.json, the same load
// shape and SLO, the recorded salt, cache reset and name, and an engine
// URL without its credentials.
func TestCommandReproducesTheRun(t *testing.T) {
	dir := t.TempDir()
	run := runstest.Write(t, dir, runstest.Spec{
		Name: "baseline", Requests: 8, Summary: true,
		EngineURL: "http://admin:s3cret@gpu-a:8000/v1?api_key=abc",
		Config: map[string]any{"seed": 7, "kv_cache_volume": 4.5, "tokens_per_gb_kvcache": 5000, "ldqa_document_length": 2000,
			"ldqa_shuffle_policy": "tile", "ignore_eos": true, "no_warmup": true, "prompt_salt": "it's fixed"},
		Load:       &load.Block{TargetRate: fp(20), Arrival: load.Gamma, Burstiness: fp(0.5), MaxConcurrency: ip(8), Delivered: true},
		Goodput:    &load.Goodput{SLO: load.SLOms{TTFTms: fp(500), E2Ems: fp(20000)}},
		CacheReset: sp("/reset_prefix_cache"),
	})
	args, err := runs.Command(run)
	if err != nil {
		t.Fatal(err)
	}
	line := runs.ShellJoin(args)
	for _, secret := range []string{"s3cret", "admin", "api_key", "abc"} {
		if strings.Contains(line, secret) {
			t.Errorf("the command holds %q: %s", secret, line)
		}
	}
	if got := shellWords(t, line); !reflect.DeepEqual(got, args) {
		t.Fatalf("sh reads %q\nfrom %s\nwant %q", got, line, args)
	}

	cfg := resolveRun(t, args)
	want, _ := os.ReadFile(filepath.Join(run, record.ConfigFile))
	if got := cfg.ExportJSON(); !bytes.Equal(got, want) {
		t.Errorf("config.json of the command:\n%s\nthe run's:\n%s", got, want)
	}
	if cfg.String("engine_url") != "http://gpu-a:8000/v1" {
		t.Errorf("engine URL %q", cfg.String("engine_url"))
	}
	s, err := load.FromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.Rate != 20 || s.Arrival != load.Gamma || s.Burstiness != 0.5 || s.MaxConcurrency != 8 ||
		s.SLO == nil || s.SLO.TTFT != 500*time.Millisecond || s.SLO.E2E != 20*time.Second || s.SLO.TPOT != 0 {
		t.Errorf("load settings %+v, SLO %+v", s, s.SLO)
	}
	if cfg.String("prompt_salt") != "it's fixed" || !cfg.Bool("reset_cache") || cfg.String("name") != "baseline" {
		t.Errorf("salt %q, reset %v, name %q", cfg.String("prompt_salt"), cfg.Bool("reset_cache"), cfg.String("name"))
	}

	// The salt is shown as recorded, auto included; the display name
	// given in the explorer is not the recorded one and is not used.
	auto := runstest.Write(t, dir, runstest.Spec{Name: "auto", Requests: 3, Summary: true, Started: time.Date(2026, 3, 2, 9, 0, 0, 0, time.Local)})
	if _, err := runs.WriteAnnotations(auto, runs.Annotations{Name: "renamed"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	args, err = runs.Command(auto)
	if err != nil {
		t.Fatal(err)
	}
	if line := runs.ShellJoin(args); line != "kvbench run --engine-url http://127.0.0.1:8000/v1 --workload long-doc-qa --model sim-model --prompt-salt auto --name auto" {
		t.Errorf("plain run: %s", line)
	}
}

// multi-round-chat's rate is its --mrc-qps (the load block's target),
// and its arrivals follow --mrc-arrival unless another was recorded.
func TestCommandMultiRoundChat(t *testing.T) {
	dir := t.TempDir()
	run := runstest.Write(t, dir, runstest.Spec{Workload: config.MultiRoundChat, Requests: 4, Summary: true,
		Config: map[string]any{"mrc_duration": 10.0},
		Load:   &load.Block{TargetRate: fp(4), Arrival: load.Constant, Delivered: true}})
	args, err := runs.Command(run)
	if err != nil {
		t.Fatal(err)
	}
	line := runs.ShellJoin(args)
	if !strings.Contains(line, "--mrc-qps 4") || strings.Contains(line, "--request-rate") || strings.Contains(line, "--arrival") {
		t.Errorf("multi-round-chat command: %s", line)
	}
	s, err := load.FromConfig(resolveRun(t, args))
	if err != nil || s.Rate != 4 || s.Arrival != load.Constant {
		t.Errorf("resolved rate %v arrival %s: %v", s.Rate, s.Arrival, err)
	}
}

// A run without a summary (killed) has no engine URL on record: the
// command has the rest, and says nothing it does not know.
func TestCommandIncompleteRun(t *testing.T) {
	dir := t.TempDir()
	run := runstest.Write(t, dir, runstest.Spec{Workload: config.RandomPrefill, Requests: 4, Config: map[string]any{"rp_num_requests": 9}})
	args, err := runs.Command(run)
	if err != nil {
		t.Fatal(err)
	}
	if line := runs.ShellJoin(args); line != "kvbench run --workload random-prefill --model sim-model --rp-num-requests 9" {
		t.Errorf("incomplete run: %s", line)
	}
	os.Remove(filepath.Join(run, record.ConfigFile))
	if _, err := runs.Command(run); err == nil || !strings.Contains(err.Error(), "no config.json") {
		t.Errorf("no config.json: %v", err)
	}
}

// A sweep's command is `kvbench sweep` with the cells' settings, the
// sweep's list or search start, its SLO and its base salt, and parses
// through the sweep command's flags into the same sweep.
func TestSweepCommandReproducesTheSweep(t *testing.T) {
	dir := t.TempDir()
	sw := runstest.WriteRecordedSweep(t, dir, runstest.RecordedSweep{Name: "cap", Values: []float64{4, 8, 16, 12}, Search: true, SLO: true,
		PassUpTo: 12, Salt: "warm"})
	args, err := runs.SweepCommand(sw)
	if err != nil {
		t.Fatal(err)
	}
	line := runs.ShellJoin(args)
	if args[1] != "sweep" || strings.Contains(line, "--request-rate") || strings.Contains(line, "cell 01") {
		t.Fatalf("sweep command: %s", line)
	}
	t.Setenv("KVBENCH_CONFIG_DIR", t.TempDir())
	cmd := cli.NewSweepCommand()
	if err := cmd.ParseFlags(args[2:]); err != nil {
		t.Fatalf("the sweep command does not take %s: %v", line, err)
	}
	cfg, err := config.Resolve(cmd.Flags(), config.Layers{Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	var sf cli.SweepFlags
	fl := cmd.Flags()
	sf.Rate, _ = fl.GetString("sweep-rate")
	sf.Concurrency, _ = fl.GetString("sweep-concurrency")
	sf.Search, _ = fl.GetBool("search")
	sf.GoodputTarget, _ = fl.GetFloat64("goodput-target")
	sf.Precision, _ = fl.GetFloat64("search-precision")
	sf.MaxCells, _ = fl.GetInt("search-max-cells")
	o, err := cli.SweepOptions(cfg, sf)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if o.Dimension != "rate" || !reflect.DeepEqual(o.Values, []float64{4}) || !o.Search || o.GoodputTarget != 0.9 {
		t.Errorf("sweep options %+v", o)
	}
	if cfg.String("slo") != "ttft=200ms" || cfg.String("prompt_salt") != "warm" || cfg.String("name") != "cap" || cfg.Workload() != config.RandomPrefill {
		t.Errorf("slo %q, salt %q, name %q, workload %q", cfg.String("slo"), cfg.String("prompt_salt"), cfg.String("name"), cfg.Workload())
	}

	list := runstest.WriteRecordedSweep(t, dir, runstest.RecordedSweep{Values: []float64{1, 2, 4}, Started: time.Date(2026, 3, 3, 9, 0, 0, 0, time.Local)})
	args, err = runs.SweepCommand(list)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(runs.ShellJoin(args), "--prompt-salt auto --sweep-rate 1,2,4") {
		t.Errorf("list sweep: %s", runs.ShellJoin(args))
	}
}

// End to end: a run of the built binary, then the command built from its
// folder run again: the second run records the same config.json, load
// shape, SLO and salt.
func TestCommandRerunsTheSameRun(t *testing.T) {
	dir := t.TempDir()
	res := testbin.Run(t, 60*time.Second, []string{"KVBENCH_RUNS_DIR=" + dir},
		"run", "--engine-url", "builtin", "--workload", "random-prefill", "--rp-num-requests", "6", "--rp-request-length", "120",
		"--request-rate", "50", "--arrival", "constant", "--max-concurrency", "3", "--slo", "ttft=2s,tpot=100ms",
		"--prompt-salt", "fixed salt", "--seed", "11", "--name", "first", "--no-interactive", "--format", "json")
	if res.Code != 0 {
		t.Fatalf("first run: exit %d\n%s", res.Code, res.Stderr)
	}
	first, err := runs.List(dir)
	if err != nil || len(first) != 1 {
		t.Fatalf("runs: %v %v", first, err)
	}
	args, err := runs.Command(first[0].Dir)
	if err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(t.TempDir(), "again")
	res = testbin.Run(t, 60*time.Second, nil, append(args[1:], "--output-dir", again, "--no-interactive", "--format", "json")...)
	if res.Code != 0 {
		t.Fatalf("%s: exit %d\n%s", runs.ShellJoin(args), res.Code, res.Stderr)
	}
	second, err := runs.List(again)
	if err != nil || len(second) != 1 {
		t.Fatalf("second run: %v %v", second, err)
	}
	a, b := first[0].Dir, second[0].Dir
	ca, _ := os.ReadFile(filepath.Join(a, record.ConfigFile))
	cb, _ := os.ReadFile(filepath.Join(b, record.ConfigFile))
	if !bytes.Equal(ca, cb) {
		t.Errorf("config.json differs:\n%s\n%s", ca, cb)
	}
	sa, err := record.ReadSummary(a)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := record.ReadSummary(b)
	if err != nil {
		t.Fatal(err)
	}
	if *sa.Load.TargetRate != *sb.Load.TargetRate || sa.Load.Arrival != sb.Load.Arrival || *sa.Load.MaxConcurrency != *sb.Load.MaxConcurrency {
		t.Errorf("load: %+v vs %+v", sa.Load, sb.Load)
	}
	ga, _ := json.Marshal(sa.Goodput.SLO)
	gb, _ := json.Marshal(sb.Goodput.SLO)
	if !bytes.Equal(ga, gb) {
		t.Errorf("SLO: %s vs %s", ga, gb)
	}
	for _, k := range []string{"prompt_salt", "seed", "rp_num_requests", "rp_request_length", "engine_url"} {
		va, _ := record.Field(sa.Config, k)
		vb, _ := record.Field(sb.Config, k)
		if !reflect.DeepEqual(va, vb) {
			t.Errorf("config %s: %v vs %v", k, va, vb)
		}
	}
	if sb.Run.Name != "first" {
		t.Errorf("name %q", sb.Run.Name)
	}
}
