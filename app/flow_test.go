package app

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/form"
	"github.com/kvbench/kvbench/screens/home"
	"github.com/kvbench/kvbench/screens/screentest"
)

// editFocus lists, in order, the focused titles of the edit form for a
// workload when no LMCache server is used and no advanced settings shown.
func editFocus(workload string) []string {
	out := []string{"┃ --engine-url", "┃ --model", "┃ --served-model-name", "┃ --api-key-env"}
	if config.NeedsTokensPerGB(workload) {
		out = append(out, "┃ Is there an LMCache server?", "┃ --kv-cache-volume", "┃ --tokens-per-gb-kvcache")
	}
	for _, f := range config.WorkloadFields(workload) {
		out = append(out, "┃ --"+f.Flag)
	}
	return append(out, "┃ --seed", "┃ --ignore-eos", "┃ --output-dir", "┃ --name", "┃ Show the advanced settings?")
}

// submitForm walks an edit form with enter, keeping every value, until
// the summary shows.
func submitForm(t *testing.T, tm *teatest.TestModel) {
	t.Helper()
	for _, title := range editFocus(config.LongDocQA) {
		waitFor(t, tm, title)
		tm.Send(screentest.Key("enter"))
	}
	waitFor(t, tm, "Summary", "Start")
}

// transcript keeps everything a test program drew, for assertions about
// what was never shown. Each wait looks only past what the previous wait
// matched, so a frame that holds two awaited texts serves both.
type transcript struct {
	all    []byte
	cursor int
}

func (tr *transcript) String() string { return string(tr.all) }

func (tr *transcript) waitFor(t *testing.T, tm *teatest.TestModel, texts ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		buf := append(tr.all[:len(tr.all):len(tr.all)], b...)
		end := tr.cursor
		for _, s := range texts {
			i := bytes.Index(buf[tr.cursor:], []byte(s))
			if i < 0 {
				return false
			}
			end = max(end, tr.cursor+i+len(s))
		}
		tr.all, tr.cursor = buf, end
		return true
	}, teatest.WithDuration(30*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
}

// typeInto clears the focused input and types s.
func typeInto(tm *teatest.TestModel, s string) {
	tm.Send(screentest.Key("ctrl+u"))
	tm.Type(s)
}

// TestFlowHomeFormRunSummary drives the whole path against the built-in
// engine: home, pick long-doc-qa, fill the form with small sizes, start,
// watch the live screen, read the summary, go back home and quit.
func TestFlowHomeFormRunSummary(t *testing.T) {
	runsDir, cfgDir := t.TempDir(), t.TempDir()
	t.Setenv("KVBENCH_RUNS_DIR", runsDir)
	c := testCommon(runsDir, cfgDir)
	c.Now = time.Now
	m := newModel(c, home.New(c))
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 35))
	var tr transcript

	tr.waitFor(t, tm, "› long-doc-qa", "no run yet")
	tm.Send(screentest.Key("enter"))
	steps := []struct {
		focus, input string
	}{
		{"┃ --engine-url", ""}, // builtin is the default
		{"┃ --model", ""},
		{"┃ --served-model-name", ""},
		{"┃ --api-key-env", ""},
		{"┃ Is there an LMCache server?", ""}, // no
		{"┃ --kv-cache-volume", "1"},
		{"┃ --tokens-per-gb-kvcache", ""}, // the built-in engine's figure
		{"┃ --ldqa-document-length", "2000"},
		{"┃ --ldqa-query-per-document", ""},
		{"┃ --ldqa-shuffle-policy", ""},
		{"┃ --ldqa-num-inflight-requests", ""},
		{"┃ --ldqa-max-output-length", "16"},
		{"┃ --seed", ""},
		{"┃ --ignore-eos", ""},
		{"┃ --output-dir", ""},
		{"┃ --name", "flow"},
		{"┃ Show the advanced settings?", ""},
	}
	for _, s := range steps {
		tr.waitFor(t, tm, s.focus)
		if s.input != "" {
			typeInto(tm, s.input)
		}
		tm.Send(screentest.Key("enter"))
	}
	tr.waitFor(t, tm, "Summary", "KV cache volume", "1 GB", "--ldqa-max-output-length", "[ Start ]")
	tm.Send(screentest.Key("s"))

	// The live screen: the phase, the TTFT counters and the log.
	tr.waitFor(t, tm, "› run long-doc-qa", "mean TTFT", "in flight", "╭─ Log")
	tr.waitFor(t, tm, "ttft", "reused")
	// The summary once finished.
	tr.waitFor(t, tm, "Engine Benchmark Result (long-doc-qa)", "run finished, exit code 0")

	// Again, with the same config: a second run folder.
	tm.Send(screentest.Key("a"))
	tr.waitFor(t, tm, "in flight")
	tr.waitFor(t, tm, "Engine Benchmark Result (long-doc-qa)", "run finished, exit code 0")

	tm.Send(screentest.Key("q")) // back home: the new runs are listed
	tr.waitFor(t, tm, "kvbench › home", "long-doc-qa flow")
	tm.Send(screentest.Key("q"))

	fm := tm.FinalModel(t, teatest.WithFinalTimeout(30*time.Second)).(*model)
	if fm.code != 0 || !fm.ranOnce {
		t.Errorf("exit code %d (ran %v), want 0 after a clean run", fm.code, fm.ranOnce)
	}
	dirs, _ := filepath.Glob(filepath.Join(runsDir, "*-long-doc-qa-flow*"))
	if len(dirs) != 2 {
		t.Fatalf("run folders: %v, want two (the run and its repeat)", dirs)
	}
	sum, err := record.ReadSummary(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if sum.Results.TotalRequests != 10 || sum.Results.FailedRequests != 0 {
		t.Errorf("results: %+v (want 10 requests: 5 documents x 2 questions)", sum.Results)
	}
	if v, _ := record.Field(sum.Config, "ldqa_max_output_length"); fmt.Sprint(v) != "16" {
		t.Errorf("the form's value did not reach the run: ldqa_max_output_length = %v", v)
	}
}

