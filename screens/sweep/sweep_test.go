package sweep

import (
	"strings"
	"testing"

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
	m.apply(Event{Kind: Done, Code: 0, Dir: "/runs/x-sweep", File: &bsweep.File{Result: &bsweep.Result{MaxValue: 10}}})
	v := m.View()
	for _, want := range []string{"TTFT p50 / p99 (ms) by achieved req/s", "good fraction (%)", "19.5", "400.0", "50.0", "highest passing rate 10", "/runs/x-sweep"} {
		if !strings.Contains(v, want) {
			t.Errorf("%q missing:\n%s", want, v)
		}
	}
	if !strings.ContainsAny(v, "⠁⠂⠄⡀⠈⠐⠠⢀╭╮╯╰─│") {
		t.Errorf("no curve drawn:\n%s", v)
	}
	for _, sz := range [][2]int{{40, 12}, {250, 80}, {39, 11}, {1, 1}} {
		m.SetSize(sz[0], sz[1])
		out := m.View()
		if sz[0] < minW && out != "terminal too small" {
			t.Errorf("%v: %q", sz, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if w := len([]rune(l)); sz[0] >= minW && w > sz[0] {
				t.Errorf("%v: line of %d columns", sz, w)
			}
		}
	}
}
