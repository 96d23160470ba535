// Package sweep is the sweep screen: the cells of a `kvbench sweep` as
// they run, the current cell's progress, the finished cells' table and
// their curve (x: achieved rate or concurrency; y: TTFT p50/p99 and,
// with an SLO, the good fraction), redrawn as each cell finishes. The
// same screen reviews a sweep folder from the explorer (NewReview): its
// curve and its cells, each opened as a run.
package sweep

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	bsweep "github.com/kvbench/kvbench/bench/sweep"
	"github.com/kvbench/kvbench/internal/textclean"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/curve"
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
	// TTFTSLOms is the SLO's TTFT limit and GoodputTarget the good
	// fraction a cell must reach (nil when not set): drawn as levels.
	TTFTSLOms, GoodputTarget *float64
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
	inCell  bool // a cell has started and not finished
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
		m.current, m.inCell, m.curIdx, m.curVal = ev.Runner, true, ev.Index, ev.Value
		m.snap = bench.Snapshot{}
	case CellDone:
		m.cells = append(m.cells, ev.Cell)
		m.current, m.inCell = nil, false
	case Done:
		m.done, m.dir, m.code, m.err, m.current, m.inCell = true, ev.Dir, ev.Code, ev.Err, nil, false
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
		return "Sweep " + runs.FolderID(m.dir)
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
			return st.Error.Render(fit(common.ErrorText(m.loadErr), m.w))
		}
		return st.Muted.Render(fit("Reading "+record.SweepFile+" …", m.w))
	}
	plan := fmt.Sprintf("%s over %s %s", m.info.Workload, m.info.Dimension, listText(m.info.Values))
	if m.info.Search && len(m.info.Values) > 0 {
		plan = fmt.Sprintf("capacity search over %s of %s from %s", m.info.Dimension, m.info.Workload, bsweep.Format(m.info.Values[0]))
		if m.workingSet() {
			plan = fmt.Sprintf("working-set search (cache capacity, fast tier) of %s from %s tokens", m.info.Workload, bsweep.Format(m.info.Values[0]))
		}
		if m.info.MaxCells > 0 {
			plan += fmt.Sprintf(" (at most %d cells)", m.info.MaxCells)
		}
	}
	b.WriteString(fit(plan, m.w) + "\n")
	switch {
	case m.review:
		b.WriteString(m.reviewLine() + "\n")
	case m.done && m.err != nil:
		b.WriteString(st.Error.Render(fit("stopped: "+common.ErrorText(m.err), m.w)) + "\n")
	case m.done:
		line := fmt.Sprintf("done: %d cell(s), exit %d", len(m.cells), m.code)
		if r := m.resultWords(); r != "" {
			line += "; " + r
		}
		style := st.OK
		if m.code != 0 {
			style = st.Warn
		}
		b.WriteString(style.Render(fit(line, m.w)) + "\n")
	case m.stopping:
		b.WriteString(st.Warn.Render(fit("stopping: waiting for the requests in flight", m.w)) + "\n")
	case m.inCell:
		prog := fmt.Sprintf("cell %d: %s %s, %d requests done", m.curIdx+1, m.info.Dimension, bsweep.Format(m.curVal), m.snap.Done)
		if m.snap.PhaseTotal > 0 {
			prog += fmt.Sprintf(" of %d in %s", m.snap.PhaseTotal, m.snap.Phase)
		}
		if l := m.snap.Load; l.AchievedRate != nil {
			prog += fmt.Sprintf(", %.1f req/s", *l.AchievedRate)
		}
		if g := m.snap.Load.GoodFraction; g != nil {
			prog += fmt.Sprintf(", good %.0f%%", *g*100)
		}
		if m.snap.Load.Slipping {
			prog += ", schedule slipping: " + m.snap.Load.Cause
		}
		b.WriteString(fit(prog, m.w) + "\n")
	case len(m.cells) > 0:
		b.WriteString(fit(fmt.Sprintf("cell %d done, next cell starting…", len(m.cells)), m.w) + "\n")
	default:
		b.WriteString("starting…\n")
	}
	why := m.why()
	whyRows := 0
	if why != "" {
		whyRows = 1
	}
	tableRows := min(len(m.cells)+1, max(m.h/3, 3))
	chartH := m.h - 2 - tableRows - 1 - whyRows
	if chartH >= 6 {
		b.WriteString(m.charts(chartH) + "\n")
	} else if m.review {
		// No room for the curve: the cells get the screen.
		tableRows = max(min(len(m.cells)+1, m.h-3-whyRows), 2)
	}
	if m.review {
		b.WriteString(m.reviewTable(tableRows))
	} else {
		b.WriteString(m.table(tableRows))
	}
	if why != "" && m.h >= minH+whyRows {
		b.WriteString("\n" + why)
	}
	if m.dir != "" && m.h > 0 {
		b.WriteString("\n" + st.Muted.Render(fit(textclean.Line(m.dir), m.w)))
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
	if m.workingSet() {
		return wsX(c)
	}
	if m.info.Dimension == bsweep.Rate && c.AchievedRate != nil {
		return *c.AchievedRate
	}
	if m.info.Dimension == bsweep.Concurrency && c.MeanConcurrency != nil {
		return *c.MeanConcurrency
	}
	return c.Value
}

