package common

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
)

// ScrollKeys move a viewport by a line, by a page or to either end. Each
// screen makes its own (the help words differ); Scroll is shared.
type ScrollKeys struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
}

// NewScrollKeys returns the usual bindings (arrows and j/k, pgup/pgdn
// and ctrl+u/ctrl+d/space, home/g and end/G), with the help words of the
// two ends, which differ by screen ("top" of a text, "first" row).
func NewScrollKeys(top, bottom string) ScrollKeys {
	return ScrollKeys{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d", " "), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g", top)),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G", bottom)),
	}
}

// Scroll moves vp as msg asks; other keys leave it where it is.
func (k ScrollKeys) Scroll(vp *viewport.Model, msg tea.KeyMsg) {
	switch {
	case key.Matches(msg, k.Up):
		vp.ScrollUp(1)
	case key.Matches(msg, k.Down):
		vp.ScrollDown(1)
	case key.Matches(msg, k.PageUp):
		vp.PageUp()
	case key.Matches(msg, k.PageDown):
		vp.PageDown()
	case key.Matches(msg, k.Top):
		vp.GotoTop()
	case key.Matches(msg, k.Bottom):
		vp.GotoBottom()
	}
}
