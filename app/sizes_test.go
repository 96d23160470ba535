package app

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/doctor"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	bsweep "github.com/kvbench/kvbench/bench/sweep"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/compare"
	"github.com/kvbench/kvbench/screens/dialog"
	"github.com/kvbench/kvbench/screens/form"
	"github.com/kvbench/kvbench/screens/home"
	"github.com/kvbench/kvbench/screens/results"
	"github.com/kvbench/kvbench/screens/run"
	"github.com/kvbench/kvbench/screens/screentest"
	sweepscreen "github.com/kvbench/kvbench/screens/sweep"
)

// sweep is the order of terminal sizes every screen goes through: down
// to 40x12 and up to 250x80, with jumps both ways, as an SSH user's
// resizes come.
var sweep = [][2]int{{80, 24}, {40, 12}, {250, 80}, {60, 20}, {120, 35}, {200, 60}, {41, 13}, {100, 30}, {40, 12}, {250, 80}, {80, 24}}

// scene is one screen (or a stack of them) in a known state, and the
// texts that must be on screen at every size.
type scene struct {
	name  string
	build func(t *testing.T, c *common.Common) *model
	// must is visible at every size; wide is visible from 80x24 up.
	must, wide []string
}

// settle starts a screen in a test program at 80x24, lets steps bring
// it to the state wanted, and returns the root once the program ended:
// from then on the test drives it by hand.
func settle(t *testing.T, c *common.Common, s common.Screen, steps func(tm *teatest.TestModel)) *model {
	t.Helper()
	m := newModel(c, s)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	if steps != nil {
		steps(tm)
	}
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	return tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*model)
}

func sweepRuns(t *testing.T) (dir string, a, b string) {
	dir = t.TempDir()
	t1 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a = runstest.Write(t, dir, runstest.Spec{Name: "baseline", Started: t1, Requests: 30, ReusedEvery: 2, Summary: true})
	b = runstest.Write(t, dir, runstest.Spec{Name: "fast-cache", Started: t1.Add(time.Hour), Requests: 30, BaseTTFTms: 60,
		ReusedEvery: 4, FailEvery: 9, Summary: true, ExitCode: 1, Workload: config.LongDocPermutator})
	runstest.Write(t, dir, runstest.Spec{Started: t1.Add(2 * time.Hour), Requests: 12, Summary: true, Interrupted: true, ExitCode: 130})
	// The oldest row: a capacity search, the last row of the explorer.
	runstest.WriteRecordedSweep(t, dir, runstest.RecordedSweep{Started: t1.Add(-time.Hour), Values: []float64{4, 8, 6}, Search: true, SLO: true, PassUpTo: 6})
	return dir, a, b
}

func deadEngineReport() doctor.Report {
	r := doctor.Report{EngineURL: "http://127.0.0.1:9/v1", Checks: []doctor.Check{
		{ID: doctor.IDModels, Status: doctor.Fail, Message: "cannot reach http://127.0.0.1:9/v1/models: connection refused",
			Hint: "start the engine, or fix --engine-url (kvbench adds /v1 to it)"}}}
	for _, id := range []string{doctor.IDStream, doctor.IDUsage, doctor.IDCachedTokens, doctor.IDPrefixCache, doctor.IDMetrics} {
		r.Checks = append(r.Checks, doctor.Check{ID: id, Status: doctor.Fail, Message: "skipped: engine unreachable", Hint: "see the models check"})
	}
	return r
}

