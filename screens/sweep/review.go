package sweep

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	bsweep "github.com/kvbench/kvbench/bench/sweep"
	"github.com/kvbench/kvbench/screens/common"
)

type reviewKeys struct {
	common.ScrollKeys
	Open, Report, Back key.Binding
}

// NewReview shows the sweep folder dir as it was recorded (sweep.json):
// its curve and its cells in the order they ran; enter opens the cell
// under the cursor as a run (its summary, charts and requests).
func NewReview(c *common.Common, dir string) *Model {
	m := &Model{c: c, dir: dir, review: true, done: true, curIdx: -1, started: c.Now()}
	m.keys = reviewKeys{
		ScrollKeys: c.KeyMap.Scroll("first", "last"),
		Open:       common.Named(c.KeyMap.Select, "enter", "open the cell's run"),
		Report:     key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "HTML report")),
		Back:       c.KeyMap.Back,
	}
	m.SetSize(c.Width, c.Height)
	return m
}

type readMsg struct {
	to       *Model
	file     *bsweep.File
	workload string
	err      error
}

// read loads sweep.json and the workload (from the first cell's record)
// off the update loop.
func (m *Model) read() tea.Cmd {
	dir, to := m.dir, m
	return func() tea.Msg {
		f, err := bsweep.ReadFile(dir)
		if err != nil {
			return readMsg{to: to, err: fmt.Errorf("sweep %s: %w", runs.FolderID(dir), err)}
		}
		return readMsg{to: to, file: f, workload: runs.ReadSweep(dir).Workload}
	}
}

func (m *Model) loaded(msg readMsg) {
	m.file, m.loadErr = msg.file, msg.err
	if msg.file == nil {
		return
	}
	f := msg.file
	m.info = Info{Workload: msg.workload, Dimension: f.Sweep.Dimension, Values: f.Sweep.Values,
		Search: f.Sweep.Search, SLO: f.Sweep.SLO != nil}
	if f.Sweep.SLO != nil {
		m.info.TTFTSLOms, m.info.GoodputTarget = f.Sweep.SLO.TTFTms, f.Sweep.GoodputTarget
	}
	if m.info.Workload == "" {
		m.info.Workload = "sweep"
	}
	m.cells = f.Cells
	m.result = f.Result
	m.cursor = min(m.cursor, max(len(m.cells)-1, 0))
}

// reviewLine says how the sweep ended and what it found.
func (m *Model) reviewLine() string {
	st := m.c.Styles
	f := m.file
	n := fmt.Sprintf("%d cell(s)", len(m.cells))
	var parts []string
	switch {
	case f.Sweep.Interrupted:
		parts = append(parts, st.Warn.Render("interrupted after "+n))
	case f.Sweep.FinishedAt == "":
		parts = append(parts, st.Warn.Render(n+", not finished (running, or stopped by a crash)"))
	default:
		parts = append(parts, n)
	}
	if g := f.Sweep.GoodputTarget; g != nil && f.Sweep.SLO != nil {
		switch r := m.result; {
		case r != nil && r.MaxValue != nil:
			words := fmt.Sprintf("highest passing %s %s (good fraction >= %.0f%%)", m.info.Dimension, bsweep.Format(*r.MaxValue), *g*100)
			if und := undelivered(r); und != "" {
				words += ", " + und + " not delivered"
			}
			parts = append(parts, st.OK.Render(words))
		case r != nil && len(r.UndeliveredAbove) > 0:
			parts = append(parts, st.Warn.Render(fmt.Sprintf("no delivered %s passed; %s not delivered", m.info.Dimension, undelivered(r))))
		default:
			parts = append(parts, st.Warn.Render(fmt.Sprintf("no %s reached a good fraction of %.0f%%", m.info.Dimension, *g*100)))
		}
	}
	if n := len(m.cells); n > 0 && m.cells[n-1].Status == record.CellCut {
		parts = append(parts, st.Error.Render(fmt.Sprintf("cut at %s %s: its record is incomplete", m.info.Dimension, bsweep.Format(m.cells[n-1].Value))))
	}
	return fit(strings.Join(parts, st.Muted.Render(" · ")), m.w)
}

// undelivered lists the result's values that were not delivered.
func undelivered(r *bsweep.Result) string {
	var out []string
	for _, u := range r.UndeliveredAbove {
		out = append(out, bsweep.Format(u.Value))
	}
	return strings.Join(out, ",")
}

// reviewTable lists the cells around the cursor under a header; the
// cursor's row starts with › (visible without colour).
func (m *Model) reviewTable(rows int) string {
	st := m.c.Styles
	lines := []string{"  " + fit(m.tableHead(), max(m.w-2, 1))}
	if len(m.cells) == 0 {
		return lines[0] + "\n" + st.Muted.Render("  no cell has finished")
	}
	v := max(rows-1, 1)
	if m.cursor < m.top {
		m.top = m.cursor
	}
	if m.cursor >= m.top+v {
		m.top = m.cursor - v + 1
	}
	m.top = max(min(m.top, len(m.cells)-v), 0)
	for i := m.top; i < min(m.top+v, len(m.cells)); i++ {
		line := fit(m.cellRow(m.cells[i]), max(m.w-2, 1))
		if i == m.cursor {
			lines = append(lines, "› "+st.Selected.Render(line))
		} else {
			lines = append(lines, "  "+line)
		}
	}
	return strings.Join(lines, "\n")
}

func (m *Model) reviewKey(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	page := max(m.h/3-1, 1)
	switch {
	case key.Matches(msg, k.Back):
		return common.Pop
	case key.Matches(msg, k.Report):
		return common.Open(common.OpenReport{Runs: []string{m.dir}})
	case key.Matches(msg, k.Open):
		if m.cursor < len(m.cells) {
			return common.Open(common.OpenRunDetail{Dir: bsweep.CellDir(m.dir, m.cells[m.cursor])})
		}
	case key.Matches(msg, k.Up):
		m.cursor--
	case key.Matches(msg, k.Down):
		m.cursor++
	case key.Matches(msg, k.PageUp):
		m.cursor -= page
	case key.Matches(msg, k.PageDown):
		m.cursor += page
	case key.Matches(msg, k.Top):
		m.cursor = 0
	case key.Matches(msg, k.Bottom):
		m.cursor = len(m.cells) - 1
	}
	m.cursor = max(min(m.cursor, len(m.cells)-1), 0)
	return nil
}

// Cursor is the index of the cell under the cursor (review).
func (m *Model) Cursor() int { return m.cursor }

func (m *Model) ShortHelp() []key.Binding {
	if !m.review {
		if m.running() && !m.stopping {
			return []key.Binding{m.stopKey}
		}
		return nil
	}
	return []key.Binding{m.keys.Open, m.keys.Down, m.keys.Report, m.keys.Back}
}

func (m *Model) FullHelp() [][]key.Binding {
	if !m.review {
		return [][]key.Binding{m.ShortHelp()}
	}
	k := m.keys
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Open, k.Report, k.Back}}
}
