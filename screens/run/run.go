package run

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/curve"
	"github.com/kvbench/kvbench/screens/dialog"
	"github.com/kvbench/kvbench/theme"
)

// Poll intervals: the counters and the progress bar twice a second; the
// charts take one point per second from the snapshot's series, so they
// are redrawn only when a new second is there.
const snapshotEvery = 500 * time.Millisecond

// eventWindow is how long the event command keeps collecting after the
// first event, so a busy run costs at most five messages (and frames) a
// second for its events.
const eventWindow = 200 * time.Millisecond

// maxBatch bounds one message's events.
const maxBatch = 512

type keys struct {
	Stop, Focus, Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Open, Again, Report                                  key.Binding
}

func newKeys(km *common.KeyMap) keys {
	return keys{
		Stop:     key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q/ctrl+c", "stop")),
		Focus:    common.Named(km.Next, "tab", "focus log"),
		Up:       common.Named(km.Up, "↑/k", "scroll up"),
		Down:     common.Named(km.Down, "↓/j", "scroll down"),
		PageUp:   km.PageUp,
		PageDown: km.PageDown,
		Top:      km.Top,
		Bottom:   km.Bottom,
		Open:     common.Named(km.Select, "enter", "open in explorer"),
		Again:    key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "run again")),
		Report:   key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "HTML report")),
	}
}

// Model is the live run screen.
type Model struct {
	c    *common.Common
	id   common.ID
	sess *Session
	info Info
	keys keys

	width, height int

	snap     bench.Snapshot
	log      ring
	logFocus bool
	// logOff counts lines scrolled up from the newest (0 follows the tail).
	logOff int
	sumOff int

	charts    chartData
	ttftChart string
	outChart  string // output tok/s
	inChart   string // input tok/s, on a terminal wide enough for three charts
	hitChart  string // hit ratio per second, when the series has token counts
	chartKey  string

	finished    bool
	summary     *record.Summary
	summaryText string
	code        int
	stopping    bool
	aborting    bool
	preparing   bool
	err         string

	bar progress.Model

	// view is the last frame, drawn again only when something changed.
	view  string
	dirty bool
}

// New builds the screen for a prepared runner.
func New(c *common.Common, r *bench.Runner) *Model {
	m := NewFromSource(c, r, InfoOf(r))
	if err := r.Prepared().ModelErr; err != nil {
		m.log.add(logLine{at: c.Now(), kind: logWarn, text: "cannot auto-detect the model: " + err.Error()})
	}
	return m
}

// NewFromSource builds the screen over any source (tests script one).
func NewFromSource(c *common.Common, src Source, info Info) *Model {
	m := &Model{
		c:    c,
		id:   common.NewID(),
		sess: NewSession(src, info),
		info: info,
		keys: newKeys(c.KeyMap),
		bar: progress.New(progress.WithSolidFill(string(colorOf(c))), progress.WithoutPercentage(),
			progress.WithColorProfile(lipgloss.ColorProfile())),
	}
	m.SetSize(c.Width, c.Height)
	return m
}

func colorOf(c *common.Common) lipgloss.Color {
	if lipgloss.HasDarkBackground() {
		return lipgloss.Color(c.Styles.Palette.Accent.Dark)
	}
	return lipgloss.Color(c.Styles.Palette.Accent.Light)
}

// Session is the run this screen shows.
func (m *Model) Session() *Session { return m.sess }

// Messages addressed to one screen by its id.
type (
	eventsMsg struct {
		id     common.ID
		events []bench.Event
		closed bool
	}
	snapshotMsg struct {
		id   common.ID
		snap bench.Snapshot
	}
	// endedMsg carries how the run ended; it is asked for once the event
	// stream has closed, so it comes after the run's last event.
	endedMsg struct {
		id     common.ID
		finish bench.Finish
	}
	stopMsg  struct{ id common.ID }
	abortMsg struct{ id common.ID }
)

// Init starts the run, the event stream and the snapshot poll.
func (m *Model) Init() tea.Cmd {
	if m.sess.Started() {
		return nil
	}
	s := m.sess
	start := func() tea.Msg {
		s.run()
		return nil
	}
	return tea.Batch(
		func() tea.Msg { return StartedMsg{Session: s} },
		start,
		m.waitEvents(),
		m.poll(),
	)
}

// awaitEnd waits for the run's Finish (after its events).
func (m *Model) awaitEnd() tea.Cmd {
	s, id := m.sess, m.id
	return func() tea.Msg { return endedMsg{id: id, finish: s.result()} }
}

// waitEvents waits for the next event, then keeps what arrives within a
// short window, and is re-issued after each batch.
func (m *Model) waitEvents() tea.Cmd {
	ch, id := m.sess.src.Events(), m.id
	return func() tea.Msg {
		e, ok := <-ch
		if !ok {
			return eventsMsg{id: id, closed: true}
		}
		batch := []bench.Event{e}
		timer := time.NewTimer(eventWindow)
		defer timer.Stop()
		for len(batch) < maxBatch {
			select {
			case e, ok := <-ch:
				if !ok {
					return eventsMsg{id: id, events: batch, closed: true}
				}
				batch = append(batch, e)
			case <-timer.C:
				return eventsMsg{id: id, events: batch}
			}
		}
		return eventsMsg{id: id, events: batch}
	}
}