// TestGuidedAsksOnlyWhatIsMissing: with the workload given on the command
// line, the guided setup asks the engine URL, then LMCache yes/no and
// tokens per GB, never the workload, then offers the optional settings.
func TestGuidedAsksOnlyWhatIsMissing(t *testing.T) {
	cfg := config.Default()
	cfg.SetString("workload", config.RandomPrefill)
	cfg.SetString("rp_num_requests", "7")
	c := testCommon(t.TempDir(), t.TempDir())
	f := form.NewGuided(c, cfg)
	tm := teatest.NewTestModel(t, newModel(c, f), teatest.WithInitialTermSize(100, 30))
	var tr transcript

	tr.waitFor(t, tm, "┃ --engine-url")
	tm.Type("127.0.0.1:9")
	tm.Send(screentest.Key("enter"))
	tr.waitFor(t, tm, "┃ Is there an LMCache server?")
	tm.Send(screentest.Key("enter")) // no
	tr.waitFor(t, tm, "┃ --tokens-per-gb-kvcache")
	tm.Send(screentest.Key("enter")) // empty: required without LMCache
	tr.waitFor(t, tm, "✗ missing required arguments: --tokens-per-gb-kvcache or --lmcache-url")
	tm.Type("6553")
	tm.Send(screentest.Key("enter"))
	tr.waitFor(t, tm, "┃ Review the optional settings?")
	asked := tr.String()
	tm.Send(screentest.Key("enter")) // no
	tr.waitFor(t, tm, "Summary", "tokens per GB", "6553", "--rp-num-requests", "7")
	tm.Send(screentest.Key("ctrl+c"))

	fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*model)
	if fm.code != 130 {
		t.Errorf("leaving the guided setup: exit %d, want 130", fm.code)
	}
	got, err := f.Config()
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	if got.String("engine_url") != "127.0.0.1:9" || got.Int("tokens_per_gb_kvcache") != 6553 ||
		got.Workload() != config.RandomPrefill || got.Int("rp_num_requests") != 7 {
		t.Errorf("config: %s engine=%q", got.ExportJSON(), got.String("engine_url"))
	}
	if len(got.Missing()) != 0 {
		t.Errorf("still missing: %v", got.Missing())
	}
	for _, never := range []string{"--workload", "--model", "--seed", "--rp-request-length", "LMCache server URL"} {
		if strings.Contains(asked, never) {
			t.Errorf("the guided setup showed %s, which was not missing nor asked for", never)
		}
	}
}

// TestGuidedBuiltinSkipsBudget: with nothing given, it asks the engine
// URL and the workload; for `builtin` the budget question is skipped
// since the simulator reports its own tokens per GB.
func TestGuidedBuiltinSkipsBudget(t *testing.T) {
	c := testCommon(t.TempDir(), t.TempDir())
	f := form.NewGuided(c, config.Default())
	tm := teatest.NewTestModel(t, newModel(c, f), teatest.WithInitialTermSize(100, 30))
	var tr transcript

	tr.waitFor(t, tm, "┃ --engine-url")
	tm.Type("builtin")
	tm.Send(screentest.Key("enter"))
	tr.waitFor(t, tm, "┃ --workload", "> long-doc-qa")
	tm.Send(screentest.Key("down"))
	tm.Send(screentest.Key("enter")) // multi-round-chat
	tr.waitFor(t, tm, "┃ Review the optional settings?")
	tm.Send(screentest.Key("y")) // yes: the optional groups follow
	tr.waitFor(t, tm, "┃ --model")
	tm.Send(screentest.Key("ctrl+c"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))

	if strings.Contains(tr.String(), "Is there an LMCache server?") || strings.Contains(tr.String(), "--tokens-per-gb-kvcache") {
		t.Error("the budget was asked although the built-in engine reports it")
	}
	got, _ := f.Config()
	if got.Workload() != config.MultiRoundChat || got.String("engine_url") != "builtin" {
		t.Errorf("workload %q engine %q", got.Workload(), got.String("engine_url"))
	}
}

