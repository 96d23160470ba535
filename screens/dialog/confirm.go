// Package dialog holds the dialogs a screen pushes over itself: a yes/no
// confirmation, drawn over the screen beneath it.
package dialog

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/kvbench/kvbench/screens/common"
)

// Confirm is a yes/no question drawn over the screen beneath it. It pops
// itself and then runs the command of the answer.
type Confirm struct {
	c           *common.Common
	title, text string
	yes, now    tea.Cmd
	keys        confirmKeys
	// The text is the screen's width less margin, at most widest cells.
	margin, widest int
	// answered is set by the first answer: a key that arrives before
	// the dialog's Pop took effect (y pressed twice) does nothing, so it
	// never answers twice or pops the screen beneath.
	answered bool
}

type confirmKeys struct {
	Yes, No, Now key.Binding
}

// Option changes a Confirm from its defaults.
type Option func(*Confirm)

// Keys replaces the yes and the no keys (by default y/enter and
// n/esc/q).
func Keys(yes, no key.Binding) Option {
	return func(d *Confirm) { d.keys.Yes, d.keys.No = yes, no }
}

// CtrlC makes ctrl+c in the dialog an answer of its own: it pops the
// dialog and runs cmd (the run screen's "stop at once"). Without it
// ctrl+c is left to the root.
func CtrlC(help string, cmd tea.Cmd) Option {
	return func(d *Confirm) {
		d.now = cmd
		d.keys.Now.SetHelp("ctrl+c", help)
		d.keys.Now.SetEnabled(cmd != nil)
	}
}

// Width bounds the text: the screen's width less margin, at most widest
// cells (by default 8 and 60).
func Width(margin, widest int) Option {
	return func(d *Confirm) { d.margin, d.widest = margin, widest }
}

// NewConfirm asks a question; yes runs after the dialog is gone, and a
// no only closes it.
func NewConfirm(c *common.Common, title, text string, yes tea.Cmd, opts ...Option) *Confirm {
	d := &Confirm{c: c, title: title, text: text, yes: yes, margin: 8, widest: 60,
		keys: confirmKeys{
			Yes: key.NewBinding(key.WithKeys("y", "enter"), key.WithHelp("y/enter", "yes")),
			No:  key.NewBinding(key.WithKeys("n", "esc", "q"), key.WithHelp("n/esc", "no")),
			Now: key.NewBinding(key.WithKeys("ctrl+c"), key.WithDisabled()),
		}}
	for _, o := range opts {
		o(d)
	}
	return d
}

func (d *Confirm) Init() tea.Cmd { return nil }

func (d *Confirm) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	km, ok := msg.(tea.KeyMsg)
	if !ok || d.answered {
		return d, nil
	}
	switch {
	case key.Matches(km, d.keys.Now):
		d.answered = true
		return d, tea.Sequence(common.Pop, d.now)
	case key.Matches(km, d.keys.Yes):
		d.answered = true
		return d, tea.Sequence(common.Pop, d.yes)
	case key.Matches(km, d.keys.No):
		d.answered = true
		return d, common.Pop
	}
	return d, nil
}

func (d *Confirm) View() string {
	s := d.c.Styles
	w := min(max(d.c.Width-d.margin, 20), d.widest)
	body := lipgloss.JoinVertical(lipgloss.Left,
		s.Title.Render(d.title),
		"",
		lipgloss.NewStyle().Width(w).Render(d.text),
		"",
		s.Key.Render("y")+s.Muted.Render(" yes   ")+s.Key.Render("n")+s.Muted.Render(" no"),
	)
	return s.Dialog.Render(body)
}

// InterceptsKey keeps q and, when it is the dialog's own, ctrl+c in the
// dialog: q answers no.
func (d *Confirm) InterceptsKey(k tea.KeyMsg) bool {
	return key.Matches(k, d.keys.No) || key.Matches(k, d.keys.Now)
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