func (m *Model) poll() tea.Cmd {
	src, id := m.sess.src, m.id
	return tea.Tick(snapshotEvery, func(time.Time) tea.Msg {
		return snapshotMsg{id: id, snap: src.Snapshot()}
	})
}

// InterceptsKey keeps q and ctrl+c while the run is going: they ask
// before stopping.
func (m *Model) InterceptsKey(k tea.KeyMsg) bool {
	return !m.finished && key.Matches(k, m.keys.Stop)
}

func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg.(type) {
	case eventsMsg, snapshotMsg, endedMsg, stopMsg, abortMsg, PreparedMsg, tea.KeyMsg:
		m.dirty = true
	}
	switch msg := msg.(type) {
	case eventsMsg:
		if msg.id != m.id {
			return m, nil
		}
		var cmds []tea.Cmd
		for _, e := range msg.events {
			m.onEvent(e)
		}
		if msg.closed {
			cmds = append(cmds, m.awaitEnd())
		} else {
			cmds = append(cmds, m.waitEvents())
		}
		return m, tea.Batch(cmds...)

	case snapshotMsg:
		if msg.id != m.id {
			return m, nil
		}
		m.setSnapshot(msg.snap)
		if m.finished {
			return m, nil
		}
		return m, m.poll()

	case endedMsg:
		if msg.id != m.id {
			return m, nil
		}
		return m, m.finish(msg.finish)

	case stopMsg:
		if msg.id == m.id && !m.finished {
			m.stopping = true
			m.sess.Stop()
			m.log.add(logLine{at: m.c.Now(), kind: logWarn, text: "stopping: no new requests; waiting for those in flight"})
		}
		return m, nil

	case abortMsg:
		if msg.id == m.id && !m.finished {
			m.stopping, m.aborting = true, true
			m.sess.Abort()
			m.log.add(logLine{at: m.c.Now(), kind: logWarn, text: "stopping now: requests in flight are cancelled"})
		}
		return m, nil

	case PreparedMsg:
		if msg.To != m.id {
			return m, nil
		}
		m.preparing = false
		if msg.Err != nil {
			m.err = common.ErrorText(msg.Err)
			return m, common.Failure(msg.Err)
		}
		return m, HandOver(msg)

	case tea.KeyMsg:
		return m, m.onKey(msg)
	}
	return m, nil
}

func (m *Model) onKey(k tea.KeyMsg) tea.Cmd {
	switch {
	case !m.finished && key.Matches(k, m.keys.Stop):
		if m.stopping {
			if k.String() == "ctrl+c" {
				return func() tea.Msg { return abortMsg{id: m.id} }
			}
			return nil
		}
		id := m.id
		return common.Push(dialog.NewConfirm(m.c, "Stop the run?",
			"No new requests are sent; those in flight finish and the partial results are saved (exit 130). Press ctrl+c again to stop at once.",
			func() tea.Msg { return stopMsg{id: id} },
			dialog.CtrlC("stop now", func() tea.Msg { return abortMsg{id: id} })))
	case key.Matches(k, m.keys.Focus):
		hh := m.hitHeight()
		m.logFocus = !m.logFocus
		if m.hitHeight() != hh {
			// On a short screen the focused log takes the hit chart's rows.
			m.redrawCharts()
		}
		return nil
	case m.finished && key.Matches(k, m.keys.Open) && m.info.Dir != "":
		return common.Open(common.OpenRunDetail{Dir: m.info.Dir})
	case m.finished && key.Matches(k, m.keys.Report) && m.info.Dir != "":
		return common.Open(common.OpenReport{Runs: []string{m.info.Dir}})
	case m.finished && key.Matches(k, m.keys.Again) && m.info.Config != nil && !m.preparing:
		m.preparing = true
		m.err = ""
		return tea.Batch(common.Status("preparing the next run…"), Prepare(m.c, m.id, m.info.Config.Clone()))
	}
	m.scroll(k)
	return nil
}

// scroll moves the focused text: the log, or the summary once finished.
func (m *Model) scroll(k tea.KeyMsg) {
	off := &m.sumOff
	page := max(m.height-4, 1)
	if m.logFocus || !m.finished {
		if !m.logFocus {
			return
		}
		off = &m.logOff
		page = max(m.logHeight()-2, 1)
	}
	// For the log the offset counts up from the newest line; for the
	// summary down from the top.
	sign := 1
	if off == &m.logOff {
		sign = -1
	}
	switch {
	case key.Matches(k, m.keys.Up):
		*off -= sign
	case key.Matches(k, m.keys.Down):
		*off += sign
	case key.Matches(k, m.keys.PageUp):
		*off -= sign * page
	case key.Matches(k, m.keys.PageDown):
		*off += sign * page
	case key.Matches(k, m.keys.Top):
		*off = 1 << 30
		if sign == 1 {
			*off = 0
		}
	case key.Matches(k, m.keys.Bottom):
		*off = 0
		if sign == 1 {
			*off = 1 << 30
		}
	}
	*off = max(*off, 0)
}

