// Package report is the dialog that writes a run's HTML report (or the
// comparison of two runs) and shows where it went, offering to copy the
// path to the terminal's clipboard (OSC 52, which also works over SSH).
package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench/report/visual"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/internal/textclean"
	"github.com/kvbench/kvbench/screens/common"
)

// clipboard receives the OSC 52 sequence (the terminal; tests swap it).
var clipboard io.Writer = os.Stdout

// Model writes the report when it opens, then shows the path.
type Model struct {
	c    *common.Common
	runs []string
	id   *Model // identifies this dialog's messages

	path    string
	err     error
	done    bool
	copied  bool
	keys    struct{ Copy, Close key.Binding }
	maxText int
}

// New writes the report of runs (folders or ids; two or more compare).
func New(c *common.Common, runs []string) *Model {
	m := &Model{c: c, runs: runs}
	m.id = m
	m.keys.Copy = key.NewBinding(key.WithKeys("c", "y"), key.WithHelp("c", "copy path"))
	m.keys.Close = key.NewBinding(key.WithKeys("esc", "enter", "q"), key.WithHelp("esc", "close"))
	m.keys.Copy.SetEnabled(false)
	return m
}

type writtenMsg struct {
	to   *Model
	path string
	err  error
}

type copiedMsg struct {
	to  *Model
	err error
}

// Init writes the report off the update loop.
func (m *Model) Init() tea.Cmd {
	runsDir, runs, to := m.c.RunsDir, m.runs, m.id
	return func() tea.Msg {
		path, err := visual.Write(runsDir, runs)
		if err == nil {
			if abs, aerr := filepath.Abs(path); aerr == nil {
				path = abs
			}
		}
		return writtenMsg{to: to, path: path, err: err}
	}
}

func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case writtenMsg:
		if msg.to != m.id {
			return m, nil
		}
		m.done, m.path, m.err = true, msg.path, msg.err
		if msg.err != nil {
			return m, common.Failure(fmt.Errorf("report: %w", msg.err))
		}
		m.keys.Copy.SetEnabled(true)
		return m, common.Status("report written to " + textclean.Line(msg.path))
	case copiedMsg:
		if msg.to != m.id {
			return m, nil
		}
		if msg.err != nil {
			return m, common.Failure(fmt.Errorf("copy: %w", msg.err))
		}
		m.copied = true
		return m, common.Status("path copied to the clipboard")
	case tea.KeyMsg:
		switch {
		case key.Matches(msg, m.keys.Close):
			return m, common.Pop
		case key.Matches(msg, m.keys.Copy):
			path, to := m.path, m.id
			return m, func() tea.Msg {
				return copiedMsg{to: to, err: copyPath(clipboard, path)}
			}
		}
	}
	return m, nil
}

// copyPath writes the OSC 52 sequence that sets the clipboard, wrapped
// for tmux and screen when the program runs inside one.
func copyPath(w io.Writer, path string) error { return common.WriteClipboard(w, path) }

func (m *Model) View() string {
	s := m.c.Styles
	width := max(min(m.c.Width-8, 90), 20)
	what := "the report of " + runs.FolderID(m.runs[0])
	if len(m.runs) > 1 {
		what = "the comparison of " + strings.Join(baseNames(m.runs), " and ")
	}
	lines := []string{s.Title.Render("HTML report"), ""}
	switch {
	case !m.done:
		lines = append(lines, s.Muted.Render(ansi.Wrap("Writing "+what+"…", width, "")))
	case m.err != nil:
		lines = append(lines, s.Error.Render(ansi.Wrap(common.ErrorText(m.err), width, "")))
	default:
		lines = append(lines, s.Muted.Render(ansi.Wrap("Wrote "+what+" to", width, "")), "",
			ansi.Wrap(textclean.Line(m.path), width, "/"), "",
			s.Muted.Render("One self-contained file: open it in any browser, offline."))
		if m.copied {
			lines = append(lines, s.OK.Render("Path copied to the clipboard."))
		}
	}
	lines = append(lines, "", m.keyLine())
	return s.Dialog.Render(lipgloss.JoinVertical(lipgloss.Left, lines...))
}

func (m *Model) keyLine() string {
	s := m.c.Styles
	var parts []string
	for _, b := range m.ShortHelp() {
		parts = append(parts, s.Key.Render(b.Help().Key)+s.Muted.Render(" "+b.Help().Desc))
	}
	return strings.Join(parts, "   ")
}

func baseNames(dirs []string) []string {
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = runs.FolderID(d)
	}
	return out
}

// Path is where the report was written ("" until it is).
func (m *Model) Path() string { return m.path }

func (m *Model) Overlay() bool    { return true }
func (m *Model) SetSize(int, int) {}
func (m *Model) Title() string    { return "Report" }

// Typing keeps q for closing the dialog rather than leaving the screen
// beneath it.
func (m *Model) Typing() bool { return true }

func (m *Model) ShortHelp() []key.Binding {
	if m.keys.Copy.Enabled() {
		return []key.Binding{m.keys.Copy, m.keys.Close}
	}
	return []key.Binding{m.keys.Close}
}
func (m *Model) FullHelp() [][]key.Binding { return [][]key.Binding{m.ShortHelp()} }
