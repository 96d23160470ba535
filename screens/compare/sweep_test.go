package compare_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/screens/compare"
	"github.com/kvbench/kvbench/screens/screentest"
)

func openSweeps(t *testing.T, dir, a, b string, w, h int) tea.Model {
	t.Helper()
	c := screentest.Common(w, h, screentest.Now)
	c.RunsDir = dir
	s := compare.New(c, a, b)
	m, _ := s.Update(s.Init()())
	if s.Sweeps() == nil {
		t.Fatalf("sweeps not compared:\n%s", m.View())
	}
	return m
}

// Two sweeps: both curves overlaid in each chart, the capacity of each
// and the cells side by side, at every size from the smallest.
func TestSweepCompareGolden(t *testing.T) {
	screentest.PinColors()
	dir, a, b := runstest.TwoSweeps(t, t0)
	for _, sz := range [][2]int{{80, 22}, {140, 45}, {200, 58}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			m := openSweeps(t, dir, filepath.Base(a), filepath.Base(b), sz[0], sz[1])
			v := m.View()
			for i, l := range strings.Split(v, "\n") {
				if ansi.StringWidth(l) > sz[0] {
					t.Errorf("line %d is %d wide at %d: %q", i, ansi.StringWidth(l), sz[0], l)
				}
			}
			if n := strings.Count(v, "\n") + 1; n > sz[1] {
				t.Errorf("%d lines at height %d", n, sz[1])
			}
			golden.RequireEqual(t, []byte(v))
		})
	}
}

func TestSweepCompareContent(t *testing.T) {
	screentest.PinColors()
	dir, a, b := runstest.TwoSweeps(t, t0)
	m := openSweeps(t, dir, a, b, 140, 45)
	v := m.View()
	for _, want := range []string{
		"TTFT p50 (ms)", "TTFT p99 (ms)", "good fraction (%)", // three charts fit at 140
		"A 4 req/s (good fraction 95.0% >= target 90%); SLO ttft 500 ms",
		"B 8 req/s (good fraction 92.0% >= target 90%); SLO ttft 500 ms",
		"* the cell did not deliver its load",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	// Both curves are drawn: A's cell marks and B's.
	if strings.Count(v, "●") < 3*3 || strings.Count(v, "○") < 3*3 {
		t.Errorf("%d A marks and %d B marks, want each sweep's 3 cells in 3 charts:\n%s", strings.Count(v, "●"), strings.Count(v, "○"), v)
	}
	// At 80 columns two charts fit: the p99 and the good fraction.
	narrow := openSweeps(t, dir, a, b, 80, 24).View()
	if !strings.Contains(narrow, "TTFT p99 (ms)") || !strings.Contains(narrow, "good fraction (%)") || strings.Contains(narrow, "TTFT p50 (ms)") {
		t.Errorf("charts at 80 columns:\n%s", narrow)
	}
	// Too low for charts: the table alone, no panic.
	small := openSweeps(t, dir, a, b, 40, 12).View()
	if strings.Contains(small, "TTFT p99 (ms)") || !strings.Contains(small, "Capacity") {
		t.Errorf("at 40x12:\n%s", small)
	}

	// Scrolled on a small screen, then made tall enough for everything:
	// nothing stays scrolled out of sight.
	short := openSweeps(t, dir, a, b, 80, 24)
	for range 6 {
		short, _ = short.Update(screentest.Key("down"))
	}
	if strings.Contains(short.View(), "Capacity (highest") {
		t.Fatalf("the capacity did not scroll away at 80x24:\n%s", short.View())
	}
	short.(*compare.Screen).SetSize(200, 58)
	if !strings.Contains(short.View(), "Capacity (highest") {
		t.Errorf("after growing, the top of the table is still scrolled away:\n%s", short.View())
	}

	m, _ = m.Update(screentest.Key("x"))
	s := m.(*compare.Screen).Sweeps()
	if filepath.Base(s.A.Dir) != filepath.Base(b) || !strings.HasPrefix(m.View(), "A "+filepath.Base(b)) {
		t.Errorf("x did not swap the sweeps:\n%s", m.View())
	}
}

// A sweep against a run is refused in words.
func TestSweepAgainstRun(t *testing.T) {
	screentest.PinColors()
	dir, a, _ := runstest.TwoSweeps(t, t0)
	run := runstest.Write(t, dir, runstest.Spec{Name: "r", Started: t0.Add(3 * time.Hour), Requests: 3, Summary: true})
	c := screentest.Common(100, 30, screentest.Now)
	c.RunsDir = dir
	s := compare.New(c, a, run)
	m, _ := s.Update(s.Init()())
	if v := m.View(); !strings.Contains(v, "compare takes two runs or two sweeps") || !strings.Contains(v, "is a sweep and") {
		t.Errorf("view:\n%s", v)
	}
}
