package sweep

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
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
	m.apply(Event{Kind: Done, Code: 0, Dir: "/runs/x-sweep", File: &bsweep.File{Result: &bsweep.Result{MaxValue: f(10)}}})
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
// them: doubling from 4 to 16 (whose load was not delivered), then
// bisecting back; each judged as the sweep judges it.
func searchCells() []bsweep.Cell {
	yes, no := true, false
	cells := []bsweep.Cell{
		{Value: 4, AchievedRate: f(3.96), P50TTFTms: f(42), P99TTFTms: f(120), GoodFraction: f(1), Delivered: &yes},
		{Value: 8, AchievedRate: f(7.9), P50TTFTms: f(55), P99TTFTms: f(210), GoodFraction: f(0.98), Delivered: &yes},
		{Value: 16, AchievedRate: f(13.1), P50TTFTms: f(380), P99TTFTms: f(1450), GoodFraction: f(0.31), Delivered: &no,
			Reasons: []string{"achieved 13.10 req/s, 82% of the 16 req/s target", "client overloaded: dispatch lag 40 ms > 10 ms"}},
		{Value: 12, AchievedRate: f(11.8), P50TTFTms: f(120), P99TTFTms: f(620), GoodFraction: f(0.84), Delivered: &yes},
		{Value: 10, AchievedRate: f(9.9), P50TTFTms: f(70), P99TTFTms: f(380), GoodFraction: f(0.93), Delivered: &yes},
	}
	for i := range cells {
		bsweep.Judge(&cells[i], bsweep.Criteria{Dimension: bsweep.Rate, GoodputTarget: f(0.9)}, "")
	}
	return cells
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
				"┄ TTFT SLO 500 ms", "so far: rate 10", "31.0 not delivered", "84.0          fail",
				"rate 16 not delivered: achieved 13.10 req/s, 82% of the 16 req/s target"} {
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
			GoodFraction: c.GoodFraction, Undelivered: !*c.Delivered, Status: c.Status, Reasons: c.Reasons})
	}
	sd := runstest.WriteSweep(t, dir, runstest.SweepSpec{Name: "cap", Workload: "random-prefill", Search: true,
		Started: time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local), GoodputTarget: f(0.9), MaxValue: f(10), GoodFractionAtMax: f(0.93), Cells: cells,
		UndeliveredAbove: []record.Undelivered{{Value: 16, Reason: "achieved 13.10 req/s, 82% of the 16 req/s target"}}})
	for _, sz := range [][2]int{{80, 24}, {200, 60}} {
		t.Run(fmt.Sprintf("review-%dx%d", sz[0], sz[1]), func(t *testing.T) {
			m := NewReview(screentest.Common(sz[0], sz[1], screentest.Now), sd)
			m.Update(m.Init()())
			v := strings.ReplaceAll(m.View(), dir, "$RUNS")
			checkFits(t, v, sz[0], sz[1])
			for _, want := range []string{"5 cell(s) · highest passing rate 10 (good fraction >= 90%), 16 not delivered",
				"┄ TTFT SLO 500 ms", "┆ highest passing rate 10", "rate 4 pass"} {
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

// A rate list whose every cell was held back (not delivered) passes
// nothing: the end says no delivered rate passed and lists them, no
// capacity is marked, and each cell shows as not delivered with its
// reason, live and in review.
func TestSweepScreenNothingDelivered(t *testing.T) {
	no := false
	held := "50 of 150 requests were held back by the workload's design, not by an overloaded client: its in-flight cap"
	var cells []bsweep.Cell
	for _, v := range []float64{2, 5, 10} {
		c := bsweep.Cell{Value: v, AchievedRate: f(min(v, 5)), P50TTFTms: f(30), P99TTFTms: f(60), GoodFraction: f(1), Delivered: &no,
			Reasons: []string{held}}
		bsweep.Judge(&c, bsweep.Criteria{Dimension: bsweep.Rate, GoodputTarget: f(0.9)}, "")
		cells = append(cells, c)
	}
	res := bsweep.ResultOf(cells, 0.9)
	if res == nil || res.MaxValue != nil || len(res.UndeliveredAbove) != 3 || res.UndeliveredAbove[2].Reason != held {
		t.Fatalf("result %+v", res)
	}
	info := Info{Workload: "multi-round-chat", Dimension: bsweep.Rate, Values: []float64{2, 5, 10}, SLO: true, TTFTSLOms: f(500), GoodputTarget: f(0.9)}
	m := New(screentest.Common(100, 30, screentest.Now), info, nil)
	m.SetSize(100, 30)
	for i, c := range cells {
		m.apply(Event{Kind: CellDone, Index: i, Cell: c})
	}
	if _, _, ok := m.capacity(); ok {
		t.Error("a cell not delivered counts as passing while the sweep runs")
	}
	m.apply(Event{Kind: Done, Code: 0, Dir: "/runs/x-sweep", File: &bsweep.File{Result: res}})
	v := m.View()
	for _, want := range []string{"done: 3 cell(s), exit 0; no delivered rate passed, 2,5,10 not delivered",
		"100.0 not delivered", "rate 10 not delivered: " + held[:40]} {
		if !strings.Contains(v, want) {
			t.Errorf("%q missing:\n%s", want, v)
		}
	}
	if strings.Contains(v, "highest passing") || strings.Contains(v, "┆") {
		t.Errorf("a capacity is claimed:\n%s", v)
	}

	dir := t.TempDir()
	var rc []runstest.SweepCell
	for _, c := range cells {
		rc = append(rc, runstest.SweepCell{Value: c.Value, Achieved: c.AchievedRate, P50TTFTms: c.P50TTFTms, P99TTFTms: c.P99TTFTms,
			GoodFraction: c.GoodFraction, Undelivered: true, Status: c.Status, Reasons: c.Reasons})
	}
	sd := runstest.WriteSweep(t, dir, runstest.SweepSpec{Name: "held", Workload: "multi-round-chat", GoodputTarget: f(0.9), Cells: rc,
		UndeliveredAbove: res.UndeliveredAbove})
	r := NewReview(screentest.Common(100, 30, screentest.Now), sd)
	r.Update(r.Init()())
	r.reviewKey(tea.KeyMsg{Type: tea.KeyDown})
	v = r.View()
	for _, want := range []string{"3 cell(s) · no delivered rate passed; 2,5,10 not delivered", "rate 5 not delivered: " + held[:40]} {
		if !strings.Contains(v, want) {
			t.Errorf("review: %q missing:\n%s", want, v)
		}
	}
	if strings.Contains(v, "highest passing") {
		t.Errorf("review claims a capacity:\n%s", v)
	}
}

// A cell whose record could not be written is cut: its row says so, the
// line under the table gives what the record lacks, and the end names
// where the sweep stopped (exit 4).
func TestSweepScreenCut(t *testing.T) {
	yes := true
	m := New(screentest.Common(100, 30, screentest.Now), searchInfo(), nil)
	m.SetSize(100, 30)
	good := bsweep.Cell{Value: 4, AchievedRate: f(3.9), P50TTFTms: f(40), P99TTFTms: f(90), GoodFraction: f(1), Delivered: &yes}
	bsweep.Judge(&good, bsweep.Criteria{Dimension: bsweep.Rate, GoodputTarget: f(0.9)}, "")
	cut := bsweep.Cell{Value: 8, AchievedRate: f(7.9), P50TTFTms: f(45), P99TTFTms: f(95), GoodFraction: f(1), Delivered: &yes, ExitCode: 4}
	bsweep.Judge(&cut, bsweep.Criteria{Dimension: bsweep.Rate, GoodputTarget: f(0.9)}, "the run record in /runs/x/cells/02-rate-8 is incomplete: requests.jsonl holds 12 complete lines and lacks 1 finished request(s) (no space left on device)")
	m.apply(Event{Kind: CellDone, Index: 0, Cell: good})
	m.apply(Event{Kind: CellDone, Index: 1, Cell: cut})
	res := bsweep.ResultOf([]bsweep.Cell{good, cut}, 0.9)
	m.apply(Event{Kind: Done, Code: 4, Dir: "/runs/x", File: &bsweep.File{Result: res}})
	v := m.View()
	for _, want := range []string{"done: 2 cell(s), exit 4; highest passing rate 4; cut at rate 8: its record is incomplete",
		"100.0           cut", "rate 8 cut: the run record in /runs/x/cells/02-rate-8 is incomplete"} {
		if !strings.Contains(v, want) {
			t.Errorf("%q missing:\n%s", want, v)
		}
	}
}
