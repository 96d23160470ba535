package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	bsweep "github.com/kvbench/kvbench/bench/sweep"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/form"
	"github.com/kvbench/kvbench/screens/screentest"
	sweepscreen "github.com/kvbench/kvbench/screens/sweep"
)

// sweepConfig is a small random-prefill against the built-in engine.
func sweepConfig(t *testing.T, out string) *config.Config {
	t.Helper()
	cfg := config.Default()
	for k, v := range map[string]string{"workload": config.RandomPrefill, "engine_url": "builtin", "builtin_speed": "50",
		"rp_num_requests": "6", "rp_request_length": "100", "name": "flow", "output_dir": out} {
		if err := cfg.SetString(k, v); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

// toSweepForm walks the edit form to its summary and chooses Sweep.
func toSweepForm(t *testing.T, tr *transcript, tm *teatest.TestModel) {
	t.Helper()
	for _, title := range editFocus(config.RandomPrefill) {
		tr.waitFor(t, tm, title)
		tm.Send(screentest.Key("enter"))
	}
	tr.waitFor(t, tm, "Summary", "Sweep")
	tm.Send(screentest.Key("w"))
	tr.waitFor(t, tm, "┃ Sweep", "rate list")
}

// TestFormStartsASweep: from the form's summary, the sweep choice asks
// for a rate list, starts the sweep screen through the router, and the
// sweep writes its folder with one ordinary run per cell.
func TestFormStartsASweep(t *testing.T) {
	runsDir, out := t.TempDir(), t.TempDir()
	t.Setenv("KVBENCH_RUNS_DIR", runsDir)
	c := testCommon(runsDir, t.TempDir())
	c.Now = time.Now
	m := newModel(c, form.New(c, sweepConfig(t, out)))
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	var tr transcript
	toSweepForm(t, &tr, tm)
	tm.Send(screentest.Key("enter"))
	tr.waitFor(t, tm, "┃ --sweep-rate")
	typeInto(tm, "20,40")
	tm.Send(screentest.Key("enter"))
	tr.waitFor(t, tm, "┃ --slo")
	tm.Send(screentest.Key("enter"))

	tr.waitFor(t, tm, "› Sweep", "random-prefill over rate 20,40")
	tr.waitFor(t, tm, "done: 2 cell(s), exit 0")
	tm.Send(screentest.Key("q"))
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(30*time.Second)).(*model)
	if fm.code != 0 || !fm.ranOnce || len(fm.sweeps) != 1 {
		t.Errorf("exit code %d (ran %v), %d sweeps known to the root", fm.code, fm.ranOnce, len(fm.sweeps))
	}
	if _, ok := fm.top().(*sweepscreen.Model); !ok {
		t.Errorf("top screen %T, want the sweep screen in the form's place", fm.top())
	}
	if len(fm.stack) != 1 {
		t.Errorf("%d screens on the stack: the sweep screen replaces the form", len(fm.stack))
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-sweep-random-prefill-flow"))
	if len(dirs) != 1 {
		t.Fatalf("sweep folders %v", dirs)
	}
	b, err := os.ReadFile(filepath.Join(dirs[0], "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f bsweep.File
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if f.Sweep.Dimension != bsweep.Rate || len(f.Cells) != 2 || f.Cells[0].Value != 20 || f.Cells[1].Value != 40 || f.Cells[0].TotalRequests != 6 {
		t.Fatalf("sweep.json %s", b)
	}
	for _, cell := range []string{"01-rate-20", "02-rate-40"} {
		if _, err := os.Stat(filepath.Join(dirs[0], "cells", cell, "bench_summary.json")); err != nil {
			t.Errorf("cell %s: %v", cell, err)
		}
	}
}

// A capacity search needs an SLO: the form says so at the field, as the
// command line would, and starts nothing.
func TestFormSweepSearchNeedsAnSLO(t *testing.T) {
	runsDir, out := t.TempDir(), t.TempDir()
	c := testCommon(runsDir, t.TempDir())
	m := newModel(c, form.New(c, sweepConfig(t, out)))
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	var tr transcript
	toSweepForm(t, &tr, tm)
	tm.Send(screentest.Key("right")) // concurrency list
	tm.Send(screentest.Key("right")) // capacity search: rate
	tr.waitFor(t, tm, "capacity search: rate")
	tm.Send(screentest.Key("enter"))
	tr.waitFor(t, tm, "the search starts at the first value")
	tm.Send(screentest.Key("enter"))
	tr.waitFor(t, tm, "┃ --slo")
	tm.Send(screentest.Key("enter"))
	tr.waitFor(t, tm, "✗ --search needs --slo")
	typeInto(tm, "ttft=fast")
	tm.Send(screentest.Key("enter"))
	tr.waitFor(t, tm, "✗ --slo")
	tm.Send(screentest.Key("esc"))
	tr.waitFor(t, tm, "[ Start ]")
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*model)
	if _, ok := fm.top().(*form.Model); !ok || len(fm.sweeps) != 0 {
		t.Errorf("top %T, %d sweeps: nothing should have started", fm.top(), len(fm.sweeps))
	}
	if dirs, _ := filepath.Glob(filepath.Join(out, "*")); len(dirs) != 0 {
		t.Errorf("folders written: %v", dirs)
	}
}

// q on a running sweep asks first; yes stops it, what ran is recorded,
// exit 130.
func TestSweepScreenStopAsks(t *testing.T) {
	runsDir, out := t.TempDir(), t.TempDir()
	c := testCommon(runsDir, t.TempDir())
	c.Now = time.Now
	cfg := sweepConfig(t, out)
	cfg.SetString("builtin_speed", "1")
	cfg.SetString("rp_num_requests", "40")
	cfg.SetString("rp_request_length", "2000")
	s, _ := route(c, common.StartSweep{Options: bsweep.Options{Config: cfg, Dimension: bsweep.Rate, Values: []float64{2, 4, 8}}})
	m := newModel(c, s)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	var tr transcript
	tr.waitFor(t, tm, "cell 1: rate 2")
	tm.Send(screentest.Key("q"))
	tr.waitFor(t, tm, "Stop the sweep?")
	tm.Send(screentest.Key("y"))
	tr.waitFor(t, tm, "done: ", "exit 130")
	tm.Send(screentest.Key("q"))
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(30*time.Second)).(*model)
	if fm.code != 130 {
		t.Errorf("exit code %d, want 130", fm.code)
	}
	b, err := os.ReadFile(filepath.Join(firstGlob(t, filepath.Join(out, "*-sweep-random-prefill-flow")), "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f bsweep.File
	json.Unmarshal(b, &f)
	if !f.Sweep.Interrupted || len(f.Cells) != 1 {
		t.Errorf("sweep.json after a stop: %s", b)
	}
}

func firstGlob(t *testing.T, pattern string) string {
	t.Helper()
	m, _ := filepath.Glob(pattern)
	if len(m) == 0 {
		t.Fatalf("nothing matches %s", pattern)
	}
	return m[0]
}

func TestGoldenFormSweep(t *testing.T) {
	eachSize(t, func(t *testing.T, c *common.Common, w, h int) string {
		cfg := config.Default()
		cfg.SetString("workload", config.RandomPrefill)
		cfg.SetString("engine_url", "builtin")
		return drive(t, c, form.New(c, cfg), w, h, func(tm *teatest.TestModel) {
			var tr transcript
			toSweepForm(t, &tr, tm)
			// The titles and descriptions that load in commands.
			tr.waitFor(t, tm, "--sweep-rate", "ttft=500ms", "> 1,2,4,8")
		})
	})
}
