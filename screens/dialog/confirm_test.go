package dialog_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/dialog"
	"github.com/kvbench/kvbench/screens/screentest"
	"github.com/kvbench/kvbench/theme"
)

type yesMsg struct{}
type nowMsg struct{}

func yes() tea.Msg { return yesMsg{} }
func now() tea.Msg { return nowMsg{} }

// answer presses k and returns the messages its command leads to, a
// sequence's in order.
func answer(d *dialog.Confirm, k string) []tea.Msg {
	_, cmd := d.Update(screentest.Key(k))
	var out []tea.Msg
	var run func(tea.Cmd)
	run = func(cmd tea.Cmd) {
		if cmd == nil {
			return
		}
		msg := cmd()
		if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice {
			for i := range v.Len() {
				run(v.Index(i).Interface().(tea.Cmd))
			}
			return
		}
		out = append(out, msg)
	}
	run(cmd)
	return out
}

func want(t *testing.T, k string, got []tea.Msg, msgs ...tea.Msg) {
	t.Helper()
	if !reflect.DeepEqual(got, msgs) {
		t.Errorf("%s: got %#v, want %#v", k, got, msgs)
	}
}

func newCommon(w int) *common.Common { return screentest.Common(w, 30, screentest.Now) }

func TestConfirmDefaults(t *testing.T) {
	sure := func() *dialog.Confirm { return dialog.NewConfirm(newCommon(100), "Sure?", "text", yes) }
	for _, k := range []string{"y", "enter"} {
		want(t, k, answer(sure(), k), common.PopMsg{}, yesMsg{})
	}
	for _, k := range []string{"n", "q"} {
		want(t, k, answer(sure(), k), common.PopMsg{})
	}
	want(t, "Y", answer(sure(), "Y"))
	want(t, "ctrl+c", answer(sure(), "ctrl+c"))
	if d := sure(); !d.InterceptsKey(screentest.Key("q")) || d.InterceptsKey(screentest.Key("ctrl+c")) {
		t.Error("the dialog keeps ctrl+c or leaves q to the root")
	}
}

// A dialog answers once: a second key that reaches it before its Pop took
// effect (yy in one read of the terminal) neither answers again nor pops
// the screen beneath.
func TestConfirmAnswersOnce(t *testing.T) {
	d := dialog.NewConfirm(newCommon(100), "Delete?", "text", yes)
	want(t, "y", answer(d, "y"), common.PopMsg{}, yesMsg{})
	for _, k := range []string{"y", "n", "enter", "q"} {
		want(t, "then "+k, answer(d, k))
	}
	d = dialog.NewConfirm(newCommon(100), "Delete?", "text", yes)
	want(t, "n", answer(d, "n"), common.PopMsg{})
	want(t, "then y", answer(d, "y"))
}

func TestConfirmCtrlC(t *testing.T) {
	d := dialog.NewConfirm(newCommon(100), "Stop?", "text", yes, dialog.CtrlC("stop now", now))
	want(t, "ctrl+c", answer(d, "ctrl+c"), common.PopMsg{}, nowMsg{})
	if !d.InterceptsKey(screentest.Key("ctrl+c")) {
		t.Error("ctrl+c is left to the root")
	}
	var helps []string
	for _, b := range d.ShortHelp() {
		if b.Enabled() {
			helps = append(helps, b.Help().Desc)
		}
	}
	if got := strings.Join(helps, ","); got != "yes,no,stop now" {
		t.Errorf("help %q", got)
	}
}

func TestConfirmKeysAndWidth(t *testing.T) {
	text := strings.Repeat("word ", 40)
	del := func() *dialog.Confirm {
		return dialog.NewConfirm(newCommon(200), "Delete?", text, yes,
			dialog.Keys(
				key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "yes")),
				key.NewBinding(key.WithKeys("n", "N", "esc", "q"), key.WithHelp("n/esc", "no"))),
			dialog.Width(10, 64))
	}
	d := del()
	want(t, "Y", answer(del(), "Y"), common.PopMsg{}, yesMsg{})
	want(t, "N", answer(del(), "N"), common.PopMsg{})
	want(t, "enter", answer(del(), "enter"))

	// The frame adds a border and two cells of padding on each side.
	frame := theme.New(theme.Default).Dialog.GetHorizontalFrameSize()
	if w := lipgloss.Width(d.View()); w != 64+frame {
		t.Errorf("width %d, want %d", w, 64+frame)
	}
	if w := lipgloss.Width(dialog.NewConfirm(newCommon(200), "Delete?", text, yes).View()); w != 60+frame {
		t.Errorf("default width %d, want %d", w, 60+frame)
	}
	if w := lipgloss.Width(dialog.NewConfirm(newCommon(50), "Delete?", text, yes).View()); w != 42+frame {
		t.Errorf("width on a 50-cell screen %d, want %d", w, 42+frame)
	}
}
