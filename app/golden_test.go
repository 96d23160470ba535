package app

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/dialog"
	"github.com/kvbench/kvbench/screens/form"
	"github.com/kvbench/kvbench/screens/home"
	"github.com/kvbench/kvbench/screens/run"
	"github.com/kvbench/kvbench/screens/screentest"
)

var sizes = []struct{ w, h int }{{80, 24}, {140, 45}}

// eachSize renders a screen at every golden size and compares it with
// testdata/<Test>/<W>x<H>.golden; draw returns the full view.
func eachSize(t *testing.T, draw func(t *testing.T, c *common.Common, w, h int) string) {
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			c := testCommon("/home/me/.local/state/kvbench/runs", "/home/me/.config/kvbench")
			out := draw(t, c, sz.w, sz.h)
			golden.RequireEqual(t, []byte(out))
			checkFits(t, out, sz.w, sz.h)
		})
	}
}

// checkFits fails when a view is not exactly the terminal's size.
func checkFits(t *testing.T, out string, w, h int) {
	t.Helper()
	lines := strings.Split(out, "\n")
	if len(lines) != h {
		t.Errorf("view has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := lipgloss.Width(l); n > w {
			t.Errorf("line %d is %d cells wide (> %d): %q", i+1, n, w, l)
		}
	}
}

// press delivers a key and the screen routing its command asks for
// (a push, pop or an intent), the way the program would.
func press(m *model, k string) {
	_, cmd := m.Update(screentest.Key(k))
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case common.PushMsg, common.PopMsg, common.Intent:
		m.Update(msg)
	}
}

// drive runs the root in a test program at w x h, lets steps act on it,
// then quits and returns the final view.
func drive(t *testing.T, c *common.Common, s common.Screen, w, h int, steps func(tm *teatest.TestModel)) string {
	t.Helper()
	m := newModel(c, s)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h))
	if steps != nil {
		steps(tm)
	}
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*model)
	return fm.render()
}

