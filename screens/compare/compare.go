// Package compare is the side-by-side comparison of two runs: every
// figure of their summaries with A, B and the relative delta coloured by
// whether it got better or worse, the per-sample answer quality of two
// rag-qa-quality runs, and the config keys that differ. Two sweep
// folders are compared as overlaid curves (sweep.go).
package compare

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench/report/visual"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/theme"
)

type keys struct {
	common.ScrollKeys
	Swap, Back key.Binding
}

func newKeys(km *common.KeyMap) keys {
	return keys{
		ScrollKeys: km.Scroll("top", "bottom"),
		Swap:       key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "swap A/B")),
		Back:       km.Back,
	}
}

// Screen compares run B against run A.
type Screen struct {
	c             *common.Common
	id            common.ID
	a, b          string // as named: id or path
	width, height int
	keys          keys

	cmp   *runs.Comparison
	sweep *visual.SweepComparison
	err   error
	vp    viewport.Model
	// chartH is the height of the sweep charts (0: none fit).
	chartH int
}

// New compares the runs named a and b (id in c.RunsDir, or path).
func New(c *common.Common, a, b string) *Screen {
	s := &Screen{c: c, id: common.NewID(), a: a, b: b, keys: newKeys(c.KeyMap), vp: viewport.New(0, 0)}
	s.SetSize(c.Width, c.Height)
	return s
}

type loadedMsg struct {
	to    common.ID
	cmp   *runs.Comparison
	sweep *visual.SweepComparison
	err   error
}

func (s *Screen) Init() tea.Cmd {
	dir, a, b := s.c.RunsDir, s.a, s.b
	return func() tea.Msg {
		msg := loadedMsg{to: s.id}
		msg.cmp, msg.sweep, msg.err = open(dir, a, b)
		return msg
	}
}

// open compares two runs, or two sweep folders (a name that is no run
// but a sweep).
func open(dir, a, b string) (*runs.Comparison, *visual.SweepComparison, error) {
	var sweep [2]bool
	for i, name := range []string{a, b} {
		if _, err := runs.Resolve(dir, name); err != nil {
			_, sweep[i] = visual.ResolveSweep(dir, name)
		}
	}
	switch {
	case sweep[0] && sweep[1]:
		sc, err := visual.OpenSweeps(dir, a, b)
		return nil, sc, err
	case sweep[0] || sweep[1]:
		kind := func(i int) string { return map[bool]string{true: "a sweep", false: "a run"}[sweep[i]] }
		return nil, nil, fmt.Errorf("compare takes two runs or two sweeps: %s is %s and %s is %s", a, kind(0), b, kind(1))
	}
	cmp, err := runs.CompareNamed(dir, a, b)
	return cmp, nil, err
}

func (s *Screen) Title() string { return "Compare" }
func (s *Screen) Typing() bool  { return false }

// Comparison is the runs shown, nil until loaded or for sweeps.
func (s *Screen) Comparison() *runs.Comparison { return s.cmp }

// Sweeps is the sweeps shown, nil until loaded or for runs.
func (s *Screen) Sweeps() *visual.SweepComparison { return s.sweep }

const headerLines = 3

// Sweep charts take about half the height below the header, when at
// least minChartH rows are left for them and minTableH for the table.
const minChartH, maxChartH, minTableH = 8, 24, 5

func (s *Screen) SetSize(w, h int) {
	s.width, s.height = w, h
	body := max(h-headerLines, 1)
	s.chartH = 0
	if s.sweep != nil {
		if c := min(body/2, maxChartH); c >= minChartH && body-c >= minTableH && w >= 40 {
			s.chartH = c
		}
	}
	s.vp.Width, s.vp.Height = w, max(body-s.chartH, 1)
	s.render()
}

func (s *Screen) render() {
	switch {
	case s.sweep != nil:
		s.vp.SetContent(SweepBody(s.sweep, s.c.Styles))
	case s.cmp != nil:
		s.vp.SetContent(Body(s.cmp, s.c.Styles))
	}
	// A taller screen may hold what was scrolled past: scroll back.
	s.vp.SetYOffset(s.vp.YOffset)
}

func (s *Screen) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case loadedMsg:
		if msg.to == s.id {
			s.cmp, s.sweep, s.err = msg.cmp, msg.sweep, msg.err
			s.SetSize(s.width, s.height)
		}
	case tea.KeyMsg:
		k := s.keys
		switch {
		case key.Matches(msg, k.Back):
			return s, common.Pop
		case key.Matches(msg, k.Swap):
			switch {
			case s.sweep != nil:
				s.sweep = s.sweep.Swapped()
				s.a, s.b = s.b, s.a
				s.render()
			case s.cmp != nil:
				s.cmp = s.cmp.Swapped()
				s.a, s.b = s.b, s.a
				s.render()
			}
		default:
			k.Scroll(&s.vp, msg)
		}
	}
	return s, nil
}

