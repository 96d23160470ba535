// Package compare is the side-by-side comparison of two runs: every
// figure of their summaries with A, B and the relative delta coloured by
// whether it got better or worse, and the config keys that differ.
package compare

import (
	"fmt"
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

	cmp *runs.Comparison
	err error
	vp  viewport.Model
}

// New compares the runs named a and b (id in c.RunsDir, or path).
func New(c *common.Common, a, b string) *Screen {
	s := &Screen{c: c, id: common.NewID(), a: a, b: b, keys: newKeys(c.KeyMap), vp: viewport.New(0, 0)}
	s.SetSize(c.Width, c.Height)
	return s
}

type loadedMsg struct {
	to  common.ID
	cmp *runs.Comparison
	err error
}

func (s *Screen) Init() tea.Cmd {
	dir, a, b := s.c.RunsDir, s.a, s.b
	return func() tea.Msg {
		cmp, err := runs.CompareNamed(dir, a, b)
		return loadedMsg{to: s.id, cmp: cmp, err: err}
	}
}

func (s *Screen) Title() string { return "Compare" }
func (s *Screen) Typing() bool  { return false }

// Comparison is what is shown, nil until loaded.
func (s *Screen) Comparison() *runs.Comparison { return s.cmp }

const headerLines = 3

func (s *Screen) SetSize(w, h int) {
	s.width, s.height = w, h
	s.vp.Width, s.vp.Height = w, max(h-headerLines, 1)
	s.render()
}

func (s *Screen) render() {
	if s.cmp == nil {
		return
	}
	s.vp.SetContent(Body(s.cmp, s.c.Styles))
}

func (s *Screen) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case loadedMsg:
		if msg.to == s.id {
			s.cmp, s.err = msg.cmp, msg.err
			s.render()
		}
	case tea.KeyMsg:
		k := s.keys
		switch {
		case key.Matches(msg, k.Back):
			return s, common.Pop
		case key.Matches(msg, k.Swap):
			if s.cmp != nil {
				s.cmp = runs.Compare(s.cmp.B, s.cmp.A)
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
		out = st.StatusError.Render(ansi.Wrap(s.err.Error(), w, ""))
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
