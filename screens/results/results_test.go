package results_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/compare"
	"github.com/kvbench/kvbench/screens/results"
)

var sizes = [][2]int{{80, 24}, {140, 45}}

func sizeName(sz [2]int) string { return fmt.Sprintf("%dx%d", sz[0], sz[1]) }

// stable replaces the temporary runs directory in a view.
func stable(view, dir string) []byte {
	return []byte(strings.ReplaceAll(view, dir, "$RUNS"))
}

func openList(t *testing.T, dir string, w, h int) *results.List {
	t.Helper()
	l := results.New(newCommon(dir, w, h))
	m, _ := drive(t, l, l.Init())
	return m.(*results.List)
}

func TestListGolden(t *testing.T) {
	dir := fixtureRuns(t)
	for _, sz := range sizes {
		t.Run(sizeName(sz), func(t *testing.T) {
			l := openList(t, dir, sz[0], sz[1])
			golden.RequireEqual(t, stable(l.View(), dir))
		})
	}
}

func runDir(t *testing.T, dir, name string) string {
	t.Helper()
	rs, err := runs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Name == name {
			return r.Dir
		}
	}
	t.Fatalf("no run %q", name)
	return ""
}

func TestDetailGolden(t *testing.T) {
	dir := fixtureRuns(t)
	for _, name := range []string{"slow", "killed"} {
		for _, sz := range sizes {
			t.Run(name+"/"+sizeName(sz), func(t *testing.T) {
				d := results.NewDetail(newCommon(dir, sz[0], sz[1]), runDir(t, dir, name))
				m, _ := drive(t, d, d.Init())
				var views []string
				for _, keys := range [][]string{nil, {"2"}, {"3"}, {"f"}} {
					m, _ = press(t, m, keys...)
					views = append(views, m.View())
				}
				golden.RequireEqual(t, stable(strings.Join(views, "\n~~~~\n"), dir))
			})
		}
	}
}

func TestCompareGolden(t *testing.T) {
	dir := fixtureRuns(t)
	for _, sz := range sizes {
		t.Run(sizeName(sz), func(t *testing.T) {
			s := compare.New(newCommon(dir, sz[0], sz[1]), filepath.Base(runDir(t, dir, "baseline")), runDir(t, dir, "fast-cache"))
			m, _ := drive(t, s, s.Init())
			golden.RequireEqual(t, stable(m.View(), dir))
		})
	}
}

func names(rs []runs.Run) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return strings.Join(out, ",")
}

func TestListSortAndFilter(t *testing.T) {
	dir := fixtureRuns(t)
	l := openList(t, dir, 140, 45)
	if got := names(l.Runs()); got != "killed,stopped,slow,fast-cache,baseline" {
		t.Fatalf("default order (newest first): %s", got)
	}
	// s cycles: started -> name -> workload -> model -> engine -> ok/fail
	// -> ttft; descending stays.
	m, _ := press(t, l, "s")
	if got := names(m.(*results.List).Runs()); got != "stopped,slow,killed,fast-cache,baseline" {
		t.Errorf("by name, descending: %s", got)
	}
	m, _ = press(t, m, "S")
	if got := names(m.(*results.List).Runs()); got != "baseline,fast-cache,killed,slow,stopped" {
		t.Errorf("by name, ascending: %s", got)
	}
	m, _ = press(t, m, "s", "s", "s", "s", "s")
	if !strings.Contains(m.View(), "TTFT ms▲") {
		t.Errorf("sort column not marked:\n%s", m.View())
	}
	if got := names(m.(*results.List).Runs()); got != "fast-cache,killed,baseline,stopped,slow" {
		t.Errorf("by mean TTFT, ascending: %s", got)
	}
	// Hit % sorts missing ratios last; here: by hit ratio descending.
	// It comes after p99, before the verdict and Out tok/s.
	m, _ = press(t, m, "s", "s", "S")
	if !strings.Contains(m.View(), "Hit %▼") {
		t.Fatalf("expected hit sort:\n%s", m.View())
	}
	if got := names(m.(*results.List).Runs()); !strings.HasPrefix(got, "fast-cache,killed,baseline") {
		t.Errorf("by hit ratio, descending: %s", got)
	}

	// Filter: / focuses the input (Typing), words must all match.
	m, _ = press(t, m, "/")
	if !m.(*results.List).Typing() {
		t.Fatal("filter input has no focus after /")
	}
	m, _ = press(t, m, "l", "o", "n", "g", " ", "o", "k")
	if got := names(m.(*results.List).Runs()); got != "fast-cache,baseline" {
		t.Errorf("filter 'long ok': %s", got)
	}
	m, _ = press(t, m, "enter")
	if m.(*results.List).Typing() {
		t.Error("enter leaves the filter input")
	}
	if !strings.Contains(m.View(), "2 of 5 runs") {
		t.Errorf("footer:\n%s", m.View())
	}
	m, _ = press(t, m, "/", "esc")
	if got := names(m.(*results.List).Runs()); len(strings.Split(got, ",")) != 5 {
		t.Errorf("esc clears the filter: %s", got)
	}
	m, _ = press(t, m, "/", "i", "n", "c", "o", "m", "p", "enter")
	if got := names(m.(*results.List).Runs()); got != "killed" {
		t.Errorf("filter by status: %s", got)
	}
}

