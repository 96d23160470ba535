// Package sweep is the sweep screen: the cells of a `kvbench sweep` as
// they run, the current cell's progress, the finished cells' table and
// their curve (x: achieved rate or concurrency; y: TTFT p50/p99 and,
// with an SLO, the good fraction), redrawn as each cell finishes. The
// same screen reviews a sweep folder from the explorer (NewReview): its
// curve and its cells, each opened as a run.
package sweep

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/canvas/runes"
	"github.com/NimbleMarkets/ntcharts/linechart/wavelinechart"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/record"
	bsweep "github.com/kvbench/kvbench/bench/sweep"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/dialog"
)

// Event is what the running sweep reports to the screen.
type Event struct {
	// CellStarted: Index, Value and the cell's Runner.
	// CellDone: Index and Cell.
	// Done: File, Dir, Code and Err (the sweep has ended).
	Kind   EventKind
	Index  int
	Value  float64
	Runner *bench.Runner
	Cell   bsweep.Cell
	File   *bsweep.File
	Dir    string
	Code   int
	Err    error
}

// EventKind says what happened.
type EventKind int

const (
	CellStarted EventKind = iota
	CellDone
	Done
)

// Info describes the sweep for the header.
type Info struct {
	Workload, Dimension string
	Values              []float64
	Search              bool
	MaxCells            int
	SLO                 bool
}

type eventMsg struct{ ev Event }
type tickMsg struct{}

// stopMsg answers "stop the sweep?" with yes.
type stopMsg struct{ id common.ID }

// DoneMsg is sent when the sweep has ended, with its exit code.
type DoneMsg struct{ Code int }

// Model is the sweep screen.
type Model struct {
	c      *common.Common
	id     common.ID
	info   Info
	events <-chan Event
	// The sweep this screen started (Start), nil when it only shows one.
	sess     *Session
	feed     chan<- Event
	stopping bool
	stopKey  key.Binding

	w, h    int
	cells   []bsweep.Cell
	current *bench.Runner
	curIdx  int
	curVal  float64
	snap    bench.Snapshot
	done    bool
	dir     string
	code    int
	err     error
	result  *bsweep.Result
	started time.Time

	// review is set for a sweep folder read from disk (NewReview): the
	// table has a cursor and enter opens a cell.
	review      bool
	file        *bsweep.File
	loadErr     error
	cursor, top int
	keys        reviewKeys
}

// New returns the screen for a sweep whose events arrive on events.
func New(c *common.Common, info Info, events <-chan Event) *Model {
	return &Model{c: c, id: common.NewID(), info: info, events: events, curIdx: -1, started: c.Now(),
		stopKey: key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "stop the sweep"))}
}

func (m *Model) wait() tea.Cmd {
	ch := m.events
	return func() tea.Msg {
		ev, ok := <-ch
		if !ok {
			return nil
		}
		return eventMsg{ev}
	}
}

func tick() tea.Cmd {
	return tea.Tick(500*time.Millisecond, func(time.Time) tea.Msg { return tickMsg{} })
}

func (m *Model) Init() tea.Cmd {
	switch {
	case m.review:
		return m.read()
	case m.sess != nil:
		return tea.Batch(m.wait(), tick(), m.startCmd())
	}
	return tea.Batch(m.wait(), tick())
}

// running reports whether the sweep this screen started is still going.
func (m *Model) running() bool { return m.sess != nil && !m.done }

// InterceptsKey keeps q while the screen's own sweep runs: it asks
// before stopping it (ctrl+c still leaves, stopping it too).
func (m *Model) InterceptsKey(k tea.KeyMsg) bool {
	return m.running() && key.Matches(k, m.stopKey)
}

func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case readMsg:
		if msg.to == m {
			m.loaded(msg)
		}
		return m, nil
	case tea.KeyMsg:
		switch {
		case m.review:
			return m, m.reviewKey(msg)
		case m.running() && !m.stopping && key.Matches(msg, m.stopKey):
			id := m.id
			return m, common.Push(dialog.NewConfirm(m.c, "Stop the sweep?",
				"No new cell starts; the running cell sends no new request, those in flight finish, and what ran is saved (exit 130).",
				func() tea.Msg { return stopMsg{id: id} }))
		}
		return m, nil
	case stopMsg:
		if msg.id == m.id && m.running() {
			m.stopping = true
			m.sess.Stop()
			return m, common.Status("stopping the sweep: waiting for the requests in flight")
		}
		return m, nil
	case eventMsg:
		return m, m.apply(msg.ev)
	case tickMsg:
		if m.current != nil && !m.done {
			m.snap = m.current.Snapshot()
		}
		if m.done {
			return m, nil
		}
		return m, tick()
	}
	return m, nil
}

