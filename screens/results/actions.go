package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/textclean"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/dialog"
)

// shortID is the run's id as shown: its folder's name, cleaned.
func shortID(dir string) string { return runs.FolderID(dir) }

// configMsg carries a run's config loaded for a new run.
type configMsg struct {
	to  common.ID
	dir string
	cfg *config.Config
	err error
}

func loadConfigCmd(dir string, to common.ID) tea.Cmd {
	return func() tea.Msg {
		cfg := config.Default()
		err := cfg.LoadJSON(filepath.Join(dir, record.ConfigFile))
		return configMsg{to: to, dir: dir, cfg: cfg, err: err}
	}
}

// openForm opens the run form prefilled with a past run's config.
func openForm(c *common.Common, msg configMsg) tea.Cmd {
	switch {
	case msg.err != nil:
		return common.Failure(fmt.Errorf("cannot load the run's config: %w", msg.err))
	}
	return common.Open(common.OpenForm{Config: msg.cfg})
}

// DefaultExportName is the file a run's config is exported to unless
// another name is given (LMCache's name, so its users find it).
const DefaultExportName = "bench_config.json"

// exportCmd copies the run's config.json to path, atomically.
func exportCmd(dir, path string) tea.Cmd {
	return func() tea.Msg {
		// The status names the file absolutely: the explorer's working
		// directory is not on screen.
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		b, err := os.ReadFile(filepath.Join(dir, record.ConfigFile))
		if errors.Is(err, os.ErrNotExist) {
			return common.StatusMsg{Text: "this run has no " + record.ConfigFile, Err: true}
		}
		if err == nil {
			err = config.WriteFileAtomic(path, b, 0o644)
		}
		if err != nil {
			return common.StatusMsg{Text: fmt.Sprintf("export config: %v", err), Err: true}
		}
		return common.StatusMsg{Text: "config written to " + path}
	}
}

// confirmDelete asks before the run id in dir is removed. The explorer's
// dialogs take y or Y, never enter, and are a little wider than the run
// screen's.
func confirmDelete(c *common.Common, id, dir string, by common.ID) *dialog.Confirm {
	return dialog.NewConfirm(c, "Delete run?",
		fmt.Sprintf("%s\n%s\nThe folder and every file in it are removed.", id, textclean.Line(dir)),
		deleteCmd(dir, by), explorerKeys(), dialog.Width(10, 64))
}

// explorerKeys are the yes and no of the explorer's dialogs: y or Y,
// never enter; n, esc or q keep everything.
func explorerKeys() dialog.Option {
	return dialog.Keys(
		key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "yes")),
		key.NewBinding(key.WithKeys("n", "N", "esc", "q"), key.WithHelp("n/esc", "no")))
}

// confirmDeleteSweep asks before a sweep folder and its cells (or a
// series folder and its runs) are removed.
func confirmDeleteSweep(c *common.Common, r *runs.Run, by common.ID) *dialog.Confirm {
	if r.Series != nil {
		return dialog.NewConfirm(c, "Delete series?",
			fmt.Sprintf("%s\n%s\nThe series folder and its %d run(s) are removed.", r.ID, r.Dir, r.Series.Runs),
			deleteCmd(r.Dir, by), explorerKeys(), dialog.Width(10, 64))
	}
	cells := 0
	if r.Sweep != nil {
		cells = r.Sweep.Cells
	}
	return dialog.NewConfirm(c, "Delete sweep?",
		fmt.Sprintf("%s\n%s\nThe sweep folder and its %d cell run(s) are removed.", r.ID, r.ShownDir(), cells),
		deleteCmd(r.Dir, by), explorerKeys(), dialog.Width(10, 64))
}

// refuseDeleteMany is why the marked rows are not deleted: some are runs
// or sweeps in progress (nothing is deleted then, so a mark is never
// dropped half-way); nil when none is.
func refuseDeleteMany(rows []runs.Run) error {
	var ids []string
	for i := range rows {
		if runs.DeleteRefusal(&rows[i]) != nil {
			ids = append(ids, rows[i].ID)
		}
	}
	switch len(ids) {
	case 0:
		return nil
	case 1:
		if len(rows) == 1 {
			return runs.DeleteRefusal(&rows[0])
		}
		return fmt.Errorf("not deleted: the marked %s is still running; unmark it to delete the others", ids[0])
	}
	return fmt.Errorf("not deleted: %d marked are still running (%s); unmark them to delete the others", len(ids), strings.Join(ids, ", "))
}

