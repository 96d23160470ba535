package common

import tea "github.com/charmbracelet/bubbletea"

// Lists of saved things (the home screen's profiles and recent runs) are
// refreshed by these messages, which every screen on the stack receives.
// They live here so that a screen that lists never imports the screen
// that changed the list.

// ProfilesChanged says a profile was saved.
type ProfilesChanged struct{}

// RunsChanged says the runs directory gained a run (a run or a sweep
// ended); the application sends it when it sees the end.
type RunsChanged struct{}

// Changed returns the command that sends msg (ProfilesChanged or
// RunsChanged) to every screen.
func Changed(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }
