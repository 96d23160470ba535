// Package screentest is what the screen tests share: output pinned so
// views compare as text, a fixed clock, a shared context built from
// them, and key messages by name. Tests only; no screen imports it.
package screentest

import (
	"log/slog"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/theme"
)

// Now is where the clock of the screen tests stands: the start of the
// run they show.
var Now = time.Date(2026, 5, 4, 9, 30, 0, 0, time.UTC)

// PinColors draws without colour, on a dark background, whatever the
// terminal the tests run in.
func PinColors() {
	lipgloss.SetColorProfile(termenv.Ascii)
	lipgloss.SetHasDarkBackground(true)
}

// Common is a w x h shared context with the default styles, a clock
// stopped at now and a logger that discards; the caller sets the
// directories it needs.
func Common(w, h int, now time.Time) *common.Common {
	return &common.Common{Width: w, Height: h, Styles: theme.New(theme.Default),
		KeyMap: common.DefaultKeyMap(),
		Now:    func() time.Time { return now }, Logger: slog.New(slog.DiscardHandler)}
}

// Key is the message of the key named k: "enter", "esc", "tab", "space",
// "up", "down", "pgdown", "ctrl+c", "ctrl+u"; any other k is typed as
// runes.
func Key(k string) tea.KeyMsg {
	switch k {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "space":
		return tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "pgdown":
		return tea.KeyMsg{Type: tea.KeyPgDown}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	case "ctrl+u":
		return tea.KeyMsg{Type: tea.KeyCtrlU}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}
