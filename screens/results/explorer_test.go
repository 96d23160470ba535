package results_test

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/results"
	"github.com/kvbench/kvbench/screens/screentest"
	sweepscreen "github.com/kvbench/kvbench/screens/sweep"
)

// explorerRuns is fixtureRuns plus the newest row, a capacity search
// (4 cells, rate 12 the highest passing), and a renamed, annotated run.
func explorerRuns(t *testing.T) (dir, sweep string) {
	dir = fixtureRuns(t)
	sweep = runstest.WriteRecordedSweep(t, dir, runstest.RecordedSweep{Name: "cap", Started: t0.Add(5 * time.Hour), Values: []float64{4, 8, 16, 12},
		Search: true, SLO: true, PassUpTo: 12, Salt: "warm"})
	if _, err := runs.WriteAnnotations(runDir(t, dir, "fast-cache"), runs.Annotations{Name: "vLLM prefix on", Note: "GPU 1 only"}, now); err != nil {
		t.Fatal(err)
	}
	return dir, sweep
}

// runDirOf is the folder of the run whose display name is name.
func runDirOf(t *testing.T, dir, name string) string {
	t.Helper()
	rs, _ := runs.List(dir)
	for _, r := range rs {
		if r.Name == name {
			return r.Dir
		}
	}
	t.Fatalf("no run named %q", name)
	return ""
}

// syncBuffer is the terminal of the tests: the clipboard sequences land
// here, written from a command's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func captureTerminal(t *testing.T) *syncBuffer {
	t.Helper()
	t.Setenv("TMUX", "")
	t.Setenv("TERM", "xterm-256color")
	buf := &syncBuffer{}
	old := common.Terminal
	common.Terminal = buf
	t.Cleanup(func() { common.Terminal = old })
	return buf
}

func osc52(text string) string {
	return "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(text)) + "\x07"
}

// The explorer lists a sweep as one row (its cells are not rows), the
// display name in the Name column, a note in the footer for the row under
// the cursor, and marks as letters (no colour needed): at 60, 80 and 140
// columns.
func TestExplorerGolden(t *testing.T) {
	dir, _ := explorerRuns(t)
	for _, sz := range [][2]int{{60, 20}, {80, 24}, {140, 45}} {
		t.Run(sizeName(sz), func(t *testing.T) {
			l := openList(t, dir, sz[0], sz[1])
			var views []string
			for _, keys := range [][]string{nil, {"m", "m", "space"}, {"j"}} {
				m, _ := press(t, l, keys...)
				views = append(views, m.View())
			}
			golden.RequireEqual(t, stable(strings.Join(views, "\n~~~~\n"), dir))
		})
	}
}

func TestExplorerSweepRow(t *testing.T) {
	dir, sweep := explorerRuns(t)
	l := openList(t, dir, 140, 45)
	rs := l.Runs()
	if len(rs) != 6 || rs[0].Sweep == nil || rs[0].Dir != sweep {
		t.Fatalf("rows: %d, first %+v", len(rs), rs[0])
	}
	v := l.View()
	for _, want := range []string{"sweep, 4 cells, search, max rate 12 req/s", "5 runs, 1 sweep", "random-prefill"} {
		if !strings.Contains(v, want) {
			t.Errorf("%q not on the list:\n%s", want, v)
		}
	}
	if strings.Contains(v, "01-rate-4") {
		t.Errorf("a sweep's cell listed as a run:\n%s", v)
	}
	m, root := press(t, l, "enter")
	if len(root) != 1 || root[0] != (common.OpenSweep{Dir: sweep}) {
		t.Fatalf("enter on a sweep sent %v", root)
	}
	// / sweep finds sweeps; / with a note's word finds the run.
	m, _ = press(t, m, "/", "s", "w", "e", "e", "p", "enter")
	if got := m.(*results.List).Runs(); len(got) != 1 || got[0].Sweep == nil {
		t.Errorf("filter sweep: %d rows", len(got))
	}
	m, _ = press(t, m, "/", "esc", "/", "g", "p", "u", " ", "1", "enter")
	if got := names(m.(*results.List).Runs()); got != "vLLM prefix on" {
		t.Errorf("filter by note: %s", got)
	}
	m, _ = press(t, m, "/", "esc", "/", "f", "a", "s", "t", "-", "c", "enter")
	if got := names(m.(*results.List).Runs()); got != "vLLM prefix on" {
		t.Errorf("filter by recorded name: %s", got)
	}
	m, _ = press(t, m, "/", "esc", "/", "2", "0", "2", "6", "-", "0", "3", "-", "0", "1", " ", "1", "3", ":", "enter")
	if got := names(m.(*results.List).Runs()); got != "vLLM prefix on" {
		t.Errorf("filter by date: %s", got)
	}
	// c refuses a sweep with a run (two sweeps compare, as two runs do).
	m, _ = press(t, m, "/", "esc", "g", "space", "space")
	if _, root = press(t, m, "c"); len(root) != 1 || !strings.Contains(root[0].(common.StatusMsg).Text, "is a sweep, the other a run") {
		t.Errorf("compare with a sweep marked: %v", root)
	}
	other := runstest.WriteRecordedSweep(t, dir, runstest.RecordedSweep{Name: "other", Started: t0.Add(6 * time.Hour), Values: []float64{2, 4}})
	m, _ = press(t, m, "esc", "R", "g", "space", "space")
	if _, root = press(t, m, "c"); len(root) != 1 || root[0] != (common.OpenCompare{A: other, B: sweep}) {
		t.Errorf("compare of two sweeps: %v", root)
	}
	// n and e say where a sweep's configs are.
	if _, root = press(t, m, "g", "n"); len(root) != 1 || !strings.Contains(root[0].(common.StatusMsg).Text, "a config per cell") {
		t.Errorf("n on a sweep: %v", root)
	}
}

