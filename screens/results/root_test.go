package results_test

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/compare"
	"github.com/kvbench/kvbench/screens/results"
	sweepscreen "github.com/kvbench/kvbench/screens/sweep"
)

// testRoot is a minimal stand-in for the application's root: a stack of
// screens, the intents the explorer's flows use routed as app does, q pops (unless a text input has focus or the screen keeps q),
// ctrl+c quits, messages that are not keys reach every screen, and the
// status line is kept for assertions.
type testRoot struct {
	c      *common.Common
	stack  []common.Screen
	status string
}

func newTestRoot(c *common.Common, first common.Screen) *testRoot {
	return &testRoot{c: c, stack: []common.Screen{first}}
}

func (m *testRoot) top() common.Screen { return m.stack[len(m.stack)-1] }

func (m *testRoot) Init() tea.Cmd { return m.top().Init() }

func (m *testRoot) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.c.Width, m.c.Height = msg.Width, msg.Height-1
		for _, s := range m.stack {
			s.SetSize(m.c.Width, m.c.Height)
		}
		return m, nil
	case tea.KeyMsg:
		top := m.top()
		if ic, ok := top.(interface{ InterceptsKey(tea.KeyMsg) bool }); ok && ic.InterceptsKey(msg) {
			return m.updateTop(msg)
		}
		switch {
		case msg.Type == tea.KeyCtrlC:
			return m, tea.Quit
		case top.Typing():
			return m.updateTop(msg)
		case msg.String() == "q":
			return m.pop()
		}
		return m.updateTop(msg)
	case common.PushMsg:
		return m.push(msg.Screen)
	case common.OpenRunDetail:
		return m.push(results.NewDetail(m.c, msg.Dir))
	case common.OpenCompare:
		return m.push(compare.New(m.c, msg.A, msg.B))
	case common.OpenSweep:
		return m.push(sweepscreen.NewReview(m.c, msg.Dir))
	case common.PopMsg:
		return m.pop()
	case common.StatusMsg:
		m.status = msg.Text
		return m, nil
	case common.QuitMsg:
		return m, tea.Quit
	}
	var cmds []tea.Cmd
	for i, s := range m.stack {
		next, cmd := s.Update(msg)
		m.stack[i] = next.(common.Screen)
		cmds = append(cmds, cmd)
	}
	return m, tea.Batch(cmds...)
}

func (m *testRoot) push(s common.Screen) (tea.Model, tea.Cmd) {
	s.SetSize(m.c.Width, m.c.Height)
	m.stack = append(m.stack, s)
	return m, s.Init()
}

func (m *testRoot) updateTop(msg tea.Msg) (tea.Model, tea.Cmd) {
	next, cmd := m.top().Update(msg)
	m.stack[len(m.stack)-1] = next.(common.Screen)
	return m, cmd
}

func (m *testRoot) pop() (tea.Model, tea.Cmd) {
	if len(m.stack) == 1 {
		return m, tea.Quit
	}
	m.stack = m.stack[:len(m.stack)-1]
	return m, nil
}

func (m *testRoot) View() string {
	var b strings.Builder
	b.WriteString(m.top().Title() + " | " + m.status + "\n")
	b.WriteString(m.top().View())
	return b.String()
}
