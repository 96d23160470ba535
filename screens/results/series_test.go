package results_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/bench/runs/seriestest"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/results"
)

// A series is one row of the explorer (its runs are not rows), with its
// run count and TTFT p50 median; enter opens the list of its runs, which
// live in the series folder, not in the runs directory.
func TestExplorerSeriesRow(t *testing.T) {
	dir := fixtureRuns(t)
	series := seriestest.Write(t, dir, "nightly", 5, runstest.Spec{Started: t0.Add(6 * time.Hour), Requests: 10, JitterMs: 2, Summary: true})
	l := openList(t, dir, 140, 45)
	rs := l.Runs()
	if len(rs) != 6 || rs[0].Series == nil || rs[0].Dir != series || rs[0].Series.Runs != 5 {
		t.Fatalf("rows: %d, first %+v", len(rs), rs[0])
	}
	v := l.View()
	for _, want := range []string{"series of 5 runs, TTFT p50 median", "5 runs, 1 series", "nightly"} {
		if !strings.Contains(v, want) {
			t.Errorf("%q not on the list:\n%s", want, v)
		}
	}
	m, root := press(t, l, "enter")
	open, ok := root[0].(common.OpenResults)
	if len(root) != 1 || !ok || len(open.Only) != 5 || !strings.HasPrefix(open.Only[0], series) {
		t.Fatalf("enter on a series sent %v", root)
	}
	// The list of its runs: five rows, read where they are.
	only := results.New(newCommon(dir, 140, 45)).Only(open.Only...)
	om, _ := drive(t, only, only.Init())
	runsList := om.(*results.List)
	got := runsList.Runs()
	if len(got) != 5 || slices.ContainsFunc(got, func(r runs.Run) bool { return r.Series != nil || !strings.HasPrefix(r.Dir, series) }) {
		t.Fatalf("the series' runs: %d rows", len(got))
	}
	if v := runsList.View(); !strings.Contains(v, "5 runs") {
		t.Errorf("runs of the series:\n%s", v)
	}
	// / series finds it; e (export) refuses it in words.
	m, _ = press(t, m, "/", "s", "e", "r", "i", "e", "s", "enter")
	if got := m.(*results.List).Runs(); len(got) != 1 || got[0].Series == nil {
		t.Errorf("filter series: %d rows", len(got))
	}
	if _, root = press(t, m, "e"); len(root) != 1 || !strings.Contains(root[0].(common.StatusMsg).Text, "a series is runs of one config") {
		t.Errorf("export of a series sent %v", root)
	}
}