func TestMarkAndCompare(t *testing.T) {
	dir := fixtureRuns(t)
	l := openList(t, dir, 140, 45)
	m, root := press(t, l, "c")
	if len(root) != 1 || !strings.Contains(root[0].(common.StatusMsg).Text, "mark two runs") {
		t.Errorf("compare with nothing marked: %v", root)
	}
	// space marks and moves down: A = killed, B = stopped.
	m, _ = press(t, m, "space", "space")
	marked := m.(*results.List).Marked()
	if len(marked) != 2 || !strings.HasSuffix(marked[0], "killed") || !strings.HasSuffix(marked[1], "stopped") {
		t.Fatalf("marked %v", marked)
	}
	if v := m.View(); !strings.Contains(v, " A 2026-03-01 16:00") || !strings.Contains(v, " B 2026-03-01 15:00") || !strings.Contains(v, "›  2026-03-01 14:00") {
		t.Errorf("marks not shown:\n%s", v)
	}
	// A third mark adds to the marks (for one delete of them all); the
	// last two marked are the pair c compares, A and B, the first is *.
	m, _ = press(t, m, "space")
	if mk := m.(*results.List).Marked(); len(mk) != 3 || !strings.HasSuffix(mk[0], "killed") || !strings.HasSuffix(mk[1], "stopped") || !strings.HasSuffix(mk[2], "slow") {
		t.Errorf("third mark: %v", mk)
	}
	if v := m.View(); !strings.Contains(v, " * 2026-03-01 16:00") || !strings.Contains(v, " A 2026-03-01 15:00") || !strings.Contains(v, " B 2026-03-01 14:00") || !strings.Contains(v, "3 marked") {
		t.Errorf("three marks not shown:\n%s", v)
	}
	m, root = press(t, m, "c")
	if len(root) != 1 {
		t.Fatalf("compare asked for %v", root)
	}
	open, ok := root[0].(common.OpenCompare)
	if !ok {
		t.Fatalf("c sent %T, want common.OpenCompare", root[0])
	}
	if !strings.HasSuffix(open.A, "stopped") || !strings.HasSuffix(open.B, "slow") {
		t.Fatalf("compare asked for %+v", open)
	}
	cs := compare.New(newCommon(dir, 140, 44), open.A, open.B)
	cm, _ := drive(t, cs, cs.Init())
	c := cm.(*compare.Screen).Comparison()
	if c == nil || c.A.Run.Name != "stopped" || c.B.Run.Name != "slow" {
		t.Fatalf("comparison: %+v", c)
	}
	// Unmark with space on a marked run: the pair is the last two again.
	m, _ = press(t, m, "up", "space")
	if mk := m.(*results.List).Marked(); len(mk) != 2 || !strings.HasSuffix(mk[1], "stopped") {
		t.Errorf("unmark: %v", mk)
	}
	if v := m.View(); !strings.Contains(v, " A 2026-03-01 16:00") || !strings.Contains(v, " B 2026-03-01 15:00") {
		t.Errorf("marks after the unmark:\n%s", v)
	}
	// esc clears every mark.
	m, _ = press(t, m, "esc")
	if mk := m.(*results.List).Marked(); len(mk) != 0 {
		t.Errorf("esc left marks: %v", mk)
	}
}