// TestInvalidInputShowsTheCLIMessage: a value out of range shows the
// same message as the command line, inline, and the form does not move
// on, so nothing can start.
func TestInvalidInputShowsTheCLIMessage(t *testing.T) {
	fld, _ := config.Lookup("ldqa_document_length")
	want := fld.Check(0).Error()
	if want != "--ldqa-document-length must be in (0, 10000000] (got 0)" {
		t.Fatalf("the CLI's message changed: %q", want)
	}
	cfg := config.Default()
	cfg.SetString("workload", config.LongDocQA)
	c := testCommon(t.TempDir(), t.TempDir())
	f := form.New(c, cfg)
	tm := teatest.NewTestModel(t, newModel(c, f), teatest.WithInitialTermSize(100, 30))
	var tr transcript
	for _, title := range editFocus(config.LongDocQA) {
		tr.waitFor(t, tm, title)
		if title == "┃ --ldqa-document-length" {
			typeInto(tm, "0")
			tm.Send(screentest.Key("enter"))
			break
		}
		tm.Send(screentest.Key("enter"))
	}
	tr.waitFor(t, tm, "✗ "+want)
	// More enters and a start key do not get past it.
	tm.Send(screentest.Key("enter"))
	tm.Send(screentest.Key("enter"))
	tm.Type("s")
	tm.Send(screentest.Key("enter"))
	// Fix it: the error goes and the form moves on.
	typeInto(tm, "-5")
	tm.Send(screentest.Key("enter"))
	tr.waitFor(t, tm, "✗ --ldqa-document-length must be in (0, 10000000] (got -5)")
	typeInto(tm, "abc")
	tm.Send(screentest.Key("enter"))
	parseErr := "--ldqa-document-length: invalid value \"abc\" (want an integer)"
	if _, err := config.Parse(fld, "abc"); err == nil || err.Error() != parseErr {
		t.Fatalf("the CLI's parse message changed: %v", err)
	}
	tr.waitFor(t, tm, "✗ "+parseErr)
	typeInto(tm, "3000")
	tm.Send(screentest.Key("enter"))
	tr.waitFor(t, tm, "┃ --ldqa-query-per-document")
	tm.Send(screentest.Key("ctrl+c"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))

	if strings.Contains(tr.String(), "Summary") {
		t.Error("the summary (and its start) was reached with an invalid value")
	}
	got, err := f.Config()
	if err != nil || got.Int("ldqa_document_length") != 3000 {
		t.Errorf("after the fix: %v %d", err, got.Int("ldqa_document_length"))
	}
}

// TestDoctorFromHome: d on home checks the built-in engine.
func TestDoctorFromHome(t *testing.T) {
	c := testCommon(t.TempDir(), t.TempDir())
	tm := teatest.NewTestModel(t, newModel(c, home.New(c)), teatest.WithInitialTermSize(120, 35))
	var tr transcript
	tr.waitFor(t, tm, "d doctor")
	tm.Send(screentest.Key("d"))
	tr.waitFor(t, tm, "┃ --engine-url", "> builtin")
	for range 3 {
		tm.Send(screentest.Key("enter"))
	}
	tr.waitFor(t, tm, "model kvbench-sim", "PASS  cached_tokens", "PASS  prefix_cache")
	tm.Send(screentest.Key("esc"))
	tr.waitFor(t, tm, "kvbench › home")
	tm.Send(screentest.Key("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}

// TestDoctorFromFormSummary: d on the form's summary checks the engine
// the form names, before a run is started.
func TestDoctorFromFormSummary(t *testing.T) {
	c := testCommon(t.TempDir(), t.TempDir())
	cfg := config.Default()
	cfg.SetString("workload", config.LongDocQA)
	cfg.SetString("engine_url", "builtin")
	tm := teatest.NewTestModel(t, newModel(c, form.New(c, cfg)), teatest.WithInitialTermSize(120, 35))
	submitForm(t, tm)
	var tr transcript
	tm.Send(screentest.Key("d"))
	tr.waitFor(t, tm, "kvbench › doctor", "> builtin")
	for range 3 {
		tm.Send(screentest.Key("enter"))
	}
	tr.waitFor(t, tm, "model kvbench-sim", "PASS  cached_tokens")
	tm.Send(screentest.Key("esc"))
	tr.waitFor(t, tm, "[ Start ]")
	tm.Send(screentest.Key("ctrl+c"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}
