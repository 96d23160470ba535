// Package common is the contract every screen follows and the context
// shared by all of them: size, styles, keys, clock, logger and where runs
// and profiles live. Screens talk to the root through the messages below.
// The few things several screens draw alike (a run's status and facts)
// are here too, so they read the same everywhere.
package common

import (
	"log/slog"
	"time"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/kvbench/kvbench/internal/textclean"
	"github.com/kvbench/kvbench/theme"
)

// Common is handed to every screen.
type Common struct {
	Width, Height int // the area a screen may draw in (chrome subtracted)
	Styles        *theme.Styles
	KeyMap        *KeyMap // the keys every screen shares
	Now           func() time.Time
	Logger        *slog.Logger
	RunsDir       string // the runs directory (results, recent runs)
	ConfigDir     string // profiles live in ConfigDir/profiles
	// Preparations are the runs being prepared for a screen; the root
	// sets it (nil: preparations are not tracked).
	Preparations *Preparations
}

// Screen is one full-screen view.
type Screen interface {
	tea.Model
	help.KeyMap
	// SetSize is called by the root on every resize, for every screen on
	// the stack, with the chrome already subtracted.
	SetSize(width, height int)
	// Title names the screen in the header.
	Title() string
	// Typing reports whether a text input has focus, so the root never
	// steals a letter key (q, ?, r) from it.
	Typing() bool
}

// PushMsg puts a screen (or a dialog) on top of the stack.
type PushMsg struct{ Screen Screen }

// PopMsg removes the top screen; popping the last one quits.
type PopMsg struct{}

// StatusMsg sets the status line.
type StatusMsg struct {
	Text string
	Err  bool
}

// QuitMsg ends the program with an exit code.
type QuitMsg struct{ Code int }

// Push, Pop and Status are commands that send the messages above.
func Push(s Screen) tea.Cmd      { return func() tea.Msg { return PushMsg{Screen: s} } }
func Pop() tea.Msg               { return PopMsg{} }
func Status(text string) tea.Cmd { return func() tea.Msg { return StatusMsg{Text: text} } }
func Failure(err error) tea.Cmd {
	return func() tea.Msg { return StatusMsg{Text: ErrorText(err), Err: true} }
}
func Quit(code int) tea.Cmd { return func() tea.Msg { return QuitMsg{Code: code} } }

// ErrorText is an error as a screen shows it: an error quotes paths,
// folder names and engine answers from many layers, so its text is
// cleaned (textclean.Line) where it is drawn.
func ErrorText(err error) string { return textclean.Line(err.Error()) }
