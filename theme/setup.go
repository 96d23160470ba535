package theme

import (
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Setup decides the colour profile and the background once, before a
// program starts (querying the terminal later would race with bubbletea
// reading its input), and returns the styles. NO_COLOR selects the
// colourless profile, so no ANSI colour escapes are written at all.
func Setup() *Styles {
	if NoColor() {
		lipgloss.SetColorProfile(termenv.Ascii)
	}
	lipgloss.SetHasDarkBackground(lipgloss.HasDarkBackground())
	return New(Default)
}
