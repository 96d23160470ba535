// Package compare is the side-by-side comparison of two runs or series:
// first the tested rows (per metric and cache state A, B, the delta with
// its 95% interval, the p-value and better, worse or ~, the cache's
// change said first when the hit ratios differ), then for two runs every
// figure of their summaries with A, B and the plain relative delta, the
// per-sample answer quality of two rag-qa-quality runs, and the config
// keys that differ. Two sweep folders are compared as overlaid curves
// (sweep.go).
package compare

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

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

	cmp    *runs.Comparison
	tested *runs.Tested
	sweep  *runs.SweepComparison
	err    error
	vp     viewport.Model
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
	to     common.ID
	cmp    *runs.Comparison
	tested *runs.Tested
	sweep  *runs.SweepComparison
	err    error
}

func (s *Screen) Init() tea.Cmd {
	dir, a, b := s.c.RunsDir, s.a, s.b
	return func() tea.Msg {
		msg := loadedMsg{to: s.id}
		msg.cmp, msg.tested, msg.sweep, msg.err = open(dir, a, b)
		return msg
	}
}

// open compares two runs or series (tested rows, and for two runs every
// figure), or two sweep folders (a name that is no run but a sweep).
func open(dir, a, b string) (*runs.Comparison, *runs.Tested, *runs.SweepComparison, error) {
	var sweep [2]bool
	for i, name := range []string{a, b} {
		if _, err := runs.Resolve(dir, name); err != nil {
			if _, series := runs.ResolveSeries(dir, name); !series {
				_, sweep[i] = runs.ResolveSweep(dir, name)
			}
		}
	}
	switch {
	case sweep[0] && sweep[1]:
		sc, err := runs.OpenSweeps(dir, a, b)
		return nil, nil, sc, err
	case sweep[0] || sweep[1]:
		kind := func(i int) string { return map[bool]string{true: "a sweep", false: "a run or series"}[sweep[i]] }
		return nil, nil, nil, fmt.Errorf("compare takes two runs or two sweeps (a series counts as a run): %s is %s and %s is %s", a, kind(0), b, kind(1))
	}
	var subj [2]*runs.Subject
	for i, name := range []string{a, b} {
		var err error
		if subj[i], err = runs.OpenSubject(context.Background(), dir, name); err != nil {
			return nil, nil, nil, err
		}
	}
	t := runs.CompareTested(subj[0], subj[1], runs.DefaultAlpha)
	if subj[0].IsSeries() || subj[1].IsSeries() {
		return nil, t, nil, nil
	}
	cmp, err := runs.CompareNamed(dir, a, b)
	return cmp, t, nil, err
}

func (s *Screen) Title() string { return "Compare" }
func (s *Screen) Typing() bool  { return false }

// Comparison is the runs shown, nil until loaded, for series or sweeps.
func (s *Screen) Comparison() *runs.Comparison { return s.cmp }

// Tested is the tested rows shown, nil until loaded or for sweeps.
func (s *Screen) Tested() *runs.Tested { return s.tested }

// Sweeps is the sweeps shown, nil until loaded or for runs.
func (s *Screen) Sweeps() *runs.SweepComparison { return s.sweep }

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
	case s.tested != nil:
		body := TestedBody(s.tested, s.c.Styles, s.width)
		if s.cmp != nil {
			body += "\n" + s.c.Styles.Muted.Render("All figures of both summaries (plain deltas, no test)") + "\n\n" + Body(s.cmp, s.c.Styles)
		}
		s.vp.SetContent(body)
	}
	// A taller screen may hold what was scrolled past: scroll back.
	s.vp.SetYOffset(s.vp.YOffset)
}

func (s *Screen) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case loadedMsg:
		if msg.to == s.id {
			s.cmp, s.tested, s.sweep, s.err = msg.cmp, msg.tested, msg.sweep, msg.err
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
			case s.tested != nil:
				if s.cmp != nil {
					s.cmp = s.cmp.Swapped()
				}
				s.tested = runs.CompareTested(s.tested.B, s.tested.A, s.tested.Alpha)
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

// subjectLine names one side: a run as runLine does, a series by its id
// and run count.
func subjectLine(st *theme.Styles, tag lipgloss.Style, letter string, x *runs.Subject) string {
	if x.Detail != nil {
		return runLine(st, tag, letter, &x.Detail.Run)
	}
	return tag.Render(letter) + " " + st.Bold.Render(x.ID) + "  " + st.Muted.Render(x.Describe())
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
	case s.tested == nil:
		out = st.Muted.Render(fmt.Sprintf("Reading %s and %s …", s.a, s.b))
	default:
		head := ansi.Truncate(subjectLine(st, st.SeriesA.Bold(true), "A", s.tested.A), w, "…") + "\n" +
			ansi.Truncate(subjectLine(st, st.SeriesB.Bold(true), "B", s.tested.B), w, "…") + "\n" +
			st.Muted.Render(ansi.Truncate("delta = (B - A) / A, or pp; better or worse only when p < alpha and the interval excludes 0", w, "…"))
		out = head + "\n" + s.vp.View()
	}
	return lipgloss.NewStyle().MaxWidth(w).MaxHeight(max(s.height, 1)).Render(out)
}