func (m *Model) onEvent(e bench.Event) {
	if l, ok := fromEvent(e); ok {
		m.log.add(l)
	}
}

// finish shows how the run ended: the summary with the workload's
// sections, the exit code, a last log line.
func (m *Model) finish(f bench.Finish) tea.Cmd {
	if m.finished {
		return nil
	}
	sum, code := f.Summary, f.ExitCode
	m.finished, m.summary, m.code = true, sum, code
	m.log.add(finishLine(m.c.Now(), f))
	text := ""
	if sum != nil {
		var b bytes.Buffer
		if err := report.Text(&b, sum, report.FailedChecks(f.Sections, f.Reasons)...); err == nil {
			text = b.String()
			m.summaryText = strings.TrimRight(text, "\n")
		}
		if m.info.Dir != "" {
			m.summaryText += "\n\nRecord: " + m.info.Dir
		}
	}
	m.logFocus = false
	cmds := []tea.Cmd{
		func() tea.Msg {
			return FinishedMsg{Session: m.sess, Code: code, Summary: sum, Text: text, Dir: m.info.Dir}
		},
		// A last look at the figures.
		func() tea.Msg { return snapshotMsg{id: m.id, snap: m.sess.src.Snapshot()} },
	}
	if m.aborting {
		cmds = append(cmds, common.Quit(code))
	} else {
		cmds = append(cmds, common.Status(fmt.Sprintf("run finished, exit code %d", code)))
	}
	return tea.Batch(cmds...)
}

func (m *Model) setSnapshot(s bench.Snapshot) {
	before, hitsBefore := m.chartHeight(), m.hitHeight()
	m.snap = s
	d := seriesData(s.Series)
	if d.key != m.charts.key || m.chartHeight() != before || m.hitHeight() != hitsBefore {
		// A new second, or panels grown for a warning.
		m.charts = d
		m.redrawCharts()
	}
}

func (m *Model) SetSize(w, h int) {
	if w == m.width && h == m.height {
		return
	}
	m.width, m.height = w, h
	m.dirty = true
	m.redrawCharts()
}

// Layout: the header (2 lines), the panels (5 lines inside their
// borders), then the charts and the log share what is left. The charts
// come first: on a short terminal the log is folded away rather than the
// charts squeezed to nothing.
const (
	headerLines = 2
	panelLines  = 7
	// minChartLines is the smallest chart panel worth drawing: 4 rows of
	// graph and the time axis inside the border.
	minChartLines = 7
	maxChartLines = 20
	// minLogLines is the smallest log worth showing (2 lines).
	minLogLines = 4
)

// avail is the height the charts and the log share.
func (m *Model) avail() int { return m.height - headerLines - m.panelHeight() }

// compactWidth is the narrowest terminal the three framed panels are
// drawn on; below it their figures are lines of plain text.
const compactWidth = 72

func (m *Model) panelHeight() int {
	if m.width < compactWidth {
		return len(m.compactPanels())
	}
	// The panels grow for a long warning, up to a third of the screen.
	limit := max(panelLines, m.height/3)
	return max(panelLines, min(m.clientLines(limit-2)+2, limit))
}

func (m *Model) chartHeight() int {
	c, _ := m.layout()
	return c
}

// Hit ratio chart heights: 2 rows of graph and the time axis inside the
// border at least, 8 rows of graph at most.
const (
	minHitLines = 5
	maxHitLines = 11
)

// hitHeight is the height of the hit ratio panel under the charts (0
// when the series has no token counts or there is no room).
func (m *Model) hitHeight() int {
	_, h := m.layout()
	return h
}

// layout is the heights of the chart row and of the hit ratio panel
// under it. The hit ratio takes its rows from the log, which keeps
// minLogLines when it can; when it cannot the log is folded away, as it
// is for the charts (and the chart row shrinks to its smallest if need
// be), unless the log has the focus.
func (m *Model) layout() (charts, hits int) {
	a := m.avail()
	ch := 0
	switch {
	case a < minChartLines:
		return 0, 0
	case a < minChartLines+minLogLines+1:
		ch = min(a, maxChartLines)
	default:
		ch = min(max(a/2, minChartLines+1), maxChartLines, a-minLogLines)
	}
	if !m.charts.hasHits {
		return ch, 0
	}
	rest := a - ch
	switch {
	case rest >= minHitLines+minLogLines:
		return ch, min(max(rest/2, minHitLines), maxHitLines, rest-minLogLines)
	case m.logFocus:
		return ch, 0
	case rest >= minHitLines:
		return ch, rest
	case a-minChartLines >= minHitLines:
		return a - minHitLines, minHitLines
	}
	return ch, 0
}

func (m *Model) logHeight() int {
	return max(m.avail()-m.chartHeight()-m.hitHeight(), 0)
}

// threeCharts is the narrowest terminal that shows input tok/s in a
// chart of its own; below it the input rate is a figure in the output
// chart's title. Output and input never share an axis: input is tens of
// times output, which would lie flat on zero under it.
const threeCharts = 120