func scenes(t *testing.T) []scene {
	runsDir, runA, runB := sweepRuns(t)
	// explorer opens the results and presses keys, each followed by
	// the text that says it took effect.
	explorer := func(t *testing.T, c *common.Common, steps ...[2]string) *model {
		c.RunsDir = runsDir
		return settle(t, c, results.New(c), func(tm *teatest.TestModel) {
			waitFor(t, tm, "3 runs")
			for _, s := range steps {
				tm.Send(screentest.Key(s[0]))
				waitFor(t, tm, s[1])
			}
		})
	}
	open := [2]string{"enter", "[1 Summary]"}
	// The Requests tab shows "row 1 of N" as soon as the index lands, but
	// its rows are read by a command of their own (a window of
	// requests.jsonl) and stay "…" until that page arrives. The settled
	// model is driven by hand, where no command runs, so the scene waits
	// for the first row's id: the page is in.
	requests := [2]string{"3", "req-0"}
	live := func(c *common.Common) (*model, *run.Model) {
		s := run.NewFromSource(c, &fakeSource{}, runInfo())
		m := sized(c, s, 80, 24)
		s.Feed(liveSnapshot(), liveEvents()...)
		return m, s
	}
	return []scene{
		{name: "home", build: func(t *testing.T, c *common.Common) *model {
			m := sized(c, home.New(c), 80, 24)
			m.Update(homeData())
			return m
		}, must: []string{"kvbench › home", "› long-doc-qa"}, wide: []string{"Saved profiles", "Recent runs"}},
		{name: "form", build: func(t *testing.T, c *common.Common) *model {
			cfg := config.Default()
			cfg.SetString("workload", config.LongDocQA)
			return settle(t, c, form.New(c, cfg), func(tm *teatest.TestModel) { waitFor(t, tm, "┃ --engine-url") })
		}, must: []string{"configure long-doc-qa", "--engine-url"}},
		{name: "form summary", build: func(t *testing.T, c *common.Common) *model {
			cfg := config.Default()
			cfg.SetString("workload", config.LongDocQA)
			cfg.SetString("engine_url", "http://gpu-box:8000")
			cfg.SetString("tokens_per_gb_kvcache", "6553")
			return settle(t, c, form.New(c, cfg), func(tm *teatest.TestModel) { submitForm(t, tm) })
		}, must: []string{"configure long-doc-qa", "Summary"}, wide: []string{"Start"}},
		{name: "form sweep", build: func(t *testing.T, c *common.Common) *model {
			cfg := config.Default()
			cfg.SetString("workload", config.RandomPrefill)
			cfg.SetString("engine_url", "builtin")
			return settle(t, c, form.New(c, cfg), func(tm *teatest.TestModel) {
				var tr transcript
				toSweepForm(t, &tr, tm)
			})
		}, must: []string{"Sweep"}, wide: []string{"--sweep-rate"}},
		{name: "sweep", build: func(t *testing.T, c *common.Common) *model {
			events := make(chan sweepscreen.Event, 3)
			yes := true
			for i, v := range []float64{10, 20} {
				p50, p99, good := 20*v, 40*v, 1-v/40
				events <- sweepscreen.Event{Kind: sweepscreen.CellDone, Index: i, Cell: bsweep.Cell{Value: v, AchievedRate: &v,
					P50TTFTms: &p50, P99TTFTms: &p99, GoodFraction: &good, Delivered: &yes}}
			}
			events <- sweepscreen.Event{Kind: sweepscreen.Done, Dir: "/runs/20260505-140000-sweep-random-prefill"}
			info := sweepscreen.Info{Workload: config.RandomPrefill, Dimension: bsweep.Rate, Values: []float64{10, 20}, SLO: true}
			return settle(t, c, sweepscreen.New(c, info, events), func(tm *teatest.TestModel) { waitFor(t, tm, "done: 2 cell(s)") })
		}, must: []string{"Sweep", "done: 2 cell(s)"}, wide: []string{"TTFT p50 / p99"}},
		{name: "guided", build: func(t *testing.T, c *common.Common) *model {
			return settle(t, c, form.NewGuided(c, config.Default()), func(tm *teatest.TestModel) { waitFor(t, tm, "┃ --engine-url") })
		}, must: []string{"guided setup", "--engine-url"}},
		{name: "live run", build: func(t *testing.T, c *common.Common) *model {
			m, _ := live(c)
			return m
		}, must: []string{"elapsed 00:14", "measured 12/20", "in flight"}, wide: []string{"TTFT ms", "tok/s", "0s", "10s"}},
		{name: "stop dialog", build: func(t *testing.T, c *common.Common) *model {
			m, _ := live(c)
			press(m, "q")
			if _, ok := m.top().(*dialog.Confirm); !ok {
				t.Fatalf("q opened %T", m.top())
			}
			return m
		}, must: []string{"Stop the run?"}, wide: []string{"y yes"}},
		{name: "finished run", build: func(t *testing.T, c *common.Common) *model {
			m, s := live(c)
			snap := liveSnapshot()
			snap.InFlight, snap.Elapsed, snap.Finished = 0, 20*time.Second, true
			s.Feed(snap)
			s.End(bench.Finish{Summary: finishedSummary(), ExitCode: 1})
			return m
		}, must: []string{"finished with failures", "Summary"}, wide: []string{"Engine Benchmark Result"}},
		{name: "explorer", build: func(t *testing.T, c *common.Common) *model { return explorer(t, c) },
			must: []string{"Results", "Started"}, wide: []string{"3 runs", "long-doc-permutator", "interrupted"}},
		{name: "delete dialog", build: func(t *testing.T, c *common.Common) *model { return explorer(t, c, [2]string{"d", "Delete"}) },
			must: []string{"Delete"}},
		{name: "detail summary", build: func(t *testing.T, c *common.Common) *model { return explorer(t, c, open) },
			must: []string{"1 Summary"}, wide: []string{"Run"}},
		{name: "detail charts", build: func(t *testing.T, c *common.Common) *model {
			return explorer(t, c, open, [2]string{"2", "TTFT (ms) over the run"})
		},
			must: []string{"2 Charts"}, wide: []string{"TTFT (ms) over the run"}},
		{name: "detail requests", build: func(t *testing.T, c *common.Common) *model { return explorer(t, c, open, requests) },
			must: []string{"3 Requests"}, wide: []string{"row 1 of", "req-0"}},
		{name: "sweep row", build: func(t *testing.T, c *common.Common) *model { return explorer(t, c, [2]string{"G", "sweep"}) },
			must: []string{"Results", "sweep"}, wide: []string{"3 runs, 1 sweep", "3 cells"}},
		{name: "sweep review", build: func(t *testing.T, c *common.Common) *model {
			return explorer(t, c, [2]string{"G", "sweep"}, [2]string{"enter", "highest passing rate 6"})
		}, must: []string{"Sweep 2026"}, wide: []string{"highest passing rate 6", "P99 TTFT", "›"}},
		{name: "copy dialog", build: func(t *testing.T, c *common.Common) *model { return explorer(t, c, [2]string{"y", "kvbench run"}) },
			must: []string{"Copy"}, wide: []string{"i id", "c command"}},
		{name: "rename dialog", build: func(t *testing.T, c *common.Common) *model { return explorer(t, c, [2]string{"r", "Rename"}) },
			must: []string{"Rename"}, wide: []string{"enter save"}},
		{name: "delete marked", build: func(t *testing.T, c *common.Common) *model {
			return explorer(t, c, [2]string{"space", "A"}, [2]string{"m", "B"}, [2]string{"d", "Delete 2 runs?"})
		}, must: []string{"Delete"}, wide: []string{"Delete 2 runs?"}},
		{name: "request detail", build: func(t *testing.T, c *common.Common) *model {
			return explorer(t, c, open, requests, [2]string{"enter", "Timings"})
		},
			must: []string{"request "}, wide: []string{"Timings", "request_id"}},
		{name: "compare", build: func(t *testing.T, c *common.Common) *model {
			c.RunsDir = runsDir
			return settle(t, c, compare.New(c, runA, runB), func(tm *teatest.TestModel) { waitFor(t, tm, "better") })
		}, must: []string{"Compare"}, wide: []string{"better"}},
		{name: "doctor", build: func(t *testing.T, c *common.Common) *model {
			d := home.NewDoctor(c, "http://127.0.0.1:9")
			m := sized(c, d, 80, 24)
			m.Update(d.Answer(deadEngineReport(), nil))
			return m
		}, must: []string{"doctor", "1 fail"}, wide: []string{"SKIP  stream"}},
	}
}

