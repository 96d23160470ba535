package results

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/internal/textclean"
	"github.com/kvbench/kvbench/screens/common"
)

// copyItem is one thing the copy dialog offers.
type copyItem struct {
	key  string // the letter that copies it
	what string // "run id", for the status line
	text string // what goes on the clipboard ("" while it is read)
	err  error
}

// Copy is the small dialog `y` opens over the explorer: copy the run's
// id (i), its folder's absolute path (p) or the command that reproduces
// it (c), lazygit's "copy to clipboard" menu. The choice is copied at
// once (OSC 52) and the dialog closes; the screen that opened it (owner)
// says what was copied.
type Copy struct {
	c      *common.Common
	id     common.ID
	owner  common.ID
	dir    string
	sweep  bool
	series bool
	items  []copyItem
	cursor int
	keys   struct{ Up, Down, Choose, Cancel key.Binding }

	// shown is set once the dialog is on the stack; done once it chose
	// or was cancelled: later keys (typed before its Pop took effect)
	// are ignored, so they never pop the screen beneath.
	shown, done bool
}

// NewCopy offers to copy something of the run (or sweep) r.
func NewCopy(c *common.Common, r *runs.Run, owner common.ID) *Copy {
	dir := r.Dir
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	what := "run"
	switch {
	case r.Sweep != nil:
		what = "sweep"
	case r.Series != nil:
		what = "series"
	}
	// The id is cleaned where the folder is read; the path is cleaned
	// here, as it is shown and copied (the command is built from dir as it
	// is on disk, from its cleaned record).
	d := &Copy{c: c, id: common.NewID(), owner: owner, dir: dir, sweep: r.Sweep != nil, series: r.Series != nil,
		items: []copyItem{
			{key: "i", what: what + " id", text: r.ID},
			{key: "p", what: what + " folder", text: textclean.Line(dir)},
			{key: "c", what: "command"},
		}}
	d.keys.Up = c.KeyMap.Up
	d.keys.Down = c.KeyMap.Down
	d.keys.Choose = common.Named(c.KeyMap.Select, "enter", "copy")
	d.keys.Cancel = key.NewBinding(key.WithKeys("esc", "q", "y"), key.WithHelp("esc", "cancel"))
	return d
}

type commandMsg struct {
	to   common.ID
	args []string
	err  error
}

// Init builds the command from the record, off the update loop. A
// dialog answered before it was shown (early) closes at once.
func (d *Copy) Init() tea.Cmd {
	d.shown = true
	if d.done {
		return common.Pop
	}
	dir, sweep, series, to := d.dir, d.sweep, d.series, d.id
	return func() tea.Msg {
		args, err := buildCommand(dir, sweep, series)
		return commandMsg{to: to, args: args, err: err}
	}
}

func buildCommand(dir string, sweep, series bool) ([]string, error) {
	switch {
	case sweep:
		return runs.SweepCommand(dir)
	case series:
		return runs.SeriesCommand(dir)
	}
	return runs.Command(dir)
}

// early answers a key typed right after y, before the dialog is on the
// stack (both in one read of the terminal, `yc`): the screen that opened
// it hands it the key, and the choice is made as if the dialog had
// taken it. ok is false once the dialog is shown, or for a key that is
// not the dialog's.
func (d *Copy) early(msg tea.KeyMsg) (tea.Cmd, bool) {
	if d.shown || d.done {
		return nil, false
	}
	if key.Matches(msg, d.keys.Cancel) {
		d.done = true
		return nil, true
	}
	for i, it := range d.items {
		if msg.String() != it.key {
			continue
		}
		d.done, d.cursor = true, i
		if it.key != "c" {
			return common.Copy(d.owner, it.what, it.text), true
		}
		dir, sweep, series, owner := d.dir, d.sweep, d.series, d.owner
		return func() tea.Msg {
			args, err := buildCommand(dir, sweep, series)
			if err != nil {
				return common.CopiedMsg{To: owner, What: "command", Err: err}
			}
			line := runs.ShellJoin(args)
			return common.CopiedMsg{To: owner, What: "command (" + strings.Join(args[:2], " ") + " …)", Text: line,
				Err: common.WriteClipboard(common.Terminal, line)}
		}, true
	}
	return nil, false
}

func (d *Copy) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case commandMsg:
		if msg.to == d.id {
			it := &d.items[2]
			it.err = msg.err
			if msg.err == nil {
				it.text = runs.ShellJoin(msg.args)
				it.what = "command (" + strings.Join(msg.args[:2], " ") + " …)"
			}
		}
		return d, nil
	case tea.KeyMsg:
		if d.done {
			return d, nil
		}
		switch {
		case key.Matches(msg, d.keys.Cancel):
			d.done = true
			return d, common.Pop
		case key.Matches(msg, d.keys.Up):
			d.cursor = (d.cursor + len(d.items) - 1) % len(d.items)
			return d, nil
		case key.Matches(msg, d.keys.Down):
			d.cursor = (d.cursor + 1) % len(d.items)
			return d, nil
		case key.Matches(msg, d.keys.Choose):
			return d, d.choose(d.cursor)
		}
		for i, it := range d.items {
			if msg.String() == it.key {
				return d, d.choose(i)
			}
		}
	}
	return d, nil
}