// chartWidths are the widths of the chart panels: TTFT, output tok/s
// and, when wide enough, input tok/s (0 otherwise).
func (m *Model) chartWidths() (int, int, int) {
	if m.width >= threeCharts {
		a := m.width / 3
		return a, a, m.width - 2*a
	}
	a := m.width / 2
	return a, m.width - a, 0
}

func (m *Model) redrawCharts() {
	h := m.chartHeight()
	m.chartKey = ""
	if h < minChartLines || m.width < 20 {
		m.ttftChart, m.outChart, m.inChart, m.hitChart = "", "", "", ""
		return
	}
	a, b, c := m.chartWidths()
	p := m.c.Styles.Panel
	fw, fh := p.GetHorizontalFrameSize(), h-p.GetVerticalFrameSize()
	m.ttftChart = drawChart(m.c.Styles, a-fw, fh, m.charts.ttftP50, m.charts.ttftMax, m.charts.first, m.charts.last, waiting)
	m.outChart = drawChart(m.c.Styles, b-fw, fh, m.charts.outTPS, nil, m.charts.first, m.charts.last, waiting)
	m.inChart = ""
	if c > 0 {
		m.inChart = drawChart(m.c.Styles, c-fw, fh, m.charts.inTPS, nil, m.charts.first, m.charts.last, waiting)
	}
	m.hitChart = ""
	if hh := m.hitHeight(); hh > 0 {
		m.hitChart = drawHits(m.c.Styles, m.width-fw, hh-p.GetVerticalFrameSize(), m.charts, waiting)
	}
}

// hitTitle is the hit ratio panel's title in a panel w cells wide, with
// the latest second's ratio when there is room.
func (m *Model) hitTitle(w int) string {
	st := m.c.Styles
	t := st.PanelTitle.Render(hitName)
	for i := len(m.charts.hits) - 1; i >= 0; i-- {
		if v := m.charts.hits[i]; !math.IsNaN(v) {
			for _, f := range []string{fmt.Sprintf(" · cached / prompt tokens · last %.0f %%", v), fmt.Sprintf(" · last %.0f %%", v)} {
				if lipgloss.Width(t+f) <= w-4 {
					return t + st.Muted.Render(f)
				}
			}
			break
		}
	}
	return t
}

// hitName names the hit ratio chart, as the explorer's Charts tab does.
const hitName = "Hit ratio per second (%)"

// outTitle is the output chart's title in a panel w cells wide, with
// the latest input rate when input has no chart of its own (shorter
// forms first dropping the unit, then the input).
func (m *Model) outTitle(w int, withInput bool) string {
	st := m.c.Styles
	t := st.PanelTitle.Render("output tok/s")
	n := len(m.charts.inTPS)
	if !withInput || n == 0 {
		return t
	}
	in := curve.AxisLabel(0, m.charts.inTPS[n-1])
	for _, f := range []string{" · input " + in + " tok/s", " · input " + in} {
		if lipgloss.Width(t+f) <= w-4 {
			return t + st.Muted.Render(f)
		}
	}
	return t
}

func (m *Model) Title() string { return "run " + m.info.Workload }
func (m *Model) Typing() bool  { return false }

func (m *Model) ShortHelp() []key.Binding {
	if m.finished {
		b := []key.Binding{}
		if m.info.Dir != "" {
			b = append(b, m.keys.Open)
		}
		if m.info.Config != nil {
			b = append(b, m.keys.Again)
		}
		if m.info.Dir != "" {
			b = append(b, m.keys.Report)
		}
		return append(b, m.focusKey(), m.keys.Up, m.keys.Down)
	}
	b := []key.Binding{m.keys.Stop, m.focusKey()}
	if m.logFocus {
		b = append(b, m.keys.Up, m.keys.Down)
	}
	return b
}

func (m *Model) focusKey() key.Binding {
	k := m.keys.Focus
	switch {
	case m.finished && m.logFocus:
		k.SetHelp("tab", "show summary")
	case m.finished:
		k.SetHelp("tab", "show log")
	case m.logFocus:
		k.SetHelp("tab", "follow log")
	}
	return k
}

func (m *Model) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		m.ShortHelp(),
		{m.keys.Up, m.keys.Down, m.keys.PageUp, m.keys.PageDown, m.keys.Top, m.keys.Bottom},
	}
}

// View draws the screen in its width and height.
func (m *Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	if m.dirty || m.view == "" {
		m.view, m.dirty = m.draw(), false
	}
	return m.view
}

func (m *Model) draw() string {
	if m.finished {
		return m.finishedView()
	}
	header := m.headerView()
	a, b, c := m.chartWidths()
	h := m.chartHeight()
	st := m.c.Styles
	var charts string
	if h >= minChartLines {
		blocks := []string{
			panel(st.Panel, legend(st, "TTFT ms", "p50", "max"), m.ttftChart, a, h),
			panel(st.Panel, m.outTitle(b, c == 0), m.outChart, b, h),
		}
		if c > 0 {
			blocks = append(blocks, panel(st.Panel, st.PanelTitle.Render("input tok/s"), m.inChart, c, h))
		}
		charts = beside(blocks...)
		if hh := m.hitHeight(); hh > 0 {
			charts += "\n" + panel(st.Panel, m.hitTitle(m.width), m.hitChart, m.width, hh)
		}
	}
	parts := []string{header}
	if charts != "" {
		parts = append(parts, charts)
	}
	parts = append(parts, m.panelsView())
	if lh := m.logHeight(); lh >= 3 {
		parts = append(parts, m.logView(m.width, lh))
	}
	return strings.Join(parts, "\n")
}

