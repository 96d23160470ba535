//go:build unix && !aix && !solaris

package results_test

import (
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/results"
	"github.com/kvbench/kvbench/screens/screentest"
)

// A run being written (its writer, here in the test process, holds the
// folder's lock) is listed running and is not deleted, alone or marked:
// the explorer says why on its status line and asks nothing. Once the
// writer ends without a summary, a reload shows it incomplete and d
// deletes it.
func TestFlowRunningNotDeleted(t *testing.T) {
	dir := t.TempDir()
	runstest.Write(t, dir, runstest.Spec{Name: "done", Started: t0, Requests: 10, Summary: true})
	w := runstest.Start(t, dir, runstest.Spec{Name: "live", Started: t0.Add(time.Hour), Requests: 6})
	c := newCommon(dir, 140, 44)
	root := newTestRoot(c, results.New(c))
	tm := teatest.NewTestModel(t, root, teatest.WithInitialTermSize(140, 45))
	waitFor := func(what ...string) { t.Helper(); waitAll(t, tm, what...) }
	waitFor("2 runs", "running")
	// The newest, under the cursor, is the run in progress.
	tm.Send(screentest.Key("d"))
	waitFor("not deleted: " + w.ID() + " is still running")
	// Marked with the finished run: neither is deleted.
	tm.Send(screentest.Key("space"))
	tm.Send(screentest.Key("space"))
	waitFor("B 20260301-120000-long-doc-qa-done · c compares")
	tm.Send(screentest.Key("d"))
	waitFor("not deleted: the marked "+w.ID()+" is still running", "unmark it to delete the others")
	tm.Send(screentest.Key("esc")) // clears the marks

	// The writer ends without a summary (as a crash leaves it).
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlR})
	waitFor("incomplete")
	tm.Send(screentest.Key("k")) // the marks moved the cursor onto done
	tm.Send(screentest.Key("d"))
	waitFor("Delete run?")
	tm.Send(screentest.Key("y"))
	waitFor("deleted "+w.ID(), "1 run ·")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*testRoot)
	if _, err := os.Stat(w.Dir()); !os.IsNotExist(err) {
		t.Errorf("the ended run was not deleted: %v", err)
	}
	if got := names(fm.stack[0].(*results.List).Runs()); got != "done" {
		t.Errorf("left: %s", got)
	}
}

// The list's Status column and a run's detail say running; the detail's
// d refuses too, asking nothing.
func TestRunningViews(t *testing.T) {
	dir := t.TempDir()
	runstest.Write(t, dir, runstest.Spec{Name: "done", Started: t0, Requests: 10, Summary: true})
	w := runstest.Start(t, dir, runstest.Spec{Name: "live", Started: t0.Add(time.Hour), Requests: 6})
	l := openList(t, dir, 140, 30)
	var liveRow string
	for _, line := range strings.Split(l.View(), "\n") {
		if strings.Contains(line, "live") {
			liveRow = line
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(liveRow), "running") || strings.Contains(l.View(), "incomplete") {
		t.Errorf("list:\n%s", l.View())
	}
	_, msgs := press(t, l, "d")
	if len(msgs) != 1 {
		t.Fatalf("d on a run in progress sent %v", msgs)
	}
	if st, ok := msgs[0].(common.StatusMsg); !ok || !st.Err || !strings.Contains(st.Text, w.ID()+" is still running") {
		t.Errorf("d on a run in progress: %#v", msgs[0])
	}

	d := results.NewDetail(newCommon(dir, 140, 30), w.Dir())
	m, _ := drive(t, d, d.Init())
	if v := m.View(); !strings.Contains(strings.SplitN(v, "\n", 2)[0], "running") {
		t.Errorf("detail header:\n%s", v)
	}
	_, msgs = press(t, m, "d")
	if len(msgs) != 1 {
		t.Fatalf("d in the detail of a run in progress sent %v", msgs)
	}
	if st, ok := msgs[0].(common.StatusMsg); !ok || !st.Err || !strings.Contains(st.Text, "still running") {
		t.Errorf("d in the detail: %#v", msgs[0])
	}
	if _, err := os.Stat(w.Dir()); err != nil {
		t.Fatal(err)
	}
}