// Every screen, through every size of the sweep: no panic, exactly the
// terminal's size, and what the screen is for still on it.
func TestEveryScreenAtEverySize(t *testing.T) {
	for _, sc := range scenes(t) {
		t.Run(sc.name, func(t *testing.T) {
			c := testCommon("/runs", t.TempDir())
			m := sc.build(t, c)
			for _, sz := range sweep {
				w, h := sz[0], sz[1]
				var out string
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("%dx%d: panic: %v", w, h, r)
						}
					}()
					m.Update(tea.WindowSizeMsg{Width: w, Height: h})
					out = m.render()
				}()
				checkFits(t, out, w, h)
				want := sc.must
				if w >= 80 && h >= 24 {
					want = append(want[:len(want):len(want)], sc.wide...)
				}
				for _, s := range want {
					if !strings.Contains(out, s) {
						t.Errorf("%dx%d: %q is not on screen:\n%s", w, h, s, out)
					}
				}
			}
		})
	}
}

// A key message carrying several runes (key repeat over a slow link, a
// paste) reaches the screen as one key per rune.
func TestKeyBatchSplitAtTheRoot(t *testing.T) {
	c := testCommon("/runs", "/cfg")
	rec := &sizeRecorder{}
	m := newModel(c, rec)
	m.Update(screentest.Key("jjk"))
	if got := strings.Join(rec.keys, ","); got != "j,j,k" {
		t.Errorf("screen saw %q, want j,j,k", got)
	}

	// A paste into a text field stays text.
	typing := &sizeRecorder{typing: true}
	m = newModel(c, typing)
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("qq"), Paste: true})
	if len(typing.keys) != 1 || len(m.stack) != 1 {
		t.Errorf("paste while typing: keys %q, stack %d", typing.keys, len(m.stack))
	}

	// On a real screen: three downs in one read move the cursor three
	// rows, and a q in the batch still goes back.
	h := home.New(c)
	m = sized(c, h, 100, 30)
	m.Update(homeData())
	m.Update(screentest.Key("jjj"))
	if out := m.render(); !strings.Contains(out, "› "+config.Workloads[3]) {
		t.Errorf("jjj did not move three rows:\n%s", out)
	}
	_, cmd := m.Update(screentest.Key("jq"))
	if !m.quitting || cmd == nil {
		t.Errorf("q in a batch did not quit the last screen")
	}
}

func TestSweepSizesSpanTheRange(t *testing.T) {
	minW, minH, maxW, maxH := 1<<30, 1<<30, 0, 0
	for _, s := range sweep {
		minW, minH, maxW, maxH = min(minW, s[0]), min(minH, s[1]), max(maxW, s[0]), max(maxH, s[1])
	}
	if got := fmt.Sprintf("%dx%d..%dx%d", minW, minH, maxW, maxH); got != "40x12..250x80" {
		t.Errorf("sweep spans %s", got)
	}
}

// The status line says what happened last; the next key clears it, so
// it never stays after it stopped being true.
func TestKeyClearsStatus(t *testing.T) {
	c := testCommon("/runs", "/cfg")
	m := newModel(c, &sizeRecorder{})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(common.StatusMsg{Text: "preparing the next run…"})
	if !strings.Contains(m.render(), "preparing the next run") {
		t.Fatal("status not shown")
	}
	m.Update(screentest.Key("j"))
	if strings.Contains(m.render(), "preparing the next run") {
		t.Error("the status stayed after a key")
	}
}