// xUnit is the x axis' unit, saying what was measured when long.
func (m *Model) xUnit(long bool) string {
	switch {
	case m.info.Dimension == bsweep.Concurrency && long:
		return "mean in flight"
	case m.info.Dimension == bsweep.Concurrency:
		return "in flight"
	case long:
		return "req/s achieved"
	}
	return "req/s"
}

// curves are the finished cells' figures against x, each series in x
// order (cells finish in the order a search visits them, not by load).
type curves struct {
	p50, p99, good []canvas.Float64Point
	maxX, maxTTFT  float64
}

func (m *Model) curves() curves {
	var cv curves
	for _, c := range m.cells {
		x := m.xOf(c)
		cv.maxX = max(cv.maxX, x)
		if c.P50TTFTms != nil {
			cv.p50 = append(cv.p50, canvas.Float64Point{X: x, Y: *c.P50TTFTms})
			cv.maxTTFT = max(cv.maxTTFT, *c.P50TTFTms)
		}
		if c.P99TTFTms != nil {
			cv.p99 = append(cv.p99, canvas.Float64Point{X: x, Y: *c.P99TTFTms})
			cv.maxTTFT = max(cv.maxTTFT, *c.P99TTFTms)
		}
		if c.GoodFraction != nil {
			cv.good = append(cv.good, canvas.Float64Point{X: x, Y: *c.GoodFraction * 100})
		}
	}
	cv.p50, cv.p99, cv.good = curve.Ordered(cv.p50), curve.Ordered(cv.p99), curve.Ordered(cv.good)
	return cv
}

// target is the good fraction a cell must reach (nil without an SLO).
func (m *Model) target() *float64 { return m.info.GoodputTarget }

// capacity is the cell of the highest value that passed (delivered,
// sustained, at the goodput target): the sweep's result once it has
// ended, else the best so far (final false). ok is false when no cell
// passed or there is no SLO.
func (m *Model) capacity() (c bsweep.Cell, final, ok bool) {
	if m.result != nil {
		if m.result.MaxValue == nil {
			return c, true, false
		}
		for _, c := range m.cells {
			if c.Value == *m.result.MaxValue {
				return c, true, true
			}
		}
		return bsweep.Cell{Value: *m.result.MaxValue}, true, false
	}
	if m.done || m.target() == nil {
		return c, false, false
	}
	for _, x := range m.cells {
		if x.Verdict(m.target()) == record.CellPass && (!ok || x.Value > c.Value) {
			c, ok = x, true
		}
	}
	return c, false, ok
}

// resultWords say what the ended sweep established ("" when there is
// nothing to say): the highest delivered passing value and the values
// above it that were not delivered, or where a cut stopped it.
func (m *Model) resultWords() string {
	dim := m.info.Dimension
	var parts []string
	if r := m.result; r != nil && m.workingSet() {
		parts = append(parts, m.wsResultWords())
	} else if r != nil {
		var und []string
		for _, u := range r.UndeliveredAbove {
			und = append(und, bsweep.Format(u.Value))
		}
		switch {
		case r.MaxValue != nil && len(und) > 0:
			parts = append(parts, fmt.Sprintf("highest passing %s %s, %s not delivered", dim, bsweep.Format(*r.MaxValue), strings.Join(und, ",")))
		case r.MaxValue != nil:
			parts = append(parts, fmt.Sprintf("highest passing %s %s", dim, bsweep.Format(*r.MaxValue)))
		case len(und) > 0:
			parts = append(parts, fmt.Sprintf("no delivered %s passed, %s not delivered", dim, strings.Join(und, ",")))
		}
	}
	if n := len(m.cells); n > 0 && m.cells[n-1].Status == record.CellCut {
		parts = append(parts, fmt.Sprintf("cut at %s %s: its record is incomplete", dim, bsweep.Format(m.cells[n-1].Value)))
	}
	return strings.Join(parts, "; ")
}

// explained are the statuses whose reasons the live screen shows: the
// ones the table's figures do not explain by themselves.
func explained(status string) bool {
	switch status {
	case record.CellNotDelivered, record.CellNotSustained, record.CellCut, record.CellInterrupted:
		return true
	}
	return false
}