func (m *Model) headerView() string {
	st := m.c.Styles
	s := m.snap
	model := m.info.Model
	if model == "" {
		model = "auto"
	}
	// The elapsed time is kept whole; the engine and model are cut first.
	elapsed := st.Muted.Render(" · elapsed ") + fmtDuration(s.Elapsed)
	line1 := truncate(st.Title.Render(m.info.Workload)+st.Muted.Render(" on ")+st.Bold.Render(m.info.Engine)+
		st.Muted.Render(" · model ")+model, max(m.width-lipgloss.Width(elapsed), 1)) + elapsed
	phase := s.Phase
	if phase == "" {
		phase = "starting"
	}
	state := phase
	if s.PhaseTotal >= 0 && s.Phase != "" {
		state += fmt.Sprintf(" %d/%d", s.PhaseDone, s.PhaseTotal)
	}
	if m.stopping {
		state = st.Warn.Render("stopping") + st.Muted.Render(" ("+state+")")
	} else {
		state = st.Bold.Render(state)
	}
	pct, eta, known := progressOf(s)
	line2 := state
	if known {
		right := fmt.Sprintf(" %3.0f%%", pct*100)
		if eta >= 0 {
			right += " ETA " + fmtDuration(eta)
		}
		bw := m.width - lipgloss.Width(state) - lipgloss.Width(right) - 2
		if bw >= 10 {
			m.bar.Width = min(bw, 60)
			line2 = state + "  " + m.bar.ViewAs(pct) + right
		} else {
			line2 = state + right
		}
	}
	return truncate(line1, m.width) + "\n" + truncate(line2, m.width)
}

// progressOf is the current phase's progress: by requests when their
// total is known, else by time when the phase has a planned length; eta
// is -1 when it cannot be told.
func progressOf(s bench.Snapshot) (pct float64, eta time.Duration, known bool) {
	inPhase := time.Duration(0)
	if !s.PhaseStart.IsZero() && !s.Started.IsZero() {
		inPhase = s.Started.Add(s.Elapsed).Sub(s.PhaseStart)
	}
	switch {
	case s.PhaseTotal > 0:
		pct = min(float64(s.PhaseDone)/float64(s.PhaseTotal), 1)
		eta = -1
		if s.PhaseDone > 0 && inPhase > 0 {
			eta = time.Duration(float64(inPhase) / float64(s.PhaseDone) * float64(s.PhaseTotal-s.PhaseDone))
		}
		return pct, eta, true
	case s.PhaseLength > 0:
		pct = min(max(float64(inPhase)/float64(s.PhaseLength), 0), 1)
		return pct, max(s.PhaseLength-inPhase, 0), true
	}
	return 0, -1, false
}

// compactPanels are the panels' figures as lines of text, for narrow
// terminals: what matters first comes first on each line, and a line
// too long for the width goes on under its label rather than being cut.
func (m *Model) compactPanels() []string {
	st := m.c.Styles
	s := m.snap
	ok := s.Done-s.Failed > 0
	hit := "n/a"
	if s.HitRatio != nil {
		hit = fmt.Sprintf("%.1f %%", *s.HitRatio*100)
	}
	const labelW = 7
	label := func(l string) string { return st.PanelTitle.Render(fmt.Sprintf("%-6s", l)) + " " }
	// The timing error first: it is by how much a warning says latencies
	// may be inflated.
	timing := timingStyle(st, s).Render("timing error p99 "+timingText(s.TimingErrorP99Ms)) + st.Muted.Render(" · ")
	client := fmt.Sprintf("CPU %.0f %% · lag %.1f ms", s.CPUPercent, s.MaxDispatchLagMs)
	// What is wrong first, right after the label; then the timing error.
	switch {
	case s.Warning != "":
		// The label says "client" already.
		client = st.Warn.Render(strings.TrimPrefix(s.Warning, "client ")) + st.Muted.Render(" · ") + timing + client
	case s.Note != "":
		// The note carries the timing error ("machine busy; timing error
		// p99 X ms"): it is not said twice.
		client = st.Muted.Render(s.Note) + st.Muted.Render(" · ") + client
	default:
		client = timing + client
	}
	lines := []string{
		label("reqs") + fmt.Sprintf("%d in flight · %d done · ", s.InFlight, s.Done) + failedText(st, s.Failed) + " failed",
		label("TTFT") + "mean " + fmtMs(s.MeanTTFTms, ok) + " · p99 " + fmtMs(s.P99TTFTms, ok),
		label("cache") + "hit " + hit + " · " + st.Cold.Render(fmt.Sprintf("%d cold", s.Cold)) + " · " +
			st.Reused.Render(fmt.Sprintf("%d reused", s.Reused)) + " · " + st.Unverified.Render(fmt.Sprintf("%d unverified", s.Unverified)),
		label("client") + client,
	}
	var out []string
	for _, l := range lines {
		if m.width <= labelW+8 {
			out = append(out, truncate(l, m.width))
			continue
		}
		head := ansi.Truncate(l, labelW, "")
		for i, w := range common.Wrap(ansi.TruncateLeft(l, labelW, ""), m.width-labelW) {
			if i > 0 {
				head = strings.Repeat(" ", labelW)
			}
			out = append(out, head+w)
		}
	}
	return out
}