func (s *Screen) sweepView(w int) string {
	st := s.c.Styles
	line := func(tag lipgloss.Style, letter string, sw *runs.SweepSide) string {
		return ansi.Truncate(tag.Render(letter)+" "+st.Bold.Render(sw.ID)+"  "+st.Muted.Render(strings.TrimPrefix(sw.Describe(), sw.ID+" ")), w, "…")
	}
	out := line(st.SeriesA.Bold(true), "A", s.sweep.A) + "\n" + line(st.SeriesB.Bold(true), "B", s.sweep.B) + "\n" +
		ansi.Truncate(sweepLegend(st, s.sweep), w, "…")
	if s.chartH > 0 {
		out += "\n" + sweepCharts(st, s.sweep, w, s.chartH)
	}
	return out + "\n" + s.vp.View()
}

// TestedBody renders the tested rows in width columns: how they were
// tested, the cache's change first when the hit ratios differ, then per
// row the metric, A, B, the delta, its interval, p and the word (better in
// the OK colour, worse in the error colour), and why a row has no test.
// A narrow screen drops A and B, then the interval, so the word stays.
func TestedBody(t *runs.Tested, st *theme.Styles, width int) string {
	var b strings.Builder
	width = max(width, 20)
	b.WriteString(st.Muted.Render(ansi.Wrap(t.Method(), width, "")) + "\n")
	if t.CacheMoved {
		b.WriteString(st.Warn.Render(ansi.Wrap(t.CacheNote, width, "")) + "\n")
	}
	b.WriteByte('\n')
	rows := [][]string{runs.RowHeader}
	for i := range t.Rows {
		rows = append(rows, t.Rows[i].Cells())
	}
	widths := runs.ColumnWidths(rows, len(runs.RowHeader))
	right := []bool{false, true, true, true, true, true, false, false}
	// Columns shown, by index into the cells; the note only when it fits.
	cols := []int{0, 1, 2, 3, 4, 5, 6}
	span := func() int {
		w := 0
		for _, c := range cols {
			w += widths[c] + 2
		}
		return w - 2
	}
	for _, drop := range [][]int{{1, 2}, {4}} {
		if span() <= width {
			break
		}
		cols = slices.DeleteFunc(cols, func(c int) bool { return slices.Contains(drop, c) })
	}
	for i, cells := range rows {
		var line []string
		for _, j := range cols {
			c := cells[j]
			pad := strings.Repeat(" ", max(widths[j]-ansi.StringWidth(c), 0))
			if right[j] {
				c = pad + c
			} else {
				c += pad
			}
			switch {
			case i == 0:
				c = st.PanelTitle.Render(c)
			case j == 1:
				c = st.SeriesA.Render(c)
			case j == 2:
				c = st.SeriesB.Render(c)
			case j == 3 || j == 6:
				c = wordStyle(st, t.Rows[i-1].Word).Render(c)
			}
			line = append(line, c)
		}
		out := strings.Join(line, "  ")
		if note := cells[len(cells)-1]; i > 0 && note != "" && span()+2+ansi.StringWidth(note) <= width {
			out += "  " + st.Muted.Render(note)
		}
		b.WriteString(strings.TrimRight(out, " ") + "\n")
	}
	if len(t.Gates) > 0 {
		b.WriteString("\n" + st.PanelTitle.Render("Gates") + "\n")
		for _, g := range t.Gates {
			mark := st.OK.Render("pass")
			if !g.Passed {
				mark = st.StatusError.Render("FAIL")
			}
			b.WriteString(mark + "  " + g.Gate + "  " + st.Muted.Render(g.Reason) + "\n")
		}
	}
	return b.String()
}

func wordStyle(st *theme.Styles, word string) lipgloss.Style {
	switch word {
	case runs.WordBetter:
		return st.OK
	case runs.WordWorse:
		return st.StatusError
	}
	return st.Muted
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