func (m *Model) apply(ev Event) tea.Cmd {
	switch ev.Kind {
	case CellStarted:
		m.current, m.curIdx, m.curVal = ev.Runner, ev.Index, ev.Value
		m.snap = bench.Snapshot{}
	case CellDone:
		m.cells = append(m.cells, ev.Cell)
		m.current = nil
	case Done:
		m.done, m.dir, m.code, m.err, m.current = true, ev.Dir, ev.Code, ev.Err, nil
		if ev.File != nil {
			m.result = ev.File.Result
		}
		code := ev.Code
		return func() tea.Msg { return DoneMsg{Code: code} }
	}
	return m.wait()
}

func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }
func (m *Model) Typing() bool     { return false }

func (m *Model) Title() string {
	if m.review {
		return "Sweep " + filepath.Base(m.dir)
	}
	return "Sweep"
}

// Minimum useful size.
const minW, minH = 40, 6

func (m *Model) View() string {
	if m.w < minW || m.h < minH {
		return "terminal too small"
	}
	st := m.c.Styles
	var b strings.Builder
	if m.review && m.file == nil {
		if m.loadErr != nil {
			return st.Error.Render(fit(m.loadErr.Error(), m.w))
		}
		return st.Muted.Render(fit("Reading "+record.SweepFile+" …", m.w))
	}
	plan := fmt.Sprintf("%s over %s %s", m.info.Workload, m.info.Dimension, listText(m.info.Values))
	if m.info.Search && len(m.info.Values) > 0 {
		plan = fmt.Sprintf("capacity search over %s of %s from %s", m.info.Dimension, m.info.Workload, bsweep.Format(m.info.Values[0]))
		if m.info.MaxCells > 0 {
			plan += fmt.Sprintf(" (at most %d cells)", m.info.MaxCells)
		}
	}
	b.WriteString(fit(plan, m.w) + "\n")
	switch {
	case m.review:
		b.WriteString(m.reviewLine() + "\n")
	case m.done && m.err != nil:
		b.WriteString(st.Error.Render(fit("stopped: "+m.err.Error(), m.w)) + "\n")
	case m.done:
		line := fmt.Sprintf("done: %d cell(s), exit %d", len(m.cells), m.code)
		if m.result != nil {
			line += fmt.Sprintf("; highest passing %s %s", m.info.Dimension, bsweep.Format(m.result.MaxValue))
		}
		b.WriteString(st.OK.Render(fit(line, m.w)) + "\n")
	case m.stopping:
		b.WriteString(st.Warn.Render(fit("stopping: waiting for the requests in flight", m.w)) + "\n")
	case m.current != nil:
		prog := fmt.Sprintf("cell %d: %s %s, %d requests done", m.curIdx+1, m.info.Dimension, bsweep.Format(m.curVal), m.snap.Done)
		if m.snap.PhaseTotal > 0 {
			prog += fmt.Sprintf(" of %d in %s", m.snap.PhaseTotal, m.snap.Phase)
		}
		if l := m.snap.Load; l.AchievedRate != nil {
			prog += fmt.Sprintf(", %.1f req/s", *l.AchievedRate)
		}
		if m.snap.Load.Slipping {
			prog += ", schedule slipping: " + m.snap.Load.Cause
		}
		b.WriteString(fit(prog, m.w) + "\n")
	default:
		b.WriteString("starting…\n")
	}
	tableRows := min(len(m.cells)+1, max(m.h/3, 3))
	chartH := m.h - 2 - tableRows - 1
	if chartH >= 6 {
		b.WriteString(m.charts(chartH) + "\n")
	} else if m.review {
		// No room for the curve: the cells get the screen.
		tableRows = max(min(len(m.cells)+1, m.h-3), 2)
	}
	if m.review {
		b.WriteString(m.reviewTable(tableRows))
	} else {
		b.WriteString(m.table(tableRows))
	}
	if m.dir != "" && m.h > 0 {
		b.WriteString("\n" + st.Muted.Render(fit(m.dir, m.w)))
	}
	return b.String()
}

func listText(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = bsweep.Format(x)
	}
	return fit(strings.Join(parts, ","), 40)
}