func runLine(st *theme.Styles, tag lipgloss.Style, letter string, r *runs.Run) string {
	status := r.Status()
	parts := []string{tag.Render(letter), st.Bold.Render(r.ID), common.RunStatusStyle(st, status).Render(string(status))}
	return strings.Join(parts, " ") + "  " + st.Muted.Render(strings.Join(common.RunInfo(r), " · "))
}

func (s *Screen) View() string {
	st := s.c.Styles
	w := max(s.width, 1)
	var out string
	switch {
	case s.err != nil:
		out = st.StatusError.Render(ansi.Wrap(common.ErrorText(s.err), w, ""))
	case s.sweep != nil:
		out = s.sweepView(w)
	case s.cmp == nil:
		out = st.Muted.Render(fmt.Sprintf("Reading %s and %s …", s.a, s.b))
	default:
		head := ansi.Truncate(runLine(st, st.SeriesA.Bold(true), "A", &s.cmp.A.Run), w, "…") + "\n" +
			ansi.Truncate(runLine(st, st.SeriesB.Bold(true), "B", &s.cmp.B.Run), w, "…") + "\n" +
			st.Muted.Render(ansi.Truncate("delta = (B - A) / A; green is better, red is worse", w, "…"))
		out = head + "\n" + s.vp.View()
	}
	return lipgloss.NewStyle().MaxWidth(w).MaxHeight(max(s.height, 1)).Render(out)
}

func (s *Screen) sweepView(w int) string {
	st := s.c.Styles
	line := func(tag lipgloss.Style, letter string, sw *visual.Sweep) string {
		return ansi.Truncate(tag.Render(letter)+" "+st.Bold.Render(sw.ID)+"  "+st.Muted.Render(strings.TrimPrefix(sw.Describe(), sw.ID+" ")), w, "…")
	}
	out := line(st.SeriesA.Bold(true), "A", s.sweep.A) + "\n" + line(st.SeriesB.Bold(true), "B", s.sweep.B) + "\n" +
		ansi.Truncate(sweepLegend(st, s.sweep), w, "…")
	if s.chartH > 0 {
		out += "\n" + sweepCharts(st, s.sweep, w, s.chartH)
	}
	return out + "\n" + s.vp.View()
}

// Body renders the figures and config differences, coloured by verdict.
func Body(c *runs.Comparison, st *theme.Styles) string {
	labelW, valW := 0, 1
	for _, f := range c.Figures {
		labelW = max(labelW, len([]rune(f.LabelWithUnit())))
		valW = max(valW, len(runs.FormatValue(f.A, f.Unit)), len(runs.FormatValue(f.B, f.Unit)))
	}
	const deltaW = 8
	pad := func(s string, w int, right bool) string {
		n := ansi.StringWidth(s)
		if n >= w {
			return s
		}
		if right {
			return strings.Repeat(" ", w-n) + s
		}
		return s + strings.Repeat(" ", w-n)
	}
	var b strings.Builder
	section := ""
	for _, f := range c.Figures {
		if f.Section != section {
			if section != "" {
				b.WriteByte('\n')
			}
			section = f.Section
			b.WriteString(st.PanelTitle.Render(pad(section, labelW, false)) + "  " +
				st.SeriesA.Render(pad("A", valW, true)) + "  " + st.SeriesB.Render(pad("B", valW, true)) + "  " +
				st.Muted.Render(pad("delta", deltaW, true)) + "\n")
		}
		vs := st.Muted
		switch f.Verdict {
		case runs.Better:
			vs = st.OK
		case runs.Worse:
			vs = st.StatusError
		case runs.Differs:
			vs = lipgloss.NewStyle()
		}
		line := pad(f.LabelWithUnit(), labelW, false) + "  " +
			pad(runs.FormatValue(f.A, f.Unit), valW, true) + "  " +
			pad(runs.FormatValue(f.B, f.Unit), valW, true) + "  " +
			vs.Render(pad(runs.FormatDelta(f), deltaW, true))
		if m := runs.VerdictMark(f.Verdict); m != "" {
			line += " " + vs.Render(m)
		}
		b.WriteString(line + "\n")
	}
	if c.Quality != nil {
		b.WriteString("\n" + qualityBody(c.Quality, st))
	}
	b.WriteString("\n" + st.PanelTitle.Render("Config differences") + "\n")
	if len(c.Config) == 0 {
		b.WriteString(st.Muted.Render("none") + "\n")
		return b.String()
	}
	kw, aw := 0, 1
	for _, d := range c.Config {
		kw = max(kw, len(d.Key))
		aw = max(aw, ansi.StringWidth(d.A))
	}
	for _, d := range c.Config {
		b.WriteString(pad(d.Key, kw, false) + "  " + st.SeriesA.Render(pad(d.A, aw, false)) + "  " + st.SeriesB.Render(d.B) + "\n")
	}
	return b.String()
}

func (s *Screen) ShortHelp() []key.Binding {
	return []key.Binding{s.keys.Down, s.keys.PageDown, s.keys.Swap, s.keys.Back}
}

func (s *Screen) FullHelp() [][]key.Binding {
	k := s.keys
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Swap, k.Back}}
}