func (m *Model) panelsView() string {
	if m.width < compactWidth {
		return strings.Join(m.compactPanels(), "\n")
	}
	st := m.c.Styles
	s := m.snap
	w1 := m.width / 3
	w2 := m.width / 3
	w3 := m.width - w1 - w2
	row := func(label, value string, w int) string {
		inner := w - st.Panel.GetHorizontalFrameSize()
		gap := max(inner-lipgloss.Width(label)-lipgloss.Width(value), 1)
		return label + strings.Repeat(" ", gap) + value
	}
	reqs := strings.Join([]string{
		row("in flight", fmt.Sprint(s.InFlight), w1),
		row("done", fmt.Sprint(s.Done), w1),
		row("failed", failedText(st, s.Failed), w1),
		row("mean TTFT", fmtMs(s.MeanTTFTms, s.Done-s.Failed > 0), w1),
		row("p99 TTFT", fmtMs(s.P99TTFTms, s.Done-s.Failed > 0), w1),
	}, "\n")
	hit := "n/a"
	if s.HitRatio != nil {
		hit = fmt.Sprintf("%.1f %%", *s.HitRatio*100)
	}
	cacheRows := []string{
		row(st.Cold.Render("cold"), st.Cold.Render(fmt.Sprint(s.Cold)), w2),
		row(st.Reused.Render("reused"), st.Reused.Render(fmt.Sprint(s.Reused)), w2),
		row(st.Unverified.Render("unverified"), st.Unverified.Render(fmt.Sprint(s.Unverified)), w2),
		row("hit ratio", hit, w2),
	}
	// A replayed trace's prediction, next to the hit ratio: the LRU one
	// when a KV budget makes it the closer bound.
	if s.ExpectedHitRatioLRU != nil {
		cacheRows = append(cacheRows, row("expected (LRU)", fmt.Sprintf("%.1f %%", *s.ExpectedHitRatioLRU*100), w2))
	} else if s.ExpectedHitRatio != nil {
		cacheRows = append(cacheRows, row("expected hit", fmt.Sprintf("%.1f %%", *s.ExpectedHitRatio*100), w2))
	}
	if s.ServerHitRate != nil {
		cacheRows = append(cacheRows, row("engine hit rate", fmt.Sprintf("%.1f %%", *s.ServerHitRate*100), w2))
	}
	cores := ""
	if s.Cores > 0 {
		cores = fmt.Sprintf(" of %d", s.Cores)
	}
	health := []string{
		row("CPU", fmt.Sprintf("%.0f %%%s", s.CPUPercent, cores), w3),
		row("rate", rateText(s.Load), w3),
		// How late the client's timestamps could be: what the overload
		// verdict judges (one late request's lag is not).
		row("timing error p99", timingStyle(st, s).Render(timingText(s.TimingErrorP99Ms)), w3),
	}
	if g := s.Load.GoodFraction; g != nil {
		health = append(health, row("good (SLO)", fmt.Sprintf("%.1f %%", *g*100), w3))
	}
	inner := w3 - st.Panel.GetHorizontalFrameSize()
	switch {
	case s.Warning != "":
		health = append(health, common.WrapStyled(st.Warn, m.clientWarning(inner, m.panelHeight()-2-len(health)), inner, 0))
	case s.Load.Slipping:
		// Never "keeps up" while the schedule slips: say why it does.
		health = append(health, common.WrapStyled(st.Warn, "schedule slipping: "+s.Load.Cause, inner, 0))
	case s.Note != "":
		// A busy machine while the client still keeps time.
		health = append(health, common.WrapStyled(st.Muted, s.Note, inner, 0))
	default:
		health = append(health, st.OK.Render("client keeps up"))
	}
	if s.DroppedEvent > 0 {
		health = append(health, row("log lines dropped", fmt.Sprint(s.DroppedEvent), w3))
	}
	cache, client := strings.Join(cacheRows, "\n"), strings.Join(health, "\n")
	h := m.panelHeight()
	return beside(
		panel(st.Panel, st.PanelTitle.Render("Requests"), reqs, w1, h),
		panel(st.Panel, st.PanelTitle.Render("Cache"), cache, w2, h),
		panel(st.Panel, st.PanelTitle.Render("Client"), client, w3, h))
}