// xOf is a cell's x: its achieved rate (rate sweeps) or mean
// concurrency, else its value.
func (m *Model) xOf(c bsweep.Cell) float64 {
	if m.info.Dimension == bsweep.Rate && c.AchievedRate != nil {
		return *c.AchievedRate
	}
	if m.info.Dimension == bsweep.Concurrency && c.MeanConcurrency != nil {
		return *c.MeanConcurrency
	}
	return c.Value
}

// charts draws TTFT p50/p99 against x and, with an SLO, the good
// fraction, side by side.
func (m *Model) charts(h int) string {
	st := m.c.Styles
	cells := append([]bsweep.Cell(nil), m.cells...)
	sort.Slice(cells, func(i, j int) bool { return m.xOf(cells[i]) < m.xOf(cells[j]) })
	n := 1
	if m.info.SLO {
		n = 2
	}
	w := m.w / n
	if len(cells) == 0 {
		return lipgloss.NewStyle().Width(m.w).Height(h).Render("the curve draws as cells finish")
	}
	maxX, maxY := 0.0, 0.0
	for _, c := range cells {
		maxX = max(maxX, m.xOf(c))
		if c.P99TTFTms != nil {
			maxY = max(maxY, *c.P99TTFTms)
		}
	}
	xLabel := "achieved req/s"
	if m.info.Dimension == bsweep.Concurrency {
		xLabel = "mean concurrency"
	}
	ttft := wavelinechart.New(w, h-1, wavelinechart.WithXYRange(0, maxX*1.05+1e-9, 0, maxY*1.1+1e-9))
	ttft.SetDataSetStyles("p99", runes.ArcLineStyle, st.SeriesB)
	ttft.SetDataSetStyles("p50", runes.ArcLineStyle, st.SeriesA)
	for _, c := range cells {
		x := m.xOf(c)
		if c.P50TTFTms != nil {
			ttft.PlotDataSet("p50", canvas.Float64Point{X: x, Y: *c.P50TTFTms})
		}
		if c.P99TTFTms != nil {
			ttft.PlotDataSet("p99", canvas.Float64Point{X: x, Y: *c.P99TTFTms})
		}
	}
	ttft.DrawAll()
	out := lipgloss.JoinVertical(lipgloss.Left, fit("TTFT p50 / p99 (ms) by "+xLabel, w), ttft.View())
	if n == 2 {
		good := wavelinechart.New(w, h-1, wavelinechart.WithXYRange(0, maxX*1.05+1e-9, 0, 100))
		good.SetStyles(runes.ArcLineStyle, st.SeriesA)
		for _, c := range cells {
			if c.GoodFraction != nil {
				good.Plot(canvas.Float64Point{X: m.xOf(c), Y: *c.GoodFraction * 100})
			}
		}
		good.Draw()
		out = lipgloss.JoinHorizontal(lipgloss.Top, out, lipgloss.JoinVertical(lipgloss.Left, fit("good fraction (%) by "+xLabel, w), good.View()))
	}
	return out
}

// table lists the last rows-1 finished cells under a header.
func (m *Model) table(rows int) string {
	lines := []string{fit(m.tableHead(), m.w)}
	first := max(0, len(m.cells)-(rows-1))
	for _, c := range m.cells[first:] {
		lines = append(lines, fit(cellRow(c), m.w))
	}
	return strings.Join(lines, "\n")
}

func (m *Model) tableHead() string {
	return fmt.Sprintf("%8s %10s %10s %10s %7s %9s", strings.ToUpper(m.info.Dimension), "ACHIEVED", "P50 TTFT", "P99 TTFT", "GOOD %", "DELIVERED")
}

func cellRow(c bsweep.Cell) string {
	delivered := "-"
	if c.Delivered != nil {
		delivered = map[bool]string{true: "yes", false: "NO"}[*c.Delivered]
	}
	return fmt.Sprintf("%8s %10s %10s %10s %7s %9s", bsweep.Format(c.Value), num(c.AchievedRate), num(c.P50TTFTms), num(c.P99TTFTms), pct(c.GoodFraction), delivered)
}

func num(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", *p)
}

func pct(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", *p*100)
}

func fit(s string, w int) string {
	r := []rune(s)
	if len(r) <= w {
		return s
	}
	if w <= 1 {
		return string(r[:max(w, 0)])
	}
	return string(r[:w-1]) + "…"
}
