package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/screens/run"
	"github.com/kvbench/kvbench/screens/screentest"
)

// On the finished-run screen o writes the run's HTML report and shows its
// path; enter still opens the run in the explorer.
func TestFinishedRunReportKey(t *testing.T) {
	runsDir := t.TempDir()
	dir := runstest.Write(t, runsDir, runstest.Spec{Name: "done", Started: t0, Requests: 16, ReusedEvery: 2, Summary: true})
	c := testCommon(runsDir, t.TempDir())
	info := runInfo()
	info.ID, info.Dir = filepath.Base(dir), dir
	s := run.NewFromSource(c, &fakeSource{}, info)
	snap := liveSnapshot()
	snap.InFlight, snap.Elapsed, snap.Finished = 0, 20*time.Second, true
	s.Feed(snap, liveEvents()...)
	s.End(bench.Finish{Summary: finishedSummary(), ExitCode: 0})
	var tr transcript
	drive(t, c, s, 120, 40, func(tm *teatest.TestModel) {
		tr.waitFor(t, tm, "o HTML report")
		tm.Send(screentest.Key("o"))
		tr.waitFor(t, tm, "Wrote the report of", "report.html")
		if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
			t.Errorf("o wrote no report: %v", err)
		}
		tm.Send(screentest.Key("esc"))
		tr.waitFor(t, tm, "enter open in explorer")
		tm.Send(screentest.Key("enter"))
		tr.waitFor(t, tm, "next view")
	})
}
