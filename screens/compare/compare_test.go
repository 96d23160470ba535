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
	"github.com/kvbench/kvbench/screens/compare"
	"github.com/kvbench/kvbench/screens/screentest"
	"github.com/kvbench/kvbench/theme"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)

func line(body, prefix string) string {
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// Better is drawn in the OK colour, worse in the error colour, and a
// figure without a direction in neither.
func TestVerdictColours(t *testing.T) {
	prev := lipgloss.ColorProfile()
	lipgloss.SetColorProfile(termenv.ANSI)
	lipgloss.SetHasDarkBackground(true)
	defer lipgloss.SetColorProfile(prev)

	dir := t.TempDir()
	a := runstest.Write(t, dir, runstest.Spec{Name: "a", Started: t0, Requests: 20, Summary: true})
	b := runstest.Write(t, dir, runstest.Spec{Name: "b", Started: t0.Add(time.Hour), Requests: 20, BaseTTFTms: 40,
		FailEvery: 10, Summary: true})
	cmp, err := runs.CompareNamed(dir, a, b)
	if err != nil {
		t.Fatal(err)
	}
	st := theme.New(theme.Default)
	body := compare.Body(cmp, st)
	green := st.OK.Render("x")
	red := st.StatusError.Render("x")
	greenOn, redOn := green[:strings.Index(green, "x")], red[:strings.Index(red, "x")]
	if greenOn == "" || redOn == "" || greenOn == redOn {
		t.Fatalf("colours not distinct: %q %q", greenOn, redOn)
	}
	for _, c := range []struct {
		prefix, colour string
	}{
		{"Mean TTFT (ms)", greenOn}, // 40 vs 100 ms: better
		{"Failed requests", redOn},  // 0 -> 2: worse
		{"Total input tokens", ""},  // no direction
		{"Output throughput (tok/s)", redOn},
	} {
		l := line(body, c.prefix)
		if l == "" {
			t.Fatalf("no %q row:\n%s", c.prefix, body)
		}
		hasG, hasR := strings.Contains(l, greenOn), strings.Contains(l, redOn)
		switch c.colour {
		case greenOn:
			if !hasG || hasR || !strings.Contains(l, "better") {
				t.Errorf("%s not green/better: %q", c.prefix, l)
			}
		case redOn:
			if !hasR || hasG || !strings.Contains(l, "worse") {
				t.Errorf("%s not red/worse: %q", c.prefix, l)
			}
		default:
			if hasR || hasG {
				t.Errorf("%s coloured: %q", c.prefix, l)
			}
		}
	}
}

func TestUnknownRunAndSwap(t *testing.T) {
	screentest.PinColors()
	dir := t.TempDir()
	a := runstest.Write(t, dir, runstest.Spec{Name: "a", Started: t0, Requests: 5, Summary: true})
	b := runstest.Write(t, dir, runstest.Spec{Name: "b", Started: t0.Add(time.Hour), Requests: 5, Summary: true})
	c := screentest.Common(100, 30, screentest.Now)
	c.RunsDir = dir

	s := compare.New(c, "missing-run", a)
	m, _ := s.Update(s.Init()())
	if v := m.View(); !strings.Contains(v, `no run "missing-run"`) {
		t.Errorf("unknown run:\n%s", v)
	}

	s = compare.New(c, a, b)
	m, _ = s.Update(s.Init()())
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("x")})
	got := m.(*compare.Screen).Comparison()
	if got.A.Run.Name != "b" || got.B.Run.Name != "a" {
		t.Errorf("x did not swap: A=%s B=%s", got.A.Run.Name, got.B.Run.Name)
	}
	if v := m.View(); !strings.HasPrefix(v, "A "+got.A.Run.ID) {
		t.Errorf("header after swap:\n%s", v)
	}
}