// The sweep's review: its plan and result, the curve, the cells with a
// cursor; enter opens a cell as an ordinary run.
func TestSweepReview(t *testing.T) {
	dir, sweep := explorerRuns(t)
	for _, sz := range [][2]int{{80, 24}, {140, 45}} {
		t.Run(sizeName(sz), func(t *testing.T) {
			c := newCommon(dir, sz[0], sz[1])
			s := sweepscreen.NewReview(c, sweep)
			m, _ := drive(t, s, s.Init())
			first := m.View()
			m, _ = press(t, m, "j", "j")
			golden.RequireEqual(t, stable(first+"\n~~~~\n"+m.View(), dir))
			for _, want := range []string{"capacity search over rate of random-prefill from 4", "4 cell(s)", "highest passing rate 12", "TTFT p50 / p99", "good fraction"} {
				if !strings.Contains(first, want) {
					t.Errorf("%q missing:\n%s", want, first)
				}
			}
			_, root := press(t, m, "enter")
			want := filepath.Join(sweep, "cells", "03-rate-16")
			if len(root) != 1 || root[0] != (common.OpenRunDetail{Dir: want}) {
				t.Fatalf("enter on the third cell sent %v", root)
			}
			d := results.NewDetail(c, want)
			dm, _ := drive(t, d, d.Init())
			if v := dm.View(); !strings.Contains(v, "03-rate-16") || !strings.Contains(v, "[1 Summary]") || !strings.Contains(v, "Mean TTFT") {
				t.Errorf("the cell's run:\n%s", v)
			}
		})
	}
	// Every size: no panic, no line wider than the terminal.
	s := sweepscreen.NewReview(newCommon(dir, 80, 24), sweep)
	m, _ := drive(t, s, s.Init())
	for _, sz := range [][2]int{{40, 12}, {60, 20}, {200, 60}, {250, 80}, {39, 11}} {
		s.SetSize(sz[0], sz[1])
		out := m.View()
		lines := strings.Split(out, "\n")
		if len(lines) > sz[1] {
			t.Errorf("%v: %d lines", sz, len(lines))
		}
		for _, line := range lines {
			if w := len([]rune(line)); w > sz[0] {
				t.Errorf("%v: a line of %d columns: %q", sz, w, line)
			}
		}
	}
}

// The copy dialog shows what each letter copies, the folder whole (at
// 140 columns) and the command wrapped; the command is built from the
// record.
func TestCopyDialogGolden(t *testing.T) {
	dir, sweep := explorerRuns(t)
	rows := map[string]*runs.Run{}
	for _, r := range openList(t, dir, 80, 24).Runs() {
		rows[r.ID] = &r
	}
	for _, name := range []string{"slow", filepath.Base(sweep)} {
		t.Run(name, func(t *testing.T) {
			var r *runs.Run
			for id, x := range rows {
				if x.Name == name || id == name {
					r = x
				}
			}
			c := newCommon(dir, 140, 45)
			d := results.NewCopy(c, r, common.NewID())
			m, _ := drive(t, d, d.Init())
			// The temporary folder's name varies in length: the dialog's
			// right padding is left out.
			golden.RequireEqual(t, regexp.MustCompile(` +│`).ReplaceAll(stable(m.View(), dir), []byte(" │")))
		})
	}
}