func TestDetailRequestsFilter(t *testing.T) {
	dir := fixtureRuns(t)
	d := results.NewDetail(newCommon(dir, 140, 45), runDir(t, dir, "slow"))
	m, _ := drive(t, d, d.Init())
	m, _ = press(t, m, "3", "f")
	v := m.View()
	if !strings.Contains(v, "row 1 of 3") || strings.Count(v, "http_503: server busy") != 3 {
		t.Errorf("failed filter:\n%s", v)
	}
	m, _ = press(t, m, "f", "f") // cold, then reused: none in this run
	if v := m.View(); !strings.Contains(v, "No request matches the filter.") {
		t.Errorf("reused filter:\n%s", v)
	}
	m, _ = press(t, m, "f") // unverified: 3 failures + 3 details_absent
	if v := m.View(); !strings.Contains(v, "row 1 of 6") {
		t.Errorf("unverified filter:\n%s", v)
	}
}

func TestDetailPagesLargeRun(t *testing.T) {
	dir := t.TempDir()
	p := runstest.Write(t, dir, runstest.Spec{Started: t0, Requests: 5000, FailEvery: 1000, Summary: true})
	d := results.NewDetail(newCommon(dir, 100, 30), p)
	m, _ := drive(t, d, d.Init())
	m, _ = press(t, m, "3", "G")
	v := m.View()
	if !strings.Contains(v, "req-4999") || !strings.Contains(v, "row 5000 of 5000") {
		t.Errorf("end of a large run:\n%s", v)
	}
	m, _ = press(t, m, "g", "pgdown", "pgdown")
	if v := m.View(); !strings.Contains(v, "req-50 ") {
		t.Errorf("paged down twice:\n%s", v)
	}
	m, _ = press(t, m, "f")
	if v := m.View(); !strings.Contains(v, "row 1 of 5") || !strings.Contains(v, "req-999 ") {
		t.Errorf("failed requests of a large run:\n%s", v)
	}
}

// A resize that shows rows outside the loaded page asks for them: at the
// end of a large run, a taller window moves the top up past the page read
// for the short one.
func TestDetailResizeLoadsTheNewView(t *testing.T) {
	dir := t.TempDir()
	p := runstest.Write(t, dir, runstest.Spec{Started: t0, Requests: 5000, Summary: true})
	d := results.NewDetail(newCommon(dir, 100, 30), p)
	d.SetSize(100, 30)
	m, _ := drive(t, d, d.Init())
	m, _ = press(t, m, "3", "G")
	if v := m.View(); !strings.Contains(v, "req-4999 ") {
		t.Fatalf("end of a large run:\n%s", v)
	}
	// As the root does: every screen's SetSize, then the size message.
	d.SetSize(100, 200)
	m, cmd := m.Update(tea.WindowSizeMsg{Width: 100, Height: 200})
	m, _ = drive(t, m, cmd)
	v := m.View()
	if !strings.Contains(v, "req-4999 ") || !strings.Contains(v, "req-4810 ") {
		t.Errorf("taller window at the end of the run:\n%s", v)
	}
	for i, line := range strings.Split(v, "\n") {
		if strings.TrimSpace(line) == "…" {
			t.Fatalf("line %d is a row never loaded after the resize:\n%s", i, v)
		}
	}
}

// waitAll waits until the program has drawn every one of what (since
// the last wait).
func waitAll(t *testing.T, tm *teatest.TestModel, what ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, w := range what {
			if !bytes.Contains(b, []byte(w)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

// The flow through the application: list -> detail -> back -> mark two
// -> compare, driven by keys in a running program.
func TestFlowListDetailCompare(t *testing.T) {
	dir := fixtureRuns(t)
	c := newCommon(dir, 140, 44)
	root := newTestRoot(c, results.New(c))
	tm := teatest.NewTestModel(t, root, teatest.WithInitialTermSize(140, 45))
	waitFor := func(what ...string) { t.Helper(); waitAll(t, tm, what...) }
	waitFor("5 runs")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor("[1 Summary]", "Mean TTFT")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("3")})
	waitFor("row 1 of 25") // the killed run: 25 lines, the torn one skipped
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	waitFor("Results |")
	tm.Send(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune(" ")})
	tm.Send(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune(" ")})
	waitFor("c compares")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("c")})
	waitFor("delta = (B - A) / A")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*testRoot)
	if len(fm.stack) != 2 {
		t.Fatalf("stack depth %d, want list + compare", len(fm.stack))
	}
	cs, ok := fm.top().(*compare.Screen)
	if !ok {
		t.Fatalf("top screen %T", fm.top())
	}
	cmp := cs.Comparison()
	if cmp.A.Run.Name != "killed" || cmp.B.Run.Name != "stopped" {
		t.Errorf("compared %s with %s", cmp.A.Run.Name, cmp.B.Run.Name)
	}
}

