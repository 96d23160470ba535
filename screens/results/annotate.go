package results

import (
	"fmt"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/screens/common"
)

// annotatedMsg reports annotations written (or not) for the run or sweep
// in dir; every screen that shows it takes them, the one that asked (by)
// reports it.
type annotatedMsg struct {
	dir string
	ann runs.Annotations
	by  common.ID
	// field is "name" or "note": what was changed.
	field string
	err   error
}

func annotateCmd(dir string, ann runs.Annotations, field string, by common.ID, now func() time.Time) tea.Cmd {
	return func() tea.Msg {
		stored, err := runs.WriteAnnotations(dir, ann, now())
		return annotatedMsg{dir: dir, ann: stored, by: by, field: field, err: err}
	}
}

// Annotate asks for a run's display name (r) or its note (a), prefilled
// with the current one; enter saves (empty: back to the recorded name, or
// no note), esc keeps what was there.
type Annotate struct {
	c     *common.Common
	dir   string
	by    common.ID
	field string // "name" or "note"
	ann   runs.Annotations
	hint  string
	input textinput.Model
	keys  struct{ Save, Cancel key.Binding }
	// done is set once saved or cancelled: keys that arrive before the
	// Pop takes effect (enter pressed twice) are ignored.
	done bool
}

// NewRename asks for r's display name.
func NewRename(c *common.Common, r *runs.Run, by common.ID) *Annotate {
	a := newAnnotate(c, r, by, "name")
	a.input.CharLimit = runs.MaxNameLen
	a.input.Placeholder = orDash(r.RecordedName)
	if r.Name != r.RecordedName {
		a.input.SetValue(r.Name)
	}
	a.hint = "Shown in the Name column and the run's header. Empty: the recorded name"
	if r.RecordedName != "" {
		a.hint += " (" + r.RecordedName + ")"
	}
	a.hint += "."
	a.input.CursorEnd()
	return a
}

// NewNote asks for r's note.
func NewNote(c *common.Common, r *runs.Run, by common.ID) *Annotate {
	a := newAnnotate(c, r, by, "note")
	a.input.CharLimit = runs.MaxNoteLen
	a.input.Placeholder = "what this run was for, what was odd about it"
	a.input.SetValue(r.Note)
	a.input.CursorEnd()
	a.hint = "Shown in the run's detail and the list's footer; / finds it. Empty removes it."
	return a
}

func newAnnotate(c *common.Common, r *runs.Run, by common.ID, field string) *Annotate {
	ti := textinput.New()
	ti.Prompt = field + ": "
	ti.Cursor.SetMode(cursor.CursorStatic)
	ti.Focus()
	a := &Annotate{c: c, dir: r.Dir, by: by, field: field, input: ti}
	a.ann = runs.Annotations{Note: r.Note}
	if r.Name != r.RecordedName {
		a.ann.Name = r.Name
	}
	a.keys.Save = common.Named(c.KeyMap.Select, "enter", "save")
	a.keys.Cancel = common.Named(c.KeyMap.Back, "esc", "cancel")
	a.SetSize(c.Width, c.Height)
	return a
}

func (a *Annotate) Init() tea.Cmd { return nil }

func (a *Annotate) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	km, ok := msg.(tea.KeyMsg)
	if !ok || a.done {
		return a, nil
	}
	switch {
	case key.Matches(km, a.keys.Save):
		a.done = true
		ann := a.ann
		if a.field == "name" {
			ann.Name = a.input.Value()
		} else {
			ann.Note = a.input.Value()
		}
		return a, tea.Sequence(common.Pop, annotateCmd(a.dir, ann, a.field, a.by, a.c.Now))
	case key.Matches(km, a.keys.Cancel):
		a.done = true
		return a, common.Pop
	}
	var cmd tea.Cmd
	a.input, cmd = a.input.Update(km)
	return a, cmd
}

func (a *Annotate) width() int { return min(max(a.c.Width-10, 20), 90) }

func (a *Annotate) View() string {
	s := a.c.Styles
	w := a.width()
	title := "Rename"
	if a.field == "note" {
		title = "Note"
	}
	body := lipgloss.JoinVertical(lipgloss.Left,
		s.Title.Render(title+" "+shortID(a.dir)),
		"",
		lipgloss.NewStyle().Width(w).Render(s.Muted.Render(a.hint)),
		"",
		a.input.View(),
		"",
		s.Key.Render("enter")+s.Muted.Render(" save   ")+s.Key.Render("esc")+s.Muted.Render(" cancel"),
	)
	return s.Dialog.Render(lipgloss.NewStyle().MaxWidth(w).Render(body))
}

func (a *Annotate) Overlay() bool { return true }

// SetSize fits the input to the dialog.
func (a *Annotate) SetSize(w, h int) {
	a.input.Width = max(a.width()-len(a.input.Prompt)-2, 8)
}

func (a *Annotate) Title() string {
	if a.field == "note" {
		return "Note"
	}
	return "Rename"
}

func (a *Annotate) Typing() bool              { return true }
func (a *Annotate) ShortHelp() []key.Binding  { return []key.Binding{a.keys.Save, a.keys.Cancel} }
func (a *Annotate) FullHelp() [][]key.Binding { return [][]key.Binding{a.ShortHelp()} }

// annotatedStatus is the status line after a rename or a note.
func annotatedStatus(msg annotatedMsg) tea.Cmd {
	if msg.err != nil {
		return common.Failure(msg.err)
	}
	id := shortID(msg.dir)
	switch {
	case msg.field == "name" && msg.ann.Name == "":
		return common.Status(id + " shows its recorded name again")
	case msg.field == "name":
		return common.Status(fmt.Sprintf("%s is now named %q (annotations.json)", id, msg.ann.Name))
	case msg.ann.Note == "":
		return common.Status("note of " + id + " removed")
	}
	return common.Status("note of " + id + " saved (annotations.json)")
}

// applyAnnotations puts saved annotations on the row of dir.
func applyAnnotations(r *runs.Run, ann runs.Annotations) {
	r.Name = r.RecordedName
	if n := ann.Name; n != "" {
		r.Name = n
	}
	r.Note = ann.Note
}
