package sweep

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	bsweep "github.com/kvbench/kvbench/bench/sweep"
	"github.com/kvbench/kvbench/screens/screentest"
)

func init() { screentest.PinColors() }

func f(v float64) *float64 { return &v }

// TestSweepScreen: cells appear in the table and the curve as they
// finish, the end says what passed, every size renders.
func TestSweepScreen(t *testing.T) {
	events := make(chan Event, 8)
	m := New(screentest.Common(100, 30, screentest.Now), Info{Workload: "random-prefill", Dimension: bsweep.Rate, Values: []float64{10, 20}, SLO: true}, events)
	m.SetSize(100, 30)
	if v := m.View(); !strings.Contains(v, "random-prefill over rate 10,20") || !strings.Contains(v, "the curve draws as cells finish") {
		t.Fatalf("empty sweep:\n%s", v)
	}
	yes := true
	for i, c := range []bsweep.Cell{
		{Value: 10, AchievedRate: f(9.8), P50TTFTms: f(20), P99TTFTms: f(40), GoodFraction: f(1), Delivered: &yes},
		{Value: 20, AchievedRate: f(19.5), P50TTFTms: f(80), P99TTFTms: f(400), GoodFraction: f(0.5), Delivered: &yes},
	} {
		m.apply(Event{Kind: CellDone, Index: i, Cell: c})
	}
	if v := m.View(); !strings.Contains(v, "cell 2 done, next cell starting") {
		t.Errorf("between cells:\n%s", v)
	}
	m.apply(Event{Kind: Done, Code: 0, Dir: "/runs/x-sweep", File: &bsweep.File{Result: &bsweep.Result{MaxValue: 10}}})
	v := m.View()
	for _, want := range []string{"TTFT p50 / p99 (ms)", "●─ p99", "○⠒ p50", "good fraction (%)", "req/s achieved", "19.5", "400.0", "50.0",
		"highest passing rate 10", "┆ highest passing rate 10 (9.8 req/s achieved)", "/runs/x-sweep"} {
		if !strings.Contains(v, want) {
			t.Errorf("%q missing:\n%s", want, v)
		}
	}
	if strings.Count(v, "●") < 1+2 || strings.Count(v, "○") < 1+2 || strings.Count(v, "◆") < 2 {
		t.Errorf("every cell is marked on each of its curves:\n%s", v)
	}
	for _, sz := range [][2]int{{40, 12}, {60, 20}, {250, 80}, {39, 11}, {1, 1}} {
		m.SetSize(sz[0], sz[1])
		out := m.View()
		if sz[0] < minW && out != "terminal too small" {
			t.Errorf("%v: %q", sz, out)
		}
		lines := strings.Split(out, "\n")
		if len(lines) > sz[1] {
			t.Errorf("%v: %d lines", sz, len(lines))
		}
		for _, l := range lines {
			if w := ansi.StringWidth(l); sz[0] >= minW && w > sz[0] {
				t.Errorf("%v: line of %d columns", sz, w)
			}
		}
	}
}

// searchCells are the cells of a capacity search in the order it ran
// them: doubling from 4 to 16 (which fails), then bisecting back.
func searchCells() []bsweep.Cell {
	yes, no := true, false
	return []bsweep.Cell{
		{Value: 4, AchievedRate: f(3.96), P50TTFTms: f(42), P99TTFTms: f(120), GoodFraction: f(1), Delivered: &yes},
		{Value: 8, AchievedRate: f(7.9), P50TTFTms: f(55), P99TTFTms: f(210), GoodFraction: f(0.98), Delivered: &yes},
		{Value: 16, AchievedRate: f(13.1), P50TTFTms: f(380), P99TTFTms: f(1450), GoodFraction: f(0.31), Delivered: &no},
		{Value: 12, AchievedRate: f(11.8), P50TTFTms: f(120), P99TTFTms: f(620), GoodFraction: f(0.84), Delivered: &yes},
		{Value: 10, AchievedRate: f(9.9), P50TTFTms: f(70), P99TTFTms: f(380), GoodFraction: f(0.93), Delivered: &yes},
	}
}

func searchInfo() Info {
	return Info{Workload: "random-prefill", Dimension: bsweep.Rate, Values: []float64{4}, Search: true, MaxCells: 12,
		SLO: true, TTFTSLOms: f(500), GoodputTarget: f(0.9)}
}

