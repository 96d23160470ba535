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
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/common"
)

func shortID(dir string) string { return filepath.Base(dir) }

// configMsg carries a run's config loaded for a new run.
type configMsg struct {
	to  any
	dir string
	cfg *config.Config
	err error
}

func loadConfigCmd(dir string, to any) tea.Cmd {
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
	case common.NewForm == nil:
		return common.Failure(fmt.Errorf("the run form is not available here; run: kvbench run --config %s --engine-url URL",
			filepath.Join(msg.dir, record.ConfigFile)))
	}
	return common.Push(common.NewForm(c, msg.cfg))
}

// DefaultExportName is the file a run's config is exported to unless
// another name is given (LMCache's name, so its users find it).
const DefaultExportName = "bench_config.json"

// exportCmd copies the run's config.json to path, atomically.
func exportCmd(dir, path string) tea.Cmd {
	return func() tea.Msg {
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

// Confirm is a yes/no dialog drawn over the screen beneath; it pops
// itself, then runs yes when confirmed.
type Confirm struct {
	c           *common.Common
	title, text string
	yes         tea.Cmd
	keys        struct{ Yes, No key.Binding }
}

// NewConfirm asks title/text; yes runs after the dialog is gone.
func NewConfirm(c *common.Common, title, text string, yes tea.Cmd) *Confirm {
	d := &Confirm{c: c, title: title, text: text, yes: yes}
	d.keys.Yes = key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "yes"))
	d.keys.No = key.NewBinding(key.WithKeys("n", "N", "esc", "q"), key.WithHelp("n/esc", "no"))
	return d
}

func (d *Confirm) Init() tea.Cmd { return nil }

func (d *Confirm) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return d, nil
	}
	switch {
	case key.Matches(km, d.keys.Yes):
		return d, tea.Sequence(common.Pop, d.yes)
	case key.Matches(km, d.keys.No):
		return d, common.Pop
	}
	return d, nil
}

func (d *Confirm) View() string {
	s := d.c.Styles
	w := min(max(d.c.Width-10, 20), 64)
	body := lipgloss.JoinVertical(lipgloss.Left,
		s.Title.Render(d.title),
		"",
		lipgloss.NewStyle().Width(w).Render(d.text),
		"",
		s.Key.Render("y")+s.Muted.Render(" yes   ")+s.Key.Render("n")+s.Muted.Render(" no"),
	)
	return s.Dialog.Render(body)
}

// InterceptsKey keeps q in the dialog, where it answers no.
func (d *Confirm) InterceptsKey(k tea.KeyMsg) bool { return key.Matches(k, d.keys.No) }

// Overlay draws the dialog over the screen beneath.
func (d *Confirm) Overlay() bool             { return true }
func (d *Confirm) SetSize(int, int)          {}
func (d *Confirm) Title() string             { return d.title }
func (d *Confirm) Typing() bool              { return false }
func (d *Confirm) ShortHelp() []key.Binding  { return []key.Binding{d.keys.Yes, d.keys.No} }
func (d *Confirm) FullHelp() [][]key.Binding { return [][]key.Binding{d.ShortHelp()} }

// Export asks where to write a run's config.
type Export struct {
	c     *common.Common
	dir   string
	input textinput.Model
	keys  struct{ Save, Cancel key.Binding }
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
	e.keys.Save = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "write"))
	e.keys.Cancel = key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel"))
	return e
}

func (e *Export) Init() tea.Cmd { return nil }

func (e *Export) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return e, nil
	}
	switch {
	case key.Matches(km, e.keys.Save):
		path := strings.TrimSpace(e.input.Value())
		if path == "" {
			path = DefaultExportName
		}
		return e, tea.Sequence(common.Pop, exportCmd(e.dir, path))
	case key.Matches(km, e.keys.Cancel):
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
