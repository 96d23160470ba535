//go:build unix

package results_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/internal/textclean/cleantest"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/results"
	"github.com/kvbench/kvbench/screens/screentest"
)

// hostileExplorerRuns holds a finished run (annotated) and a crashed one
// with terminal controls in their folder names and every file, and a
// sweep with some in its name.
func hostileExplorerRuns(t *testing.T) (dir, done, crashed string) {
	t.Helper()
	dir = t.TempDir()
	done = runstest.Hostile(t, dir, runstest.Spec{Started: t0, Requests: 9, Summary: true}, true)
	crashed = runstest.Hostile(t, dir, runstest.Spec{Started: t0.Add(time.Hour), Requests: 9}, false)
	runstest.HostileSweep(t, dir, runstest.SweepSpec{Started: t0.Add(2 * time.Hour), Cells: []runstest.SweepCell{{Value: 2}}})
	return dir, done, crashed
}

// The explorer's table, a run's detail (summary, charts, requests, the
// failed ones, a failed request's receipt) and the delete dialog show
// hostile names, notes, model ids and errors cleaned.
func TestExplorerShowsHostileTextClean(t *testing.T) {
	dir, done, crashed := hostileExplorerRuns(t)
	for _, sz := range [][2]int{{80, 24}, {250, 80}} {
		l := openList(t, dir, sz[0], sz[1])
		cleantest.Clean(t, "explorer", l.View())
		m, _ := press(t, l, "j", "j")
		cleantest.Check(t, "explorer with the note in the footer", m.View())
	}
	for _, run := range []string{done, crashed} {
		d := results.NewDetail(newCommon(dir, 250, 80), run)
		m, _ := drive(t, d, d.Init())
		cleantest.Check(t, "detail title", d.Title())
		cleantest.Check(t, "detail summary", m.View())
		for _, keys := range [][]string{{"2"}, {"3"}, {"f"}} {
			m, _ = press(t, m, keys...)
			cleantest.Clean(t, "detail "+strings.Join(keys, ""), m.View())
		}
		cleantest.Check(t, "failed requests", m.View())
		_, rec := openRequest(t, run, 250, 80, 2)
		cleantest.Check(t, "receipt of a failed request", rec.View())

		_, root := press(t, d, "d")
		var dialog common.Screen
		for _, msg := range root {
			if p, ok := msg.(common.PushMsg); ok {
				dialog = p.Screen
			}
		}
		if dialog == nil {
			t.Fatal("d opened no dialog")
		}
		cleantest.Check(t, "delete dialog", dialog.View())
	}
}

// The copy dialog shows the id and the folder cleaned; the clipboard is
// written once per copy (never by a redraw), with the cleaned text, and
// the screen's output holds none of the hostile sequences.
func TestCopyDialogHostileRun(t *testing.T) {
	term := captureTerminal(t)
	dir, done, _ := hostileExplorerRuns(t)
	c := newCommon(dir, 140, 44)
	root := newTestRoot(c, results.New(c))
	tm := teatest.NewTestModel(t, root, teatest.WithInitialTermSize(140, 45))
	var out bytes.Buffer
	waitFor := func(what ...string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			for _, w := range what {
				if !bytes.Contains(b, []byte(w)) {
					return false
				}
			}
			out.Write(b)
			return true
		}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
	waitFor("2 runs")
	// Rows: the sweep, the crashed run, the finished one.
	for _, k := range []string{"j", "j", "y"} {
		tm.Send(screentest.Key(k))
	}
	waitFor("Copy to the clipboard", "--name", "command")
	if got := term.String(); got != "" {
		t.Fatalf("the dialog wrote to the terminal before any copy: %q", got)
	}
	// Redraws (a resize) write no clipboard sequence.
	tm.Send(tea.WindowSizeMsg{Width: 120, Height: 40})
	tm.Send(tea.WindowSizeMsg{Width: 140, Height: 45})
	tm.Send(screentest.Key("i"))
	waitFor("copied the run id to the clipboard")
	tm.Send(screentest.Key("y"))
	waitFor("Copy to the clipboard")
	tm.Send(screentest.Key("p"))
	waitFor("copied the run folder to the clipboard")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	out.ReadFrom(tm.FinalOutput(t, teatest.WithFinalTimeout(5*time.Second)))

	rows := root.stack[0].(*results.List).Runs()
	var shownID, shownDir string
	for _, r := range rows {
		if r.Dir == done {
			shownID, shownDir = r.ID, r.ShownDir()
		}
	}
	cleantest.Check(t, "id copied", shownID)
	if got, want := term.String(), osc52(shownID)+osc52(shownDir); got != want {
		t.Errorf("terminal got\n%q\nwant two copies, the cleaned id and folder\n%q", got, want)
	}
	for _, seq := range []string{"\x1b]52", "\x1b]0;", "\x1b[2J", "\u009b", "\x9b", "\x07"} {
		if strings.Contains(out.String(), seq) {
			t.Errorf("the screen's output holds %q", seq)
		}
	}
	if !strings.Contains(out.String(), cleantest.Shown) {
		t.Error("the screen never showed the run's name")
	}
}