// waitFor waits until the program has drawn every text.
func waitFor(t *testing.T, tm *teatest.TestModel, texts ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, s := range texts {
			if !strings.Contains(string(b), s) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
}

func TestGoldenHome(t *testing.T) {
	eachSize(t, func(t *testing.T, c *common.Common, w, h int) string {
		m := sized(c, home.New(c), w, h)
		m.Update(homeData())
		return m.render()
	})
}

func TestGoldenHomeFullHelp(t *testing.T) {
	eachSize(t, func(t *testing.T, c *common.Common, w, h int) string {
		m := sized(c, home.New(c), w, h)
		m.Update(homeData())
		press(m, "?")
		return m.render()
	})
}

func TestGoldenDeleteProfileDialog(t *testing.T) {
	eachSize(t, func(t *testing.T, c *common.Common, w, h int) string {
		m := sized(c, home.New(c), w, h)
		m.Update(homeData())
		for range config.Workloads {
			press(m, "down")
		}
		press(m, "x")
		if _, ok := m.top().(*dialog.Confirm); !ok {
			t.Fatalf("x on a profile opened %T, want the confirm dialog", m.top())
		}
		return m.render()
	})
}

func TestGoldenForm(t *testing.T) {
	eachSize(t, func(t *testing.T, c *common.Common, w, h int) string {
		cfg := config.Default()
		cfg.SetString("workload", config.LongDocQA)
		return drive(t, c, form.New(c, cfg), w, h, func(tm *teatest.TestModel) {
			waitFor(t, tm, "┃ --engine-url")
		})
	})
}

func TestGoldenFormWorkloadGroup(t *testing.T) {
	eachSize(t, func(t *testing.T, c *common.Common, w, h int) string {
		cfg := config.Default()
		cfg.SetString("workload", config.CacheProbe)
		return drive(t, c, form.New(c, cfg), w, h, func(tm *teatest.TestModel) {
			// The engine group's four fields, then cache-probe's own.
			for _, next := range []string{"┃ --model", "┃ --served-model-name", "┃ --api-key-env", "┃ --cp-tokens"} {
				tm.Send(screentest.Key("enter"))
				waitFor(t, tm, next)
			}
		})
	})
}

// long-doc-permutator's context length counts words: its field says how
// many tokens they make, as it is typed.
func TestGoldenFormLDPContextLength(t *testing.T) {
	eachSize(t, func(t *testing.T, c *common.Common, w, h int) string {
		cfg := config.Default()
		cfg.SetString("workload", config.LongDocPermutator)
		return drive(t, c, form.New(c, cfg), w, h, func(tm *teatest.TestModel) {
			for _, title := range editFocus(config.LongDocPermutator) {
				waitFor(t, tm, title)
				if title == "┃ --ldp-context-length" {
					break
				}
				tm.Send(screentest.Key("enter"))
			}
			// 5000 becomes 2000.
			for _, k := range []string{"ctrl+u", "2", "0", "0", "0"} {
				tm.Send(screentest.Key(k))
			}
			waitFor(t, tm, "≈ 5,160 tokens")
		})
	})
}

func TestGoldenFormLDPSummary(t *testing.T) {
	eachSize(t, func(t *testing.T, c *common.Common, w, h int) string {
		cfg := config.Default()
		cfg.SetString("workload", config.LongDocPermutator)
		cfg.SetString("engine_url", "builtin")
		return drive(t, c, form.New(c, cfg), w, h, func(tm *teatest.TestModel) {
			for _, title := range editFocus(config.LongDocPermutator) {
				waitFor(t, tm, title)
				tm.Send(screentest.Key("enter"))
			}
			waitFor(t, tm, "Summary", "12,900 (2.58/word")
		})
	})
}

func TestGoldenFormSummary(t *testing.T) {
	eachSize(t, func(t *testing.T, c *common.Common, w, h int) string {
		cfg := config.Default()
		cfg.SetString("workload", config.LongDocQA)
		cfg.SetString("engine_url", "http://gpu-box:8000")
		cfg.SetString("tokens_per_gb_kvcache", "6553")
		cfg.SetString("ldqa_document_length", "2000")
		return drive(t, c, form.New(c, cfg), w, h, func(tm *teatest.TestModel) {
			submitForm(t, tm)
		})
	})
}

func TestGoldenGuided(t *testing.T) {
	eachSize(t, func(t *testing.T, c *common.Common, w, h int) string {
		return drive(t, c, form.NewGuided(c, config.Default()), w, h, func(tm *teatest.TestModel) {
			waitFor(t, tm, "┃ --engine-url")
		})
	})
}

func TestGoldenRunLive(t *testing.T) {
	eachSize(t, func(t *testing.T, c *common.Common, w, h int) string {
		s := run.NewFromSource(c, &fakeSource{}, runInfo())
		m := sized(c, s, w, h)
		s.Feed(liveSnapshot(), liveEvents()...)
		return m.render()
	})
}

func TestGoldenRunStopDialog(t *testing.T) {
	eachSize(t, func(t *testing.T, c *common.Common, w, h int) string {
		s := run.NewFromSource(c, &fakeSource{}, runInfo())
		m := sized(c, s, w, h)
		s.Feed(liveSnapshot(), liveEvents()...)
		press(m, "q")
		if _, ok := m.top().(*dialog.Confirm); !ok {
			t.Fatalf("q during a run opened %T, want the stop dialog", m.top())
		}
		return m.render()
	})
}

func TestGoldenRunFinished(t *testing.T) {
	eachSize(t, func(t *testing.T, c *common.Common, w, h int) string {
		s := run.NewFromSource(c, &fakeSource{}, runInfo())
		m := sized(c, s, w, h)
		snap := liveSnapshot()
		snap.InFlight, snap.Elapsed, snap.Finished = 0, 20*time.Second, true
		s.Feed(snap, liveEvents()...)
		s.End(bench.Finish{Summary: finishedSummary(), ExitCode: 1})
		return m.render()
	})
}

func runInfo() run.Info {
	return run.Info{Workload: config.LongDocQA, Engine: "builtin", Model: "kvbench-sim",
		ID: "20260504-093000-long-doc-qa", Dir: "/runs/20260504-093000-long-doc-qa", Config: config.Default()}
}
