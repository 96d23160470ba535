package form

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/huh"

	"github.com/kvbench/kvbench/screens/common"
)

// Keys typed faster than the screen is drawn (a paste, a burst over a
// slow SSH link) arrive as messages queued one after another. huh moves
// focus by command: enter on a valid field returns NextField, whose
// message, and the next group's after it, reach the form only after every
// key already queued behind the enter. Handed on at once, those keys land
// in the field that is being left ("builtinmymodel"). So after a key that
// moves focus, the form holds the keys that follow until the focus has
// moved, then hands them on in order, each to the field that has focus
// when it is handled.

// settleWait bounds how long keys are held when a focus move never
// shows (a field huh does not leave): long enough for huh's commands,
// short enough not to be felt.
const settleWait = 2 * time.Second

// keyQueue holds keys while a focus move is on its way.
type keyQueue struct {
	form *huh.Form // the form whose focus is moving; nil when none is
	from huh.Field // its focused field when the move began
	keys []tea.KeyMsg
	seq  int // which move a settleMsg ends
}

func (q *keyQueue) waiting() bool { return q.form != nil }

// settleMsg ends a wait that no focus move ended.
type settleMsg struct {
	to  common.ID
	seq int
}

// activeForm is the huh form on screen, nil on the summary.
func (m *Model) activeForm() *huh.Form {
	switch m.stage {
	case stageForm:
		return m.form
	case stageExport, stageProfile, stageSweep:
		return m.sub
	}
	return nil
}

// movesFocus: the keys huh's fields move on (next, previous, submit).
func movesFocus(k tea.KeyMsg) bool {
	switch k.Type {
	case tea.KeyEnter, tea.KeyTab, tea.KeyShiftTab:
		return true
	}
	return false
}

// handleQueued dispatches msg, holding keys while focus moves.
func (m *Model) handleQueued(msg tea.Msg) tea.Cmd {
	q := &m.keyq
	switch msg := msg.(type) {
	case settleMsg:
		if msg.to != m.id || msg.seq != q.seq || !q.waiting() {
			return nil
		}
		q.form, q.from = nil, nil
		return m.releaseKeys()
	case tea.KeyMsg:
		if q.waiting() {
			q.keys = append(q.keys, msg)
			return nil
		}
	}
	f := m.activeForm()
	var before huh.Field
	if f != nil {
		before = f.GetFocusedField()
	}
	cmd := m.dispatch(msg)
	if k, ok := msg.(tea.KeyMsg); ok && movesFocus(k) && f != nil && f == m.activeForm() &&
		f.State == huh.StateNormal && before != nil && f.GetFocusedField() == before && before.Error() == nil {
		// A valid field asked to be left: wait for the move.
		q.seq++
		q.form, q.from = f, before
		seq, id := q.seq, m.id
		return tea.Batch(cmd, tea.Tick(settleWait, func(time.Time) tea.Msg { return settleMsg{to: id, seq: seq} }))
	}
	if q.waiting() && (q.form != m.activeForm() || q.form.State != huh.StateNormal || q.form.GetFocusedField() != q.from) {
		q.form, q.from = nil, nil
		return tea.Batch(cmd, m.releaseKeys())
	}
	return cmd
}

// releaseKeys hands the held keys on in order until one moves focus
// again (the rest wait for that move).
func (m *Model) releaseKeys() tea.Cmd {
	var cmds []tea.Cmd
	for len(m.keyq.keys) > 0 && !m.keyq.waiting() {
		k := m.keyq.keys[0]
		m.keyq.keys = m.keyq.keys[1:]
		_, cmd := m.Update(k)
		cmds = append(cmds, cmd)
	}
	if len(m.keyq.keys) == 0 {
		m.keyq.keys = nil
	}
	return tea.Batch(cmds...)
}