// why is the line saying why a cell did not pass, its status and
// reasons: in review the cell under the cursor (the line is kept while
// any cell has reasons, so the layout does not jump with the cursor),
// else the last cell to finish not delivered, not sustained or cut; ""
// when there is none.
func (m *Model) why() string {
	st := m.c.Styles
	if m.review {
		any := false
		for _, c := range m.cells {
			any = any || len(c.Reasons) > 0 && c.Verdict(m.target()) != record.CellPass
		}
		if !any || m.cursor >= len(m.cells) {
			return ""
		}
		c := m.cells[m.cursor]
		if v := c.Verdict(m.target()); v == record.CellPass || v == record.CellDone || len(c.Reasons) == 0 {
			return st.Muted.Render(fit(fmt.Sprintf("%s %s %s", m.info.Dimension, bsweep.Format(c.Value), v), m.w))
		}
		return m.reasonLine(c)
	}
	for i := len(m.cells) - 1; i >= 0; i-- {
		if c := m.cells[i]; explained(c.Verdict(m.target())) && len(c.Reasons) > 0 {
			return m.reasonLine(c)
		}
	}
	return ""
}

// reasonLine is "<dimension> <value> <status>: <reasons>".
func (m *Model) reasonLine(c bsweep.Cell) string {
	v := c.Verdict(m.target())
	style := m.c.Styles.Warn
	if v == record.CellCut {
		style = m.c.Styles.Error
	}
	return style.Render(fit(fmt.Sprintf("%s %s %s: %s", m.info.Dimension, bsweep.Format(c.Value), v, strings.Join(c.Reasons, "; ")), m.w))
}

// minChartW is the narrowest useful chart: below two of them side by
// side, only the TTFT chart shows.
const minChartW = 36

// part is a piece of a title or legend in its style.
type part struct {
	text  string
	style lipgloss.Style
}

// pick renders the longest of the variants (longest first) that fits in
// w cells, cut when none does.
func pick(w int, variants ...[]part) string {
	for i, v := range variants {
		n := 0
		for _, p := range v {
			n += len([]rune(p.text))
		}
		if n > w && i < len(variants)-1 {
			continue
		}
		var b strings.Builder
		for _, p := range v {
			t := fit(p.text, w)
			w -= len([]rune(t))
			b.WriteString(p.style.Render(t))
			if w <= 0 {
				break
			}
		}
		return b.String()
	}
	return ""
}

// charts draws TTFT p50/p99 against x and, with an SLO, the good
// fraction, side by side, each series joined in x order with its own
// mark; the TTFT limit and the goodput target as dashed levels, the
// capacity found as a dashed mark, named in a legend line under them.
func (m *Model) charts(h int) string {
	if m.workingSet() {
		return m.workingSetCharts(h)
	}
	st := m.c.Styles
	if len(m.cells) == 0 {
		return lipgloss.NewStyle().Width(m.w).Height(h).Render("the curve draws as cells finish")
	}
	cv := m.curves()
	n := 1
	if m.info.SLO && m.w/2 >= minChartW {
		n = 2
	}
	w := m.w / n
	maxX := cv.maxX*1.05 + 1e-9
	var marks []curve.Guide
	capCell, final, capOK := m.capacity()
	if capOK {
		marks = append(marks, curve.Guide{At: m.xOf(capCell), Style: st.OK})
	}
	legend := m.legend(capCell, final, capOK, n == 2)
	if legend != "" {
		h--
	}
	unit := m.xUnit(w-1 >= 50)

	top := max(cv.maxTTFT, 1)
	var levels []curve.Guide
	if slo := m.info.TTFTSLOms; slo != nil {
		top = max(top, *slo)
		levels = append(levels, curve.Guide{At: *slo, Style: st.Warn, Label: curve.AxisLabel(0, *slo)})
	}
	ttft := curve.Draw(st, w-1, h-1, curve.Chart{MaxX: maxX, MaxY: top * 1.15, XUnit: unit, Levels: levels, Marks: marks,
		Series: []curve.Series{
			{Points: cv.p99, Stroke: curve.Box, Mark: '●', Style: st.SeriesA},
			{Points: cv.p50, Stroke: curve.Braille, Mark: '○', Style: st.SeriesB},
		}})
	pl, p99, p50 := st.PanelTitle, part{"●─ p99", st.SeriesA}, part{"○⠒ p50", st.SeriesB}
	sp := part{"  ", lipgloss.NewStyle()}
	title := pick(w-1,
		[]part{{"TTFT p50 / p99 (ms)", pl}, sp, p99, sp, p50},
		[]part{{"TTFT (ms)", pl}, {" ", pl}, {"●─p99", st.SeriesA}, {" ", pl}, {"○⠒p50", st.SeriesB}},
		[]part{{"TTFT ms", pl}, {" ", pl}, {"●p99", st.SeriesA}, {" ", pl}, {"○p50", st.SeriesB}})
	cols := []string{lipgloss.NewStyle().Width(w).Render(title + "\n" + ttft)}
	if n == 2 {
		var lv []curve.Guide
		if g := m.info.GoodputTarget; g != nil {
			lv = append(lv, curve.Guide{At: *g * 100, Style: st.Warn, Label: curve.AxisLabel(0, *g*100)})
		}
		good := curve.Draw(st, w-1, h-1, curve.Chart{MaxX: maxX, MaxY: 100, XUnit: unit, Levels: lv, Marks: marks,
			Series: []curve.Series{{Points: cv.good, Stroke: curve.Box, Mark: '◆', Style: st.SeriesA}}})
		gt := pick(w-1, []part{{"good fraction (%)", pl}}, []part{{"good %", pl}})
		cols = append(cols, lipgloss.NewStyle().Width(w).Render(gt+"\n"+good))
	}
	out := lipgloss.JoinHorizontal(lipgloss.Top, cols...)
	if legend != "" {
		out += "\n" + legend
	}
	return out
}