// y then c (or i, or p) puts the command (the id, the absolute folder)
// on the clipboard with OSC 52 and says so.
func TestFlowCopy(t *testing.T) {
	term := captureTerminal(t)
	dir, _ := explorerRuns(t)
	slow := runDir(t, dir, "slow")
	args, err := runs.Command(slow)
	if err != nil {
		t.Fatal(err)
	}
	command := runs.ShellJoin(args)
	c := newCommon(dir, 140, 44)
	root := newTestRoot(c, results.New(c))
	tm := teatest.NewTestModel(t, root, teatest.WithInitialTermSize(140, 45))
	waitFor := func(what ...string) { t.Helper(); waitAll(t, tm, what...) }
	waitFor("5 runs")
	// Rows: the sweep, killed, stopped, slow.
	for _, k := range []string{"j", "j", "j", "y"} {
		tm.Send(screentest.Key(k))
	}
	waitFor("Copy to the clipboard", "--name slow")
	tm.Send(screentest.Key("c"))
	waitFor("copied the command (kvbench run …) to the clipboard")
	tm.Send(screentest.Key("y"))
	waitFor("Copy to the clipboard")
	tm.Send(screentest.Key("i"))
	waitFor("copied the run id to the clipboard")
	tm.Send(screentest.Key("y"))
	waitFor("Copy to the clipboard")
	tm.Send(screentest.Key("p"))
	waitFor("copied the run folder to the clipboard")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	if got, want := term.String(), osc52(command)+osc52(filepath.Base(slow))+osc52(slow); got != want {
		t.Errorf("terminal got\n%q\nwant\n%q", got, want)
	}
	if !strings.HasPrefix(command, "kvbench run --engine-url http://127.0.0.1:8000/v1 --workload random-prefill") {
		t.Errorf("command %s", command)
	}
}

// r renames and a annotates: annotations.json is written, the row shows
// the name, the footer the note, the detail both, and the record is
// untouched.
func TestFlowRenameAndNote(t *testing.T) {
	dir, _ := explorerRuns(t)
	killed := runDir(t, dir, "killed")
	before, _ := os.ReadFile(filepath.Join(killed, "requests.jsonl"))
	c := newCommon(dir, 140, 44)
	root := newTestRoot(c, results.New(c))
	tm := teatest.NewTestModel(t, root, teatest.WithInitialTermSize(140, 45))
	waitFor := func(what ...string) { t.Helper(); waitAll(t, tm, what...) }
	waitFor("5 runs")
	tm.Send(screentest.Key("j"))
	tm.Send(screentest.Key("r"))
	waitFor("Rename 2026", "Empty: the recorded name (killed)")
	tm.Type("kill -9 test")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(`is now named "kill -9 test"`)
	tm.Send(screentest.Key("a"))
	waitFor("Note 2026")
	tm.Type("q is text here")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor("saved (annotations.json)", "› kill -9 test — q is text here")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor("[1 Summary]", "note: q is text here", "Recorded name")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*testRoot)
	l := fm.stack[0].(*results.List)
	if !strings.Contains(l.View(), "kill -9 test") {
		t.Errorf("Name column:\n%s", l.View())
	}
	a, err := runs.ReadAnnotations(killed)
	if err != nil || a.Name != "kill -9 test" || a.Note != "q is text here" {
		t.Errorf("annotations.json: %+v %v", a, err)
	}
	after, _ := os.ReadFile(filepath.Join(killed, "requests.jsonl"))
	if !bytes.Equal(before, after) {
		t.Error("requests.jsonl changed")
	}
}

// Marked runs (and sweeps) go in one delete after one confirmation; the
// cursor then stands on the first row after it that stayed.
func TestFlowDeleteMarked(t *testing.T) {
	dir, sweep := explorerRuns(t)
	killed, stopped := runDir(t, dir, "killed"), runDir(t, dir, "stopped")
	c := newCommon(dir, 140, 44)
	root := newTestRoot(c, results.New(c))
	tm := teatest.NewTestModel(t, root, teatest.WithInitialTermSize(140, 45))
	waitFor := func(what ...string) { t.Helper(); waitAll(t, tm, what...) }
	waitFor("5 runs")
	// Mark the sweep (space), killed and stopped (m); the cursor then
	// goes back up onto stopped, a marked row.
	for _, k := range []string{"space", "m", "m", "k", "d"} {
		tm.Send(screentest.Key(k))
	}
	waitFor("Delete 2 runs and 1 sweep?", "(sweep)")
	tm.Send(screentest.Key("n"))
	waitFor("3 marked")
	tm.Send(screentest.Key("d"))
	waitFor("Delete 2 runs and 1 sweep?")
	tm.Send(screentest.Key("y"))
	waitFor("deleted 3 marked", "3 runs")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*testRoot)
	for _, d := range []string{sweep, killed, stopped} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s still there: %v", filepath.Base(d), err)
		}
	}
	l := fm.stack[0].(*results.List)
	if got := names(l.Runs()); got != "slow,vLLM prefix on,baseline" {
		t.Errorf("left: %s", got)
	}
	if len(l.Marked()) != 0 {
		t.Errorf("marks left: %v", l.Marked())
	}
	var cur string
	for _, line := range strings.Split(l.View(), "\n") {
		if strings.HasPrefix(line, "›") {
			cur = line
		}
	}
	if !strings.Contains(cur, "random-prefill") || !strings.Contains(cur, "failed") {
		t.Errorf("cursor on %q, want slow (the first row after the deleted ones)", cur)
	}
}

