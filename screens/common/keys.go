package common

import "github.com/charmbracelet/bubbles/key"

// KeyMap is every key the screens share, defined once (soft-serve's
// common.KeyMap): the root's global keys, moving in a list or a text,
// confirming and going back. Screens compose their key sets from it,
// renaming the help where their words differ (Named), and add only the
// keys that are theirs (start a run, mark for compare...). The same key
// therefore does the same thing on every screen.
type KeyMap struct {
	// Global, handled by the root: quit the application, go back (quit
	// on the last screen), toggle the full help.
	Quit, BackQuit, Help key.Binding

	// Moving a cursor or a text by a line, a page, to either end.
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	// Moving between sections or views.
	Next, Prev key.Binding

	// Select takes the item under the cursor; Back leaves a screen or a
	// sub-view without the letter q (which text inputs need).
	Select, Back key.Binding
	// Delete removes the item under the cursor (or the marked items),
	// after a confirmation.
	Delete key.Binding

	// Lists of past runs (the explorer, k9s and lazygit habits): Mark
	// toggles a mark on the row (space; m where space pages), Copy copies
	// something of the row to the terminal's clipboard (y, "yank"),
	// Rename gives it a display name, Annotate a note, Reload reads the
	// list again (ctrl+r, as on home).
	Mark, Copy, Rename, Annotate, Reload key.Binding
}

// DefaultKeyMap is the application's key map. Page down includes space,
// as in less and the bubbles viewport; a screen that gives space another
// meaning (the explorer marks runs with it) checks its own key first.
func DefaultKeyMap() *KeyMap {
	return &KeyMap{
		Quit:     key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
		BackQuit: key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "back/quit")),
		Help:     key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),

		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d", " "), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g", "top")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G", "bottom")),
		Next:     key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next")),
		Prev:     key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous")),

		Select: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Back:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Delete: key.NewBinding(key.WithKeys("d", "delete"), key.WithHelp("d", "delete")),

		Mark:     key.NewBinding(key.WithKeys(" ", "m"), key.WithHelp("space/m", "mark")),
		Copy:     key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy…")),
		Rename:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "rename")),
		Annotate: key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "note")),
		Reload:   key.NewBinding(key.WithKeys("ctrl+r", "R"), key.WithHelp("ctrl+r", "reload")),
	}
}

// Named is b with another help text: the same keys, the screen's words.
func Named(b key.Binding, keys, desc string) key.Binding {
	b.SetHelp(keys, desc)
	return b
}

// Also is b answering extra keys too (the help unchanged): the run
// screen's "open" takes o besides enter.
func Also(b key.Binding, extra ...string) key.Binding {
	b.SetKeys(append(append([]string{}, b.Keys()...), extra...)...)
	return b
}