// The curve joins the cells in load order, whatever order the search ran
// them in: every series of both charts ascends in x.
func TestCurvesInRateOrder(t *testing.T) {
	m := New(screentest.Common(80, 24, screentest.Now), searchInfo(), nil)
	for i, c := range searchCells() {
		m.apply(Event{Kind: CellDone, Index: i, Cell: c})
	}
	cv := m.curves()
	want := []float64{3.96, 7.9, 9.9, 11.8, 13.1}
	for name, s := range map[string][]float64{"p50": xs(cv.p50), "p99": xs(cv.p99), "good": xs(cv.good)} {
		if !slices.Equal(s, want) {
			t.Errorf("%s drawn through x %v, want %v", name, s, want)
		}
	}
	if got := cv.p99[len(cv.p99)-1].Y; got != 1450 {
		t.Errorf("the last p99 point is %v, want the 16 req/s cell's 1450", got)
	}
	// The best cell so far is the capacity mark while the search runs.
	c, final, ok := m.capacity()
	if !ok || final || c.Value != 10 {
		t.Errorf("capacity so far = %v, final %v, ok %v; want 10, not final", c.Value, final, ok)
	}
}

func xs(pts []canvas.Float64Point) []float64 {
	out := make([]float64, len(pts))
	for i, p := range pts {
		out[i] = p.X
	}
	return out
}

// liveMidSweep is the screen of a search that has run five cells and is
// in the sixth.
func liveMidSweep(w, h int) *Model {
	m := New(screentest.Common(w, h, screentest.Now), searchInfo(), nil)
	m.SetSize(w, h)
	for i, c := range searchCells() {
		m.apply(Event{Kind: CellStarted, Index: i, Value: c.Value})
		m.apply(Event{Kind: CellDone, Index: i, Cell: c})
	}
	m.apply(Event{Kind: CellStarted, Index: 5, Value: 11})
	m.snap = bench.Snapshot{Phase: "measure", PhaseTotal: 200}
	m.snap.Done = 74
	m.snap.Load = load.Live{AchievedRate: f(10.9), GoodFraction: f(0.91)}
	return m
}

// Goldens of the sweep screen mid-search (live) and of a sweep folder
// reviewed from the explorer, at 80x24 and 200x60.
func TestSweepChartGolden(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {200, 60}} {
		t.Run(fmt.Sprintf("live-%dx%d", sz[0], sz[1]), func(t *testing.T) {
			v := liveMidSweep(sz[0], sz[1]).View()
			checkFits(t, v, sz[0], sz[1])
			for _, want := range []string{"cell 6: rate 11, 74 requests done of 200 in measure, 10.9 req/s, good 91%",
				"┄ TTFT SLO 500 ms", "so far: rate 10"} {
				if !strings.Contains(v, want) {
					t.Errorf("%q missing:\n%s", want, v)
				}
			}
			golden.RequireEqual(t, []byte(v))
		})
	}
	dir := t.TempDir()
	var cells []runstest.SweepCell
	for _, c := range searchCells() {
		cells = append(cells, runstest.SweepCell{Value: c.Value, Achieved: c.AchievedRate, P50TTFTms: c.P50TTFTms, P99TTFTms: c.P99TTFTms,
			GoodFraction: c.GoodFraction, Undelivered: !*c.Delivered})
	}
	sd := runstest.WriteSweep(t, dir, runstest.SweepSpec{Name: "cap", Workload: "random-prefill", Search: true,
		Started: time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local), GoodputTarget: f(0.9), MaxValue: f(10), GoodFractionAtMax: f(0.93), Cells: cells})
	for _, sz := range [][2]int{{80, 24}, {200, 60}} {
		t.Run(fmt.Sprintf("review-%dx%d", sz[0], sz[1]), func(t *testing.T) {
			m := NewReview(screentest.Common(sz[0], sz[1], screentest.Now), sd)
			m.Update(m.Init()())
			v := strings.ReplaceAll(m.View(), dir, "$RUNS")
			checkFits(t, v, sz[0], sz[1])
			for _, want := range []string{"5 cell(s) · highest passing rate 10 (good fraction >= 90%)",
				"┄ TTFT SLO 500 ms", "┆ highest passing rate 10"} {
				if !strings.Contains(v, want) {
					t.Errorf("%q missing:\n%s", want, v)
				}
			}
			golden.RequireEqual(t, []byte(v))
		})
	}
}

func checkFits(t *testing.T, v string, w, h int) {
	t.Helper()
	lines := strings.Split(v, "\n")
	if len(lines) > h {
		t.Errorf("%d lines at height %d", len(lines), h)
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("line %d is %d wide at %d: %q", i, n, w, l)
		}
	}
}
