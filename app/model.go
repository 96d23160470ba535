package app

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/internal/textclean"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/run"
	sweepscreen "github.com/kvbench/kvbench/screens/sweep"
)

// keyInterceptor is implemented by screens that handle a global key
// themselves: the run screen turns q and ctrl+c into "stop the run?".
type keyInterceptor interface {
	InterceptsKey(tea.KeyMsg) bool
}

// overlay is implemented by dialogs drawn over the screen beneath them.
type overlay interface {
	Overlay() bool
}

// globalKeys are the keys the root handles for every screen, from the
// shared key map.
type globalKeys struct {
	Quit, Back, Help key.Binding
}

func newGlobalKeys(km *common.KeyMap) globalKeys {
	return globalKeys{Quit: km.Quit, Back: km.BackQuit, Help: km.Help}
}

// model is the root: a stack of screens, the chrome around the top one
// (header, status line, help), global keys and the window size.
type model struct {
	common *common.Common
	stack  []common.Screen
	keys   globalKeys
	help   help.Model

	fullHelp  bool
	status    string
	statusErr bool
	width     int
	height    int

	// code is the exit code when the user leaves: the last finished run's,
	// else noRunCode (q) or 130 (ctrl+c).
	code      int
	noRunCode int
	ranOnce   bool
	quitting  bool
	sessions  []*run.Session
	sweeps    []*sweepscreen.Session
	// last is the last run that finished: its summary and record path
	// are printed once the full screen is gone.
	last *run.FinishedMsg
}

// newModel builds the root over a first screen; tests drive it with
// teatest at a fixed size.
func newModel(c *common.Common, first common.Screen) *model {
	h := help.New()
	h.Styles.ShortKey = c.Styles.Key
	h.Styles.ShortDesc = c.Styles.Help
	h.Styles.ShortSeparator = c.Styles.Help
	h.Styles.FullKey = c.Styles.Key
	h.Styles.FullDesc = c.Styles.Help
	h.Styles.FullSeparator = c.Styles.Help
	h.Styles.Ellipsis = c.Styles.Help
	if c.Preparations == nil {
		c.Preparations = &common.Preparations{}
	}
	return &model{
		common: c,
		stack:  []common.Screen{first},
		keys:   newGlobalKeys(c.KeyMap),
		help:   h,
	}
}

func (m *model) top() common.Screen { return m.stack[len(m.stack)-1] }

// leave gives up what a screen leaving the stack asked for: a run being
// prepared for it is cancelled.
func (m *model) leave(s common.Screen) {
	if o, ok := s.(common.Owner); ok {
		m.common.Preparations.Cancel(o.ID())
	}
}

// owned reports whether a screen on the stack is id.
func (m *model) owned(id common.ID) bool {
	for _, s := range m.stack {
		if o, ok := s.(common.Owner); ok && o.ID() == id {
			return true
		}
	}
	return false
}

// prepared takes a prepared run whose screen is gone: it will never run,
// so its engine stops and its empty folder goes.
func (m *model) prepared(msg run.PreparedMsg) {
	m.common.Preparations.Done(msg.To)
	if m.owned(msg.To) || msg.Runner == nil {
		return
	}
	if err := msg.Runner.Discard(); err != nil {
		m.common.Logger.Warn("discard a prepared run", "err", err)
	}
}

func (m *model) Init() tea.Cmd { return m.top().Init() }

// keyMap merges the top screen's keys with the global ones, so help is
// always right for what is on screen.
type keyMap struct {
	screen help.KeyMap
	global []key.Binding
}

func (k keyMap) ShortHelp() []key.Binding {
	return append(append([]key.Binding{}, k.screen.ShortHelp()...), k.global...)
}

func (k keyMap) FullHelp() [][]key.Binding {
	return append(append([][]key.Binding{}, k.screen.FullHelp()...), k.global)
}

func (m *model) keyMap() keyMap {
	top := m.top()
	if top.Typing() {
		return keyMap{screen: top, global: []key.Binding{m.keys.Quit}}
	}
	g := []key.Binding{m.keys.Help}
	// A screen that takes q or ctrl+c itself shows its own help for them.
	if !m.intercepts(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'q'}}) {
		g = append(g, m.keys.Back)
	}
	if !m.intercepts(tea.KeyMsg{Type: tea.KeyCtrlC}) {
		g = append(g, m.keys.Quit)
	}
	return keyMap{screen: top, global: g}
}

func (m *model) intercepts(k tea.KeyMsg) bool {
	ic, ok := m.top().(keyInterceptor)
	return ok && ic.InterceptsKey(k)
}

// Update handles msg, then gives the screens the room a status line of
// another height leaves them.
func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	before := m.statusHeight()
	next, cmd := m.update(msg)
	if m.statusHeight() != before && m.width > 0 {
		m.resize()
	}
	return next, cmd
}

