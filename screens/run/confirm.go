package run

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/kvbench/kvbench/screens/common"
)

// Confirm is a yes/no dialog drawn over the screen beneath it. It pops
// itself and then runs the command of the answer.
type Confirm struct {
	c            *common.Common
	title, text  string
	yes, no, now tea.Cmd
	keys         confirmKeys
}

type confirmKeys struct {
	Yes, No, Now key.Binding
}

// NewConfirm asks a question; yes and no run after the dialog is gone.
// now, when not nil, is what a ctrl+c in the dialog does (the run
// screen's "stop at once").
func NewConfirm(c *common.Common, title, text string, yes, no, now tea.Cmd) *Confirm {
	k := confirmKeys{
		Yes: key.NewBinding(key.WithKeys("y", "enter"), key.WithHelp("y/enter", "yes")),
		No:  key.NewBinding(key.WithKeys("n", "esc", "q"), key.WithHelp("n/esc", "no")),
		Now: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "stop now"), key.WithDisabled()),
	}
	if now != nil {
		k.Now.SetEnabled(true)
	}
	return &Confirm{c: c, title: title, text: text, yes: yes, no: no, now: now, keys: k}
}

func (d *Confirm) Init() tea.Cmd { return nil }

func (d *Confirm) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return d, nil
	}
	switch {
	case key.Matches(km, d.keys.Now):
		return d, tea.Sequence(common.Pop, d.now)
	case key.Matches(km, d.keys.Yes):
		return d, tea.Sequence(common.Pop, d.yes)
	case key.Matches(km, d.keys.No):
		return d, tea.Sequence(common.Pop, d.no)
	}
	return d, nil
}

func (d *Confirm) View() string {
	s := d.c.Styles
	w := min(max(d.c.Width-8, 20), 60)
	body := lipgloss.JoinVertical(lipgloss.Left,
		s.Title.Render(d.title),
		"",
		lipgloss.NewStyle().Width(w).Render(d.text),
		"",
		s.Key.Render("y")+s.Muted.Render(" yes   ")+s.Key.Render("n")+s.Muted.Render(" no"),
	)
	return s.Dialog.Render(body)
}

// InterceptsKey keeps q and ctrl+c in the dialog: q answers no, ctrl+c
// is the dialog's own.
func (d *Confirm) InterceptsKey(k tea.KeyMsg) bool {
	return key.Matches(k, d.keys.No) || (d.now != nil && key.Matches(k, d.keys.Now))
}

// Overlay draws the dialog over the screen beneath.
func (d *Confirm) Overlay() bool { return true }

func (d *Confirm) SetSize(int, int) {}
func (d *Confirm) Title() string    { return d.title }
func (d *Confirm) Typing() bool     { return false }

func (d *Confirm) ShortHelp() []key.Binding {
	return []key.Binding{d.keys.Yes, d.keys.No, d.keys.Now}
}

func (d *Confirm) FullHelp() [][]key.Binding { return [][]key.Binding{d.ShortHelp()} }
