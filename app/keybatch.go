package app

import (
	tea "github.com/charmbracelet/bubbletea"
)

// splitKeys turns one key message carrying several runes (letters typed
// faster than the terminal is read: key repeat over a slow link, `jjj`
// pasted) into one message per rune, so every screen sees each keystroke
// as if it had been typed alone. A bracketed paste into a text field
// stays whole: it is text, not commands.
func splitKeys(msg tea.KeyMsg, typing bool) []tea.KeyMsg {
	if msg.Type != tea.KeyRunes || len(msg.Runes) <= 1 || (msg.Paste && typing) {
		return []tea.KeyMsg{msg}
	}
	out := make([]tea.KeyMsg, len(msg.Runes))
	for i, r := range msg.Runes {
		out[i] = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}
	}
	return out
}

// handleKeys hands the keys of one message to the screens one at a time;
// a key that ends the program drops the rest.
//
// A key also clears the status line: what it said ("preparing…", "run
// finished", an error) was about the state before the key, and a line
// that stays after it stopped being true misleads.
func (m *model) handleKeys(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	m.status, m.statusErr = "", false
	keys := splitKeys(msg, m.top().Typing())
	if len(keys) == 1 {
		return m.handleKey(keys[0])
	}
	cmds := make([]tea.Cmd, 0, len(keys))
	for _, k := range keys {
		if m.quitting {
			break
		}
		_, cmd := m.handleKey(k)
		cmds = append(cmds, cmd)
	}
	return m, tea.Sequence(cmds...)
}