// legend names the guides drawn: the TTFT limit, the goodput target
// (when its chart shows) and the capacity mark, in the longest of three
// wordings that fits; "" when there are none.
func (m *Model) legend(c bsweep.Cell, final, ok, goodChart bool) string {
	st := m.c.Styles
	slo, target := m.info.TTFTSLOms, m.info.GoodputTarget
	if !goodChart {
		target = nil
	}
	var level [3]string
	switch {
	case slo != nil && target != nil:
		ms, pc := bsweep.Format(*slo), *target*100
		level = [3]string{fmt.Sprintf("┄ TTFT SLO %s ms, goodput target %.0f%%", ms, pc),
			fmt.Sprintf("┄ TTFT SLO %s ms, target %.0f%%", ms, pc), fmt.Sprintf("┄ SLO %s ms, %.0f%%", ms, pc)}
	case slo != nil:
		ms := bsweep.Format(*slo)
		level = [3]string{"┄ TTFT SLO " + ms + " ms", "┄ TTFT SLO " + ms + " ms", "┄ SLO " + ms + " ms"}
	case target != nil:
		pc := fmt.Sprintf("%.0f%%", *target*100)
		level = [3]string{"┄ goodput target " + pc, "┄ goodput target " + pc, "┄ target " + pc}
	}
	var capacity [3]string
	if ok {
		v := m.info.Dimension + " " + bsweep.Format(c.Value)
		at := ""
		if x := m.xOf(c); x != c.Value {
			at = fmt.Sprintf(" (%s %s)", strconv.FormatFloat(x, 'f', 1, 64), m.xUnit(true))
		}
		capacity = [3]string{"┆ highest passing " + v + at, "┆ highest passing " + v, "┆ max " + bsweep.Format(c.Value)}
		if !final {
			capacity = [3]string{"┆ highest passing so far: " + v + at, "┆ passing so far: " + v, "┆ passes " + bsweep.Format(c.Value)}
		}
	}
	if level[0] == "" && capacity[0] == "" {
		return ""
	}
	variants := make([][]part, 3)
	for i := range variants {
		if level[i] != "" {
			variants[i] = append(variants[i], part{level[i], st.Warn})
		}
		if level[i] != "" && capacity[i] != "" {
			variants[i] = append(variants[i], part{"   ", lipgloss.NewStyle()})
		}
		if capacity[i] != "" {
			variants[i] = append(variants[i], part{capacity[i], st.OK})
		}
	}
	return pick(m.w, variants...)
}

// table lists the last rows-1 finished cells under a header.
func (m *Model) table(rows int) string {
	lines := []string{fit(m.tableHead(), m.w)}
	first := max(0, len(m.cells)-(rows-1))
	for _, c := range m.cells[first:] {
		lines = append(lines, fit(m.cellRow(c), m.w))
	}
	return strings.Join(lines, "\n")
}

func (m *Model) tableHead() string {
	if m.workingSet() {
		return wsTableHead()
	}
	return fmt.Sprintf("%8s %10s %10s %10s %7s %13s", strings.ToUpper(m.info.Dimension), "ACHIEVED", "P50 TTFT", "P99 TTFT", "GOOD %", "STATUS")
}

// cellRow is a cell's row; its status says whether it passed, failed,
// was not sustained, not delivered or cut.
func (m *Model) cellRow(c bsweep.Cell) string {
	if m.workingSet() {
		return wsCellRow(c)
	}
	return fmt.Sprintf("%8s %10s %10s %10s %7s %13s", bsweep.Format(c.Value), num(c.AchievedRate), num(c.P50TTFTms), num(c.P99TTFTms), pct(c.GoodFraction), c.Verdict(m.target()))
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
