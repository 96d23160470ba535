package compare_test

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/bench/runs/seriestest"
	"github.com/kvbench/kvbench/screens/compare"
	"github.com/kvbench/kvbench/screens/screentest"
	"github.com/kvbench/kvbench/theme"
)

// The tested rows lead the screen: a slower B is worse in the error
// colour, an unchanged figure is ~ in neither colour, and x swaps A and B
// (the row turns better).
func TestTestedRows(t *testing.T) {
	prev := lipgloss.ColorProfile()
	lipgloss.SetColorProfile(termenv.ANSI)
	lipgloss.SetHasDarkBackground(true)
	defer lipgloss.SetColorProfile(prev)

	dir := t.TempDir()
	a := runstest.Write(t, dir, runstest.Spec{Name: "a", Started: t0, Requests: 80, BaseTTFTms: 100, JitterMs: 2, JitterSeed: 1, Summary: true})
	b := runstest.Write(t, dir, runstest.Spec{Name: "b", Started: t0.Add(time.Hour), Requests: 80, BaseTTFTms: 110, JitterMs: 2, JitterSeed: 2, Summary: true})
	c := screentest.Common(200, 60, screentest.Now)
	c.RunsDir = dir
	c.Styles = theme.New(theme.Default)
	s := compare.New(c, a, b)
	m, _ := s.Update(s.Init()())
	tt := m.(*compare.Screen).Tested()
	if tt == nil || m.(*compare.Screen).Comparison() == nil {
		t.Fatal("not loaded")
	}
	body := compare.TestedBody(tt, c.Styles, 200)
	red, green := c.Styles.StatusError.Render("x"), c.Styles.OK.Render("x")
	redOn, greenOn := red[:strings.Index(red, "x")], green[:strings.Index(green, "x")]
	ttft := line(body, "ttft_p50 ")
	if !strings.Contains(ttft, "worse") || !strings.Contains(ttft, redOn) {
		t.Errorf("ttft_p50 not red/worse: %q", ttft)
	}
	if hit := line(body, "hit_ratio"); !strings.Contains(hit, "~") || strings.Contains(hit, redOn) || strings.Contains(hit, greenOn) {
		t.Errorf("hit_ratio: %q", hit)
	}
	v := m.View()
	if i, j := strings.Index(v, "ttft_p50"), strings.Index(v, "Mean TTFT"); i < 0 || (j >= 0 && j < i) {
		t.Errorf("the tested rows do not lead:\n%s", v)
	}
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("x")})
	back := m.(*compare.Screen).Tested()
	for _, r := range back.Rows {
		if r.Key() == "ttft_p50" && r.Word != runs.WordBetter {
			t.Errorf("after x: %s", r.Word)
		}
	}
}

// Two series are compared run by run; at every size the screen draws
// without a panic.
func TestTestedSeriesScreen(t *testing.T) {
	screentest.PinColors()
	dir := t.TempDir()
	for _, name := range []string{"s1", "s2"} {
		seriestest.Write(t, dir, name, 5, runstest.Spec{Started: t0, Requests: 10, JitterMs: 2, Summary: true})
	}
	list, _ := runs.ListSeries(dir)
	if len(list) != 2 {
		t.Fatalf("%d series", len(list))
	}
	for _, size := range [][2]int{{40, 12}, {100, 30}, {250, 80}} {
		c := screentest.Common(size[0], size[1], screentest.Now)
		c.RunsDir = dir
		s := compare.New(c, list[1].Dir, list[0].Dir)
		m, _ := s.Update(s.Init()())
		tt := m.(*compare.Screen).Tested()
		if tt == nil || !tt.ByRuns || m.(*compare.Screen).Comparison() != nil {
			t.Fatalf("%v: %+v", size, tt)
		}
		v := m.View()
		if size[0] >= 100 && (!strings.Contains(v, "series of 5 runs") || !strings.Contains(v, "run by run")) {
			t.Errorf("%v:\n%s", size, v)
		}
	}
}

// On a narrow screen A and B give way so the delta and the word stay.
func TestTestedNarrow(t *testing.T) {
	screentest.PinColors()
	dir := t.TempDir()
	a := runstest.Write(t, dir, runstest.Spec{Name: "a", Started: t0, Requests: 40, BaseTTFTms: 100, Summary: true})
	b := runstest.Write(t, dir, runstest.Spec{Name: "b", Started: t0.Add(time.Hour), Requests: 40, BaseTTFTms: 150, Summary: true})
	c := screentest.Common(60, 30, screentest.Now)
	c.RunsDir = dir
	s := compare.New(c, a, b)
	m, _ := s.Update(s.Init()())
	body := compare.TestedBody(m.(*compare.Screen).Tested(), c.Styles, 60)
	l := line(body, "ttft_p50 ")
	if !strings.HasSuffix(l, "worse") || strings.Contains(l, " ms") || len([]rune(l)) > 60 {
		t.Errorf("narrow row: %q", l)
	}
	wide := compare.TestedBody(m.(*compare.Screen).Tested(), c.Styles, 200)
	if l := line(wide, "ttft_p50 "); !strings.Contains(l, "103.00 ms") || !strings.Contains(l, "153.00 ms") {
		t.Errorf("wide row: %q", l)
	}
}