func TestFlowDeleteAndExport(t *testing.T) {
	dir := fixtureRuns(t)
	out := filepath.Join(t.TempDir(), "exported.json")
	c := newCommon(dir, 140, 44)
	root := newTestRoot(c, results.New(c))
	tm := teatest.NewTestModel(t, root, teatest.WithInitialTermSize(140, 45))
	waitFor := func(what ...string) { t.Helper(); waitAll(t, tm, what...) }
	waitFor("5 runs")
	victim := runDir(t, dir, "killed") // newest: under the cursor
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("d")})
	waitFor("Delete run?")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")}) // q answers no
	waitFor("Results |")
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("q in the dialog deleted the run: %v", err)
	}
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("d")})
	waitFor("Delete run?")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("y")})
	waitFor("4 runs")
	if _, err := os.Stat(victim); !os.IsNotExist(err) {
		t.Errorf("run folder still there: %v", err)
	}

	// Export the config of the run now under the cursor (stopped).
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("e")})
	waitFor("bench_config.json")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlU})
	tm.Type(out)
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor("config written to")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(runDir(t, dir, "stopped"), "config.json"))
	if !bytes.Equal(got, want) || len(got) == 0 {
		t.Errorf("exported config differs from config.json:\n%s", got)
	}
}

// n asks for the form prefilled with the run's config.json.
func TestNewRunOpensForm(t *testing.T) {
	dir := fixtureRuns(t)
	l := openList(t, dir, 140, 45)
	_, root := press(t, l, "n")
	if len(root) != 1 {
		t.Fatalf("n sent %v", root)
	}
	open, ok := root[0].(common.OpenForm)
	if !ok || open.Config == nil || open.Guided {
		t.Fatalf("n sent %#v, want common.OpenForm with a config", root[0])
	}
	want := config.Default()
	if err := want.LoadJSON(filepath.Join(runDir(t, dir, "killed"), "config.json")); err != nil {
		t.Fatal(err)
	}
	if got, exp := string(open.Config.ExportJSON()), string(want.ExportJSON()); got != exp {
		t.Errorf("form config:\n%s\nwant the run's:\n%s", got, exp)
	}
}

// After a delete in a sorted table the cursor is on the run that
// followed the deleted one, so a second `d y` never takes an unrelated
// run.
func TestDeleteKeepsCursorInSortedList(t *testing.T) {
	dir := fixtureRuns(t)
	c := newCommon(dir, 140, 44)
	root := newTestRoot(c, results.New(c))
	tm := teatest.NewTestModel(t, root, teatest.WithInitialTermSize(140, 45))
	waitFor := func(what ...string) { t.Helper(); waitAll(t, tm, what...) }
	waitFor("5 runs")
	// By name, ascending: baseline, fast-cache, killed, slow, stopped.
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("s")})
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("S")})
	waitFor("Name▲")
	for _, k := range []string{"g", "j", "j", "d"} {
		tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)})
	}
	waitFor("Delete run?", "killed")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("y")})
	waitFor("4 runs")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*testRoot)
	l := fm.stack[0].(*results.List)
	if got := names(l.Runs()); got != "baseline,fast-cache,slow,stopped" {
		t.Fatalf("after the delete: %s", got)
	}
	var cur string
	for _, line := range strings.Split(l.View(), "\n") {
		if strings.HasPrefix(line, "›") {
			cur = line
		}
	}
	if !strings.Contains(cur, "slow") {
		t.Errorf("cursor on %q, want the run after the deleted one (slow)", cur)
	}
}