func (m *model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	// Message types only: a key's text or a result's content may be
	// anything the user typed.
	m.common.Logger.Debug("message", "type", fmt.Sprintf("%T", msg))
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.Width = msg.Width
		m.resize()
		// Screens size themselves in SetSize; the embedded components
		// that expect a size message (huh redraws its groups on one) get
		// the content area's.
		w, h := m.contentSize()
		return m, m.broadcast(tea.WindowSizeMsg{Width: w, Height: h})

	case tea.KeyMsg:
		return m.handleKeys(msg)

	case common.Intent:
		m.common.Logger.Info("intent", "type", fmt.Sprintf("%T", msg))
		s, replace := route(m.common, msg)
		if replace {
			return m.replace(s)
		}
		return m.push(s)

	case common.PushMsg:
		return m.push(msg.Screen)

	case common.PopMsg:
		return m.pop()

	case common.StatusMsg:
		// Every screen's status lands here, errors quoting paths and
		// engine answers included: cleaned once, for the one line.
		m.status, m.statusErr = textclean.Line(msg.Text), msg.Err
		return m, nil

	case common.QuitMsg:
		m.code = msg.Code
		m.quitting = true
		m.common.Preparations.CancelAll()
		return m, tea.Quit

	case run.PreparedMsg:
		m.prepared(msg)

	case run.StartedMsg:
		m.sessions = append(m.sessions, msg.Session)
		m.common.Logger.Info("run screen started its run", "run", msg.Session.Info().ID)

	case run.FinishedMsg:
		m.code, m.ranOnce = msg.Code, true
		m.last = &msg
		m.common.Logger.Info("run screen saw its run end", "run", msg.Session.Info().ID, "code", msg.Code)
		return m, tea.Batch(m.broadcast(msg), common.Changed(common.RunsChanged{}))

	case sweepscreen.StartedMsg:
		m.addSweep(msg.Session)
		m.common.Logger.Info("sweep screen started its sweep")

	case sweepscreen.DoneMsg:
		m.code, m.ranOnce = msg.Code, true
		return m, tea.Batch(m.broadcast(msg), common.Changed(common.RunsChanged{}))
	}
	return m, m.broadcast(msg)
}

// addSweep keeps a sweep to stop and wait for before exiting (once).
func (m *model) addSweep(s *sweepscreen.Session) {
	for _, k := range m.sweeps {
		if k == s {
			return
		}
	}
	m.sweeps = append(m.sweeps, s)
}

// broadcast hands a message that is not a key to every screen on the
// stack: results reach their owner even when a dialog covers it (each
// screen ignores what is not addressed to it).
func (m *model) broadcast(msg tea.Msg) tea.Cmd {
	cmds := make([]tea.Cmd, 0, len(m.stack))
	for i, s := range m.stack {
		next, cmd := s.Update(msg)
		if sc, ok := next.(common.Screen); ok {
			m.stack[i] = sc
		}
		cmds = append(cmds, cmd)
	}
	return tea.Batch(cmds...)
}

func (m *model) handleKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	top := m.top()
	if m.intercepts(msg) {
		return m.updateTop(msg)
	}
	switch {
	case key.Matches(msg, m.keys.Quit):
		m.quitting = true
		m.common.Preparations.CancelAll()
		if !m.ranOnce {
			m.code = 130
		}
		return m, tea.Quit
	case top.Typing():
		return m.updateTop(msg)
	case key.Matches(msg, m.keys.Help):
		m.fullHelp = !m.fullHelp
		m.resize()
		return m, nil
	case key.Matches(msg, m.keys.Back):
		return m.pop()
	}
	return m.updateTop(msg)
}

func (m *model) updateTop(msg tea.Msg) (tea.Model, tea.Cmd) {
	i := len(m.stack) - 1
	next, cmd := m.stack[i].Update(msg)
	if sc, ok := next.(common.Screen); ok {
		m.stack[i] = sc
	}
	return m, cmd
}

func (m *model) push(s common.Screen) (tea.Model, tea.Cmd) {
	if s == nil {
		return m, nil
	}
	m.stack = append(m.stack, s)
	m.logScreen("push", s)
	m.sizeScreen(s)
	return m, s.Init()
}

// logScreen writes a change of the visible screen to the debug log.
func (m *model) logScreen(action string, s common.Screen) {
	m.common.Logger.Info("screen", "action", action, "title", s.Title(), "type", fmt.Sprintf("%T", s), "depth", len(m.stack))
}

// replace swaps the top screen for s (a prepared run's live screen takes
// the form's place).
func (m *model) replace(s common.Screen) (tea.Model, tea.Cmd) {
	if s == nil {
		return m, nil
	}
	m.leave(m.top())
	m.stack[len(m.stack)-1] = s
	m.logScreen("replace", s)
	m.status, m.statusErr = "", false
	m.sizeScreen(s)
	return m, s.Init()
}

