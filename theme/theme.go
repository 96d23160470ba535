// Package theme is kvbench's one semantic palette and the styles derived
// from it. Screens use Styles, never raw colours, so the cache states look
// the same everywhere and NO_COLOR is honoured in one place.
package theme

import (
	"os"

	"github.com/charmbracelet/lipgloss"
)

// Palette is the semantic colour set.
type Palette struct {
	Accent, Muted, Text, Subtle lipgloss.AdaptiveColor
	OK, Warn, Error             lipgloss.AdaptiveColor
	Cold, Reused, Unverified    lipgloss.AdaptiveColor
}

// Default is the palette, with ANSI indexes so it follows the terminal's
// own colours (light values first).
var Default = Palette{
	Accent:     lipgloss.AdaptiveColor{Light: "5", Dark: "13"},
	Muted:      lipgloss.AdaptiveColor{Light: "8", Dark: "8"},
	Text:       lipgloss.AdaptiveColor{Light: "0", Dark: "15"},
	Subtle:     lipgloss.AdaptiveColor{Light: "7", Dark: "0"},
	OK:         lipgloss.AdaptiveColor{Light: "2", Dark: "10"},
	Warn:       lipgloss.AdaptiveColor{Light: "3", Dark: "11"},
	Error:      lipgloss.AdaptiveColor{Light: "1", Dark: "9"},
	Cold:       lipgloss.AdaptiveColor{Light: "4", Dark: "12"},
	Reused:     lipgloss.AdaptiveColor{Light: "2", Dark: "10"},
	Unverified: lipgloss.AdaptiveColor{Light: "3", Dark: "11"},
}

// Styles are every style a screen may use.
type Styles struct {
	Palette Palette

	App, Title, Header, Muted, Bold, Selected, Border lipgloss.Style
	OK, Warn, Error                                   lipgloss.Style
	Cold, Reused, Unverified                          lipgloss.Style
	StatusBar, StatusError, Help                      lipgloss.Style

	// Panels of the run screen; the focused one has the accent border.
	Panel, PanelFocused, PanelTitle lipgloss.Style
	// Dialog frames a confirmation on top of a screen.
	Dialog lipgloss.Style
	// Key renders a key name in inline hints ("enter start").
	Key lipgloss.Style
	// Chart styles: axes and labels, then the two series a chart shows
	// (TTFT p50 and max; output and input tok/s).
	ChartAxis, ChartLabel, SeriesA, SeriesB lipgloss.Style
}

// New derives the styles from a palette.
func New(p Palette) *Styles {
	fg := func(c lipgloss.AdaptiveColor) lipgloss.Style { return lipgloss.NewStyle().Foreground(c) }
	return &Styles{
		Palette:     p,
		App:         lipgloss.NewStyle(),
		Title:       lipgloss.NewStyle().Bold(true).Foreground(p.Accent),
		Header:      lipgloss.NewStyle().Bold(true),
		Muted:       fg(p.Muted),
		Bold:        lipgloss.NewStyle().Bold(true),
		Selected:    lipgloss.NewStyle().Bold(true).Foreground(p.Accent),
		Border:      lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(p.Muted),
		OK:          fg(p.OK),
		Warn:        fg(p.Warn),
		Error:       fg(p.Error).Bold(true),
		Cold:        fg(p.Cold),
		Reused:      fg(p.Reused),
		Unverified:  fg(p.Unverified),
		StatusBar:   fg(p.Muted),
		StatusError: fg(p.Error),
		Help:        fg(p.Muted),

		Panel:        lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(p.Muted).Padding(0, 1),
		PanelFocused: lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(p.Accent).Padding(0, 1),
		PanelTitle:   lipgloss.NewStyle().Bold(true).Foreground(p.Accent),
		Dialog:       lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(p.Warn).Padding(1, 2),
		Key:          lipgloss.NewStyle().Bold(true),
		ChartAxis:    fg(p.Muted),
		ChartLabel:   fg(p.Muted),
		SeriesA:      fg(p.Accent),
		SeriesB:      fg(p.Cold),
	}
}

// State returns the style of a cache state ("cold", "reused",
// "unverified").
func (s *Styles) State(state string) lipgloss.Style {
	switch state {
	case "cold":
		return s.Cold
	case "reused":
		return s.Reused
	case "unverified":
		return s.Unverified
	}
	return s.Muted
}

// NoColor reports whether colour is switched off (NO_COLOR set).
func NoColor() bool {
	_, ok := os.LookupEnv("NO_COLOR")
	return ok
}