// clientWarning is the overload warning whole when it fits in rows
// lines of inner cells, else shorter forms of it down to its first
// words, pointing to the log, which has every reason as it was found.
func (m *Model) clientWarning(inner, rows int) string {
	forms := warningForms(m.snap.Warning)
	for _, f := range forms {
		if len(common.Wrap(f, inner)) <= rows {
			return f
		}
	}
	return forms[len(forms)-1]
}

// warningForms are a warning and its shorter forms, longest first:
// "client overloaded, latencies may be inflated: reasons", without the
// reasons, then "client overloaded (see the log)".
func warningForms(w string) []string {
	forms := []string{w}
	head, _, ok := strings.Cut(w, ": ")
	if ok {
		forms = append(forms, head+" (reasons in the log)")
	}
	if first, _, ok := strings.Cut(head, ", "); ok {
		forms = append(forms, first+" (see the log)")
	}
	return forms
}

// clientLines is how many lines the Client panel's text takes in at
// most room lines: a warning is wrapped whole when it fits, its first
// part otherwise (clientWarning).
func (m *Model) clientLines(room int) int {
	s := m.snap
	inner := m.width - 2*(m.width/3) - m.c.Styles.Panel.GetHorizontalFrameSize()
	n := 3
	if s.Load.GoodFraction != nil {
		n++
	}
	switch {
	case s.Warning != "":
		n += len(common.Wrap(m.clientWarning(inner, room-n), inner))
	case s.Load.Slipping:
		n += len(common.Wrap("schedule slipping: "+s.Load.Cause, inner))
	default:
		n++
	}
	if s.DroppedEvent > 0 {
		n++
	}
	return n
}

// rateText is the achieved request rate, over the target when there is
// one.
func rateText(l load.Live) string {
	got := "n/a"
	if l.AchievedRate != nil {
		got = fmt.Sprintf("%.1f", *l.AchievedRate)
	}
	if l.TargetRate == nil {
		return got + " req/s"
	}
	return fmt.Sprintf("%s / %.1f req/s", got, *l.TargetRate)
}

func failedText(st *theme.Styles, n int) string {
	if n > 0 {
		return st.Error.Render(fmt.Sprint(n))
	}
	return fmt.Sprint(n)
}

func (m *Model) logView(w, h int) string {
	st := m.c.Styles.Panel
	if m.logFocus {
		st = m.c.Styles.PanelFocused
	}
	inner := h - st.GetVerticalFrameSize()
	innerW := w - st.GetHorizontalFrameSize()
	n := m.log.len()
	// The offset counts entries; an entry may take several rows.
	m.logOff = min(m.logOff, max(n-1, 0))
	end := n - m.logOff
	// Whole entries, newest at the bottom; an entry taller than the log
	// shows its first rows (where its id and error are) and ends in "…".
	var rows []string
	for i := end - 1; i >= 0; i-- {
		entry := strings.Split(m.log.at(i).render(m.c.Styles, innerW), "\n")
		if len(rows)+len(entry) > inner {
			if len(rows) == 0 && inner > 0 {
				rows = entry[:inner]
				rows[inner-1] = truncate(rows[inner-1], max(innerW-1, 1)) + "…"
			}
			break
		}
		rows = append(entry, rows...)
	}
	title := m.c.Styles.PanelTitle.Render("Log")
	if m.logOff > 0 {
		title += m.c.Styles.Muted.Render(fmt.Sprintf(" (%d newer below)", m.logOff))
	}
	return panel(st, title, strings.Join(rows, "\n"), w, h)
}

func (m *Model) finishedView() string {
	st := m.c.Styles
	status := st.OK.Render("finished")
	switch {
	case m.summary != nil && m.summary.Run.Interrupted:
		status = st.Warn.Render("interrupted (partial results saved)")
	case m.code != 0:
		status = st.Error.Render(fmt.Sprintf("finished with failures (exit %d)", m.code))
	}
	// The outcome first: on a narrow terminal the engine is what is cut.
	head := truncate(status+"  "+st.Title.Render(m.info.Workload)+st.Muted.Render(" on ")+st.Bold.Render(m.info.Engine)+
		st.Muted.Render(" · elapsed ")+fmtDuration(m.snap.Elapsed), m.width)
	if m.err != "" {
		head += "\n" + common.WrapStyled(st.Error, m.err, m.width, 0)
	}
	if story := m.headline(); story != "" {
		// What reuse changed, before anything else: the same words as
		// the text summary's KV cache section and the HTML report.
		head += "\n" + story
	} else if e := record.WorkloadExpectation(m.summary); e != nil {
		// A summary without a headline: the workload's verdict on its
		// expectation; the summary's Expectation section has it whole.
		head += "\n" + common.WrapStyled(lipgloss.NewStyle(),
			common.ExpectationStyle(st, e.Verdict).Render("expectation "+record.VerdictText(e.Verdict))+st.Muted.Render(": "+e.Reason), m.width, 2)
	}
	h := m.height - lipgloss.Height(head)
	if m.logFocus {
		return head + "\n" + m.logView(m.width, h)
	}
	text := m.summaryText
	if text == "" {
		text = "no summary was written"
	}
	// The panel fits the report; the record's path may be cut.
	report, _, _ := strings.Cut(text, "\n\nRecord: ")
	sumW := min(max(lipgloss.Width(report)+st.Panel.GetHorizontalFrameSize(), 40), m.width)
	sum := m.scrolled(text, sumW, h)
	rest := m.width - sumW
	if rest < 40 {
		return head + "\n" + sum
	}
	// Room on the right: the final charts, the cache and the log.
	ch := min(max((h-4)/2, minChartLines), 14)
	fw, fh := st.Panel.GetHorizontalFrameSize(), st.Panel.GetVerticalFrameSize()
	blocks := []string{
		panel(st.Panel, legend(st, "TTFT ms", "p50", "max"),
			drawChart(st, rest-fw, ch-fh, m.charts.ttftP50, m.charts.ttftMax, m.charts.first, m.charts.last, noSecond), rest, ch),
		panel(st.Panel, m.outTitle(rest, true),
			drawChart(st, rest-fw, ch-fh, m.charts.outTPS, nil, m.charts.first, m.charts.last, noSecond), rest, ch),
	}
	logH := max(h-2*ch, 3)
	// The hit ratio per second between the charts and the log, when the
	// series has token counts and the log keeps 3 rows.
	if hh := min(ch, h-2*ch-3); m.charts.hasHits && hh >= minHitLines {
		blocks = append(blocks, panel(st.Panel, m.hitTitle(rest), drawHits(st, rest-fw, hh-fh, m.charts, noSecond), rest, hh))
		logH -= hh
	}
	right := strings.Join(append(blocks, m.logView(rest, logH)), "\n")
	return head + "\n" + beside(sum, right)
}

