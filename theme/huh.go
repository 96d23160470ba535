package theme

import (
	"github.com/charmbracelet/huh"
	"github.com/charmbracelet/lipgloss"
)

// Huh returns the form theme derived from the palette, so the config form
// looks like the rest of the application.
func (s *Styles) Huh() *huh.Theme {
	p := s.Palette
	t := huh.ThemeBase()
	fg := func(c lipgloss.AdaptiveColor) lipgloss.Style { return lipgloss.NewStyle().Foreground(c) }

	t.Focused.Base = t.Focused.Base.BorderForeground(p.Accent)
	t.Focused.Card = t.Focused.Base
	t.Focused.Title = fg(p.Accent).Bold(true)
	t.Focused.NoteTitle = fg(p.Accent).Bold(true).MarginBottom(1)
	t.Focused.Description = fg(p.Muted)
	t.Focused.ErrorIndicator = t.Focused.ErrorIndicator.Foreground(p.Error)
	t.Focused.ErrorMessage = t.Focused.ErrorMessage.Foreground(p.Error)
	t.Focused.SelectSelector = t.Focused.SelectSelector.Foreground(p.Accent)
	t.Focused.NextIndicator = t.Focused.NextIndicator.Foreground(p.Accent)
	t.Focused.PrevIndicator = t.Focused.PrevIndicator.Foreground(p.Accent)
	t.Focused.Option = fg(p.Text)
	t.Focused.MultiSelectSelector = t.Focused.MultiSelectSelector.Foreground(p.Accent)
	t.Focused.SelectedOption = fg(p.OK)
	t.Focused.SelectedPrefix = fg(p.OK).SetString("[x] ")
	t.Focused.UnselectedPrefix = fg(p.Muted).SetString("[ ] ")
	t.Focused.UnselectedOption = fg(p.Text)
	// The chosen answer of a yes/no is marked with › as well as colour,
	// so it reads the same without colour (NO_COLOR).
	t.Focused.FocusedButton = t.Focused.FocusedButton.Foreground(p.Subtle).Background(p.Accent).Bold(true).SetString("›")
	t.Focused.Next = t.Focused.FocusedButton.UnsetString()
	t.Focused.BlurredButton = t.Focused.BlurredButton.Foreground(p.Text).Background(p.Subtle).SetString(" ")
	t.Focused.TextInput.Cursor = fg(p.Accent)
	t.Focused.TextInput.Placeholder = fg(p.Muted)
	t.Focused.TextInput.Prompt = fg(p.Accent)
	t.Focused.TextInput.Text = fg(p.Text)

	t.Blurred = t.Focused
	t.Blurred.Base = t.Focused.Base.BorderStyle(lipgloss.HiddenBorder())
	t.Blurred.Card = t.Blurred.Base
	t.Blurred.Title = fg(p.Text)
	t.Blurred.NextIndicator = lipgloss.NewStyle()
	t.Blurred.PrevIndicator = lipgloss.NewStyle()

	t.Group.Title = fg(p.Accent).Bold(true)
	t.Group.Description = fg(p.Muted)
	t.Help.ShortKey = fg(p.Muted)
	t.Help.ShortDesc = fg(p.Muted)
	t.Help.ShortSeparator = fg(p.Muted)
	t.Help.FullKey = fg(p.Muted)
	t.Help.FullDesc = fg(p.Muted)
	t.Help.FullSeparator = fg(p.Muted)
	return t
}