// The multi-delete dialog names the count and the first few.
func TestDeleteMarkedDialogGolden(t *testing.T) {
	dir, _ := explorerRuns(t)
	l := openList(t, dir, 80, 24)
	m, _ := press(t, l, "space", "space", "space", "space", "space", "space")
	_, root := press(t, m, "d")
	if len(root) != 1 {
		t.Fatalf("d sent %v", root)
	}
	dlg := root[0].(common.PushMsg).Screen
	golden.RequireEqual(t, stable(dlg.View(), dir))
}

func TestWrapArgs(t *testing.T) {
	got := results.WrapArgs("kvbench run --engine-url builtin --rp-request-length 200 --prompt-salt 'a b' --tr-file /a/very/long/path/to/a/trace.jsonl", 24)
	want := "kvbench run --engine-url\nbuiltin\n--rp-request-length 200\n--prompt-salt 'a b'\n--tr-file\n/a/very/long/path/to/a/t\nrace.jsonl"
	if got != want {
		t.Errorf("wrapped:\n%s\nwant:\n%s", got, want)
	}
}

// `yc` in one read of the terminal: the c reaches the explorer before the
// dialog is on the stack; it is the dialog's all the same (the command
// is copied), the dialog closes as soon as it is shown, and keys the
// closing dialog still gets do nothing (never a second pop).
func TestCopyTypedAhead(t *testing.T) {
	term := captureTerminal(t)
	dir, _ := explorerRuns(t)
	l := openList(t, dir, 140, 45)
	m, _ := press(t, l, "j", "j", "j") // slow
	m, push := m.Update(screentest.Key("y"))
	m, cmd := m.Update(screentest.Key("c"))
	if cmd == nil {
		t.Fatal("c right after y did nothing")
	}
	copied, ok := cmd().(common.CopiedMsg)
	args, _ := runs.Command(runDir(t, dir, "slow"))
	if !ok || copied.Err != nil || copied.Text != runs.ShellJoin(args) || term.String() != osc52(copied.Text) {
		t.Fatalf("copied %+v, terminal %q", copied, term.String())
	}
	m, status := m.Update(copied)
	_, root := drive(t, m, status)
	if len(root) != 1 || !strings.Contains(root[0].(common.StatusMsg).Text, "copied the command") {
		t.Errorf("status: %v", root)
	}
	dlg := push().(common.PushMsg).Screen
	if _, ok := dlg.Init()().(common.PopMsg); !ok {
		t.Error("the dialog answered early does not close when shown")
	}
	if _, cmd := dlg.Update(screentest.Key("p")); cmd != nil {
		t.Error("a key to the closing dialog did something")
	}
	// After that the explorer's keys are its own again.
	if _, cmd := m.Update(screentest.Key("c")); cmd == nil {
		t.Error("c after the dialog closed is not compare")
	} else if msg, ok := cmd().(common.StatusMsg); !ok || !strings.Contains(msg.Text, "mark two runs") {
		t.Errorf("c: %v", msg)
	}
}

// enter pressed twice in the rename input (or a repeated key) saves once
// and never pops the explorer beneath.
func TestRenameAnswersOnce(t *testing.T) {
	dir, _ := explorerRuns(t)
	r := openList(t, dir, 100, 30).Runs()[1]
	a := results.NewRename(newCommon(dir, 100, 30), &r, common.NewID())
	a.Update(screentest.Key("x"))
	if _, cmd := a.Update(screentest.Key("enter")); cmd == nil {
		t.Fatal("enter did not save")
	}
	for _, k := range []string{"enter", "esc", "y"} {
		if _, cmd := a.Update(screentest.Key(k)); cmd != nil {
			t.Errorf("%s after the save did something", k)
		}
	}
}

// On a narrow screen the folder keeps its end (the run's name) on one
// line, and no line of the dialog is wider than the screen.
func TestCopyDialogNarrow(t *testing.T) {
	dir, _ := explorerRuns(t)
	r := openList(t, dir, 60, 20).Runs()[1]
	d := results.NewCopy(newCommon(dir, 60, 20), &r, common.NewID())
	m, _ := drive(t, d, d.Init())
	v := m.View()
	for _, line := range strings.Split(v, "\n") {
		if w := len([]rune(line)); w > 60 {
			t.Errorf("a line of %d columns: %q", w, line)
		}
	}
	if !regexp.MustCompile(`│ +…\S+/` + regexp.QuoteMeta(r.ID) + ` +│`).MatchString(v) {
		t.Errorf("the folder's end is not on one line:\n%s", v)
	}
}