// headline is the summary's headline wrapped to the width: the verdict
// in its colour, hit ratio, cold vs reused TTFT and the speedup, then
// what limited the run; "" for a summary without one. It takes at most
// half the screen.
func (m *Model) headline() string {
	if m.summary == nil || m.summary.Headline == nil {
		return ""
	}
	st := m.c.Styles
	h := m.summary.Headline
	line := report.HeadlineLine(h)
	verdict := report.VerdictWords(h.Verdict)
	vs := st.Bold
	if h.Verdict != nil {
		vs = common.ExpectationStyle(st, *h.Verdict).Bold(true)
	}
	text := vs.Render(verdict) + st.Bold.Render(strings.TrimPrefix(line, verdict))
	lines := common.Wrap(text, m.width)
	for _, why := range h.LimitedBy {
		lines = append(lines, strings.Split(common.WrapStyled(st.Warn, "! limited by: "+why, m.width, 2), "\n")...)
	}
	if room := max(m.height/2, 1); len(lines) > room {
		lines = lines[:room]
		lines[room-1] = truncate(lines[room-1], max(m.width-1, 1)) + "…"
	}
	return strings.Join(lines, "\n")
}

// scrolled frames the part of text that fits, from the summary offset.
func (m *Model) scrolled(text string, w, h int) string {
	st := m.c.Styles.Panel
	inner := max(h-st.GetVerticalFrameSize(), 1)
	lines := strings.Split(text, "\n")
	m.sumOff = min(m.sumOff, max(len(lines)-inner, 0))
	end := min(m.sumOff+inner, len(lines))
	title := m.c.Styles.PanelTitle.Render("Summary")
	if len(lines) > inner {
		title += m.c.Styles.Muted.Render(fmt.Sprintf(" %d-%d of %d", m.sumOff+1, end, len(lines)))
	}
	return panel(st, title, strings.Join(lines[m.sumOff:end], "\n"), w, h)
}

func truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	return ansi.Truncate(s, w, "…")
}

// timingStyle is the timing error's: the warning's while the client is
// overloaded (the figure is by how much latencies may be inflated).
func timingStyle(st *theme.Styles, s bench.Snapshot) lipgloss.Style {
	if s.Warning != "" {
		return st.Warn
	}
	return lipgloss.NewStyle()
}

// timingText is the timing error p99, "n/a" before a figure.
func timingText(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.2f ms", *p)
}

func fmtMs(v float64, ok bool) string {
	if !ok {
		return "n/a"
	}
	return fmt.Sprintf("%.1f ms", v)
}

func fmtDuration(d time.Duration) string {
	d = d.Round(time.Second)
	h := int(d / time.Hour)
	mnt := int(d/time.Minute) % 60
	sec := int(d/time.Second) % 60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, mnt, sec)
	}
	return fmt.Sprintf("%02d:%02d", mnt, sec)
}

// Feed applies events and a snapshot at once, as the event stream and the
// poll would: it lets tests and replays put the screen in a known state
// without a program.
func (m *Model) Feed(snap bench.Snapshot, events ...bench.Event) {
	m.dirty = true
	for _, e := range events {
		m.onEvent(e)
	}
	m.setSnapshot(snap)
}

// End shows the run as ended with f, as the end of the event stream
// would (tests and replays).
func (m *Model) End(f bench.Finish) tea.Cmd {
	m.dirty = true
	return m.finish(f)
}

// ID is the run screen's identity: the next run prepared from it ("run
// again") is its own.
func (m *Model) ID() common.ID { return m.id }
