package common

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
)

// ScrollKeys move a viewport by a line, by a page or to either end.
type ScrollKeys struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
}

// Scroll returns the key map's moves with the help words of the two ends,
// which differ by screen ("top" of a text, "first" row).
func (k *KeyMap) Scroll(top, bottom string) ScrollKeys {
	return ScrollKeys{
		Up: k.Up, Down: k.Down, PageUp: k.PageUp, PageDown: k.PageDown,
		Top:    Named(k.Top, "g", top),
		Bottom: Named(k.Bottom, "G", bottom),
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