// confirmDeleteMany asks once before every marked run (and sweep) is
// removed: how many, and the first few of them.
func confirmDeleteMany(c *common.Common, rows []runs.Run, by common.ID) *dialog.Confirm {
	nruns, nsweeps := 0, 0
	dirs := make([]string, len(rows))
	for i, r := range rows {
		dirs[i] = r.Dir
		if r.Sweep != nil {
			nsweeps++
		} else {
			nruns++
		}
	}
	what := plural(nruns, "run")
	switch {
	case nsweeps > 0 && nruns > 0:
		what += " and " + plural(nsweeps, "sweep")
	case nsweeps > 0:
		what = plural(nsweeps, "sweep")
	}
	const shown = 5
	var lines []string
	for i, r := range rows {
		if i == shown {
			lines = append(lines, fmt.Sprintf("… and %d more", len(rows)-shown))
			break
		}
		label := r.ID
		if r.Sweep != nil {
			label += " (sweep)"
		}
		lines = append(lines, "  "+label)
	}
	text := fmt.Sprintf("The %s marked:\n%s\nTheir folders and every file in them are removed.", what, strings.Join(lines, "\n"))
	return dialog.NewConfirm(c, fmt.Sprintf("Delete %s?", what), text, deleteManyCmd(dirs, by), explorerKeys(), dialog.Width(10, 64))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Export asks where to write a run's config.
type Export struct {
	c     *common.Common
	dir   string
	input textinput.Model
	keys  struct{ Save, Cancel key.Binding }
	done  bool // written or cancelled: later keys are ignored (no second pop)
}

// NewExport asks for the file name, DefaultExportName by default.
func NewExport(c *common.Common, dir string) *Export {
	ti := textinput.New()
	ti.Prompt = "file: "
	ti.SetValue(DefaultExportName)
	ti.CursorEnd()
	ti.Cursor.SetMode(cursor.CursorStatic)
	ti.Width = 40
	ti.Focus()
	e := &Export{c: c, dir: dir, input: ti}
	e.keys.Save = common.Named(c.KeyMap.Select, "enter", "write")
	e.keys.Cancel = common.Named(c.KeyMap.Back, "esc", "cancel")
	return e
}

func (e *Export) Init() tea.Cmd { return nil }

func (e *Export) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	km, ok := msg.(tea.KeyMsg)
	if !ok || e.done {
		return e, nil
	}
	switch {
	case key.Matches(km, e.keys.Save):
		e.done = true
		path := strings.TrimSpace(e.input.Value())
		if path == "" {
			path = DefaultExportName
		}
		return e, tea.Sequence(common.Pop, exportCmd(e.dir, path))
	case key.Matches(km, e.keys.Cancel):
		e.done = true
		return e, common.Pop
	}
	var cmd tea.Cmd
	e.input, cmd = e.input.Update(km)
	return e, cmd
}

func (e *Export) View() string {
	s := e.c.Styles
	body := lipgloss.JoinVertical(lipgloss.Left,
		s.Title.Render("Export config"),
		"",
		s.Muted.Render("The config of "+shortID(e.dir)+" (no URLs, no secrets)."),
		s.Muted.Render("Replay it with: kvbench run --config FILE --engine-url URL"),
		"",
		e.input.View(),
		"",
		s.Key.Render("enter")+s.Muted.Render(" write   ")+s.Key.Render("esc")+s.Muted.Render(" cancel"),
	)
	return s.Dialog.Render(body)
}

func (e *Export) Overlay() bool             { return true }
func (e *Export) SetSize(int, int)          {}
func (e *Export) Title() string             { return "Export config" }
func (e *Export) Typing() bool              { return true }
func (e *Export) ShortHelp() []key.Binding  { return []key.Binding{e.keys.Save, e.keys.Cancel} }
func (e *Export) FullHelp() [][]key.Binding { return [][]key.Binding{e.ShortHelp()} }