// choose copies item i and closes the dialog; an item not ready (the
// command still read, or not buildable) leaves it open.
func (d *Copy) choose(i int) tea.Cmd {
	d.cursor = i
	it := d.items[i]
	switch {
	case it.err != nil:
		return common.Failure(it.err)
	case it.text == "":
		return nil
	}
	d.done = true
	return tea.Sequence(common.Pop, common.Copy(d.owner, it.what, it.text))
}

func (d *Copy) View() string {
	s := d.c.Styles
	w := min(max(d.c.Width-10, 24), 90)
	lines := []string{s.Title.Render("Copy to the clipboard"), ""}
	for i, it := range d.items {
		mark := "  "
		if i == d.cursor {
			mark = "› "
		}
		label := map[string]string{"i": "id", "p": "folder path", "c": "command"}[it.key]
		head := mark + s.Key.Render(it.key) + " " + label
		if i == d.cursor {
			head = mark + s.Key.Render(it.key) + " " + s.Selected.Render(label)
		}
		lines = append(lines, head)
		var val string
		switch {
		case it.err != nil:
			val = s.Error.Render(ansi.Truncate(common.ErrorText(it.err), w-4, "…"))
		case it.text == "":
			val = s.Muted.Render("reading the record …")
		case it.key == "c":
			// The command whole: it is what the user will paste.
			val = s.Muted.Render(wrapArgs(it.text, w-4))
		default:
			val = it.text
			if over := ansi.StringWidth(val) - (w - 4); over > 0 {
				// Keep the end (the run's folder name), the … included.
				val = ansi.TruncateLeft(val, over+1, "…")
			}
			val = s.Muted.Render(val)
		}
		for _, l := range strings.Split(val, "\n") {
			lines = append(lines, "    "+l)
		}
	}
	lines = append(lines, "", s.Key.Render("i/p/c")+s.Muted.Render(" copy   ")+s.Key.Render("esc")+s.Muted.Render(" cancel"))
	out := lipgloss.NewStyle().Width(w).Render(lipgloss.JoinVertical(lipgloss.Left, lines...))
	// A long command on a short terminal: keep the dialog on the screen.
	if room := d.c.Height - 4; room > 6 && lipgloss.Height(out) > room {
		all := strings.Split(out, "\n")
		out = strings.Join(append(all[:room-2], s.Muted.Render("    …"), all[len(all)-1]), "\n")
	}
	return s.Dialog.Render(out)
}

// copyChord is the y of a screen: the dialog it opened, until the dialog
// is on the stack (keys typed before that are the dialog's).
type copyChord struct{ d *Copy }

// open pushes the dialog and remembers it.
func (k *copyChord) open(d *Copy) tea.Cmd {
	k.d = d
	return common.Push(d)
}

// key hands msg to a dialog not shown yet; handled is false when there is
// none (the screen takes the key).
func (k *copyChord) key(msg tea.KeyMsg) (cmd tea.Cmd, handled bool) {
	if k.d == nil {
		return nil, false
	}
	cmd, handled = k.d.early(msg)
	if !handled && (k.d.shown || k.d.done) {
		k.d = nil
	}
	return cmd, handled
}

// pending reports whether a dialog opened is not shown yet.
func (k *copyChord) pending() bool { return k.d != nil && !k.d.shown && !k.d.done }

// InterceptsKey keeps q (cancel) in the dialog.
func (d *Copy) InterceptsKey(k tea.KeyMsg) bool { return key.Matches(k, d.keys.Cancel) }

func (d *Copy) Overlay() bool    { return true }
func (d *Copy) SetSize(int, int) {}
func (d *Copy) Title() string    { return "Copy" }
func (d *Copy) Typing() bool     { return false }

func (d *Copy) ShortHelp() []key.Binding {
	return []key.Binding{
		key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "id")),
		key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "path")),
		key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "command")),
		d.keys.Cancel,
	}
}

func (d *Copy) FullHelp() [][]key.Binding {
	return [][]key.Binding{d.ShortHelp(), {d.keys.Up, d.keys.Down, d.keys.Choose}}
}

// copiedStatus is the status line after a copy.
func copiedStatus(msg common.CopiedMsg) tea.Cmd {
	if msg.Err != nil {
		return common.Failure(fmt.Errorf("copy %s: %w", msg.What, msg.Err))
	}
	text := msg.Text
	if strings.HasPrefix(msg.What, "command") {
		text = fmt.Sprintf("%d characters", len([]rune(text)))
	}
	return common.Status(fmt.Sprintf("copied the %s to the clipboard (OSC 52): %s", msg.What, text))
}

// wrapArgs wraps a command line at its spaces only (never inside a flag
// such as --rp-request-length, which the terminal's own wrapping would
// break at its hyphens); an argument wider than w is cut into pieces.
func wrapArgs(line string, w int) string {
	w = max(w, 1)
	var lines []string
	cur := ""
	for _, word := range strings.Split(line, " ") {
		for ansi.StringWidth(word) > w {
			if cur != "" {
				lines = append(lines, cur)
				cur = ""
			}
			lines = append(lines, ansi.Truncate(word, w, ""))
			word = ansi.TruncateLeft(word, w, "")
		}
		switch {
		case cur == "":
			cur = word
		case ansi.StringWidth(cur)+1+ansi.StringWidth(word) <= w:
			cur += " " + word
		default:
			lines = append(lines, cur)
			cur = word
		}
	}
	return strings.Join(append(lines, cur), "\n")
}