func (m *model) pop() (tea.Model, tea.Cmd) {
	if len(m.stack) <= 1 {
		m.quitting = true
		m.common.Preparations.CancelAll()
		if !m.ranOnce {
			m.code = m.noRunCode
		}
		return m, tea.Quit
	}
	m.leave(m.top())
	m.stack = m.stack[:len(m.stack)-1]
	m.logScreen("pop", m.top())
	m.status, m.statusErr = "", false
	// The screen beneath may have been sized while covered; the help
	// line's height can differ for it.
	m.resize()
	return m, nil
}

// chrome renders the lines around the content: header, status, help.
func (m *model) header() string {
	s := m.common.Styles
	title := s.Title.Render("kvbench")
	if t := m.top().Title(); t != "" {
		title += s.Muted.Render(" › ") + s.Header.Render(t)
	}
	return ansi.Truncate(" "+title, max(m.width, 0), "…")
}

// statusLine is the status message wrapped to the terminal's width: a
// message is read whole (an error names the flag or the URL at its
// end), on at most a quarter of the screen.
func (m *model) statusLine() string {
	s := m.common.Styles
	if m.status == "" || m.width < 2 {
		return ""
	}
	st := s.StatusBar
	if m.statusErr {
		st = s.StatusError
	}
	lines := common.Wrap(m.status, m.width-1)
	if room := max(m.height/4, 1); len(lines) > room {
		lines = lines[:room]
		lines[room-1] = ansi.Truncate(lines[room-1], m.width-2, "") + "…"
	}
	for i, l := range lines {
		lines[i] = " " + st.Render(l)
	}
	return strings.Join(lines, "\n")
}

// statusHeight is how many lines the status line takes (one, empty).
func (m *model) statusHeight() int { return max(lipgloss.Height(m.statusLine()), 1) }

func (m *model) helpView() string {
	km := m.keyMap()
	var out string
	if m.fullHelp {
		out = lipgloss.NewStyle().PaddingLeft(1).Render(m.help.FullHelpView(km.FullHelp()))
	} else {
		out = " " + m.help.ShortHelpView(km.ShortHelp())
	}
	// The help never draws past the terminal's edge, whatever it holds.
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if ansi.StringWidth(l) > m.width {
			lines[i] = ansi.Truncate(l, max(m.width, 0), "…")
		}
	}
	return strings.Join(lines, "\n")
}

// contentSize is the area left for a screen once the chrome is drawn.
func (m *model) contentSize() (int, int) {
	return m.sizeWith(m.header(), m.helpView())
}

func (m *model) sizeWith(header, help string) (int, int) {
	chrome := lipgloss.Height(header) + m.statusHeight() + lipgloss.Height(help)
	return m.width, max(m.height-chrome, 0)
}

func (m *model) resize() {
	w, h := m.contentSize()
	m.common.Width, m.common.Height = w, h
	for _, s := range m.stack {
		s.SetSize(w, h)
	}
}

func (m *model) sizeScreen(s common.Screen) {
	if m.width == 0 && m.height == 0 {
		return
	}
	m.resize()
}

func (m *model) View() string {
	if m.quitting {
		return ""
	}
	return m.render()
}

// render draws the top screen with the chrome, exactly the terminal's
// size.
func (m *model) render() string {
	header, help := m.header(), m.helpView()
	w, h := m.sizeWith(header, help)
	body := m.top().View()
	if o, ok := m.top().(overlay); ok && o.Overlay() && len(m.stack) > 1 {
		body = place(m.stack[len(m.stack)-2].View(), body, w, h)
	}
	return strings.Join([]string{header, fit(body, w, h), m.statusLine(), help}, "\n")
}

// fit cuts or pads a view to exactly h lines of at most w cells (cheaper
// than a lipgloss box: this runs for every frame).
func fit(body string, w, h int) string {
	lines := strings.Split(body, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			lines[i] = ansi.Truncate(l, w, "")
		}
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

// place draws fg centred over bg (both w x h at most).
func place(bg, fg string, w, h int) string {
	bgLines := strings.Split(bg, "\n")
	for len(bgLines) < h {
		bgLines = append(bgLines, "")
	}
	fgLines := strings.Split(fg, "\n")
	fw := lipgloss.Width(fg)
	x := max((w-fw)/2, 0)
	y := max((h-len(fgLines))/2, 0)
	for i, line := range fgLines {
		r := y + i
		if r >= len(bgLines) {
			break
		}
		under := bgLines[r]
		left := ansi.Truncate(under, x, "")
		if pad := x - ansi.StringWidth(left); pad > 0 {
			left += strings.Repeat(" ", pad)
		}
		right := ansi.TruncateLeft(under, x+ansi.StringWidth(line), "")
		bgLines[r] = left + line + right
	}
	return strings.Join(bgLines, "\n")
}
