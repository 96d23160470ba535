package home

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/huh"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/doctor"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/screens/common"
)

// Doctor asks for an engine, runs `kvbench doctor`'s checks on it off
// the update loop, and shows the checklist with the hints.
type Doctor struct {
	c    *common.Common
	id   common.ID
	keys doctorKeys

	engineURL, apiKeyEnv, lmcacheURL string
	form                             *huh.Form

	running bool
	cancel  context.CancelFunc
	report  *doctor.Report
	err     error
	offset  int

	width, height int
}

type doctorKeys struct {
	Back, Again, Up, Down key.Binding
}

// NewDoctor opens the doctor, the engine URL prefilled (builtin when
// empty).
func NewDoctor(c *common.Common, engineURL string) *Doctor {
	if engineURL == "" {
		engineURL = "builtin"
	}
	d := &Doctor{c: c, id: common.NewID(), engineURL: engineURL, width: c.Width, height: c.Height,
		keys: doctorKeys{
			Back:  c.KeyMap.Back,
			Again: key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "check another engine")),
			Up:    common.Named(c.KeyMap.Up, "↑/k", "scroll"),
			Down:  common.Named(c.KeyMap.Down, "↓/j", "scroll"),
		}}
	d.buildForm()
	return d
}

func (d *Doctor) buildForm() {
	km := huh.NewDefaultKeyMap()
	km.Quit = key.NewBinding(key.WithDisabled())
	d.form = huh.NewForm(huh.NewGroup(
		huh.NewInput().Key("engine_url").Title("--engine-url").
			Description("the engine to check; builtin checks the simulated engine (ctrl+e takes the suggestion)").
			Suggestions([]string{"builtin", "http://localhost:8000"}).Value(&d.engineURL).
			Validate(func(s string) error {
				if strings.TrimSpace(s) == "builtin" {
					return nil
				}
				_, err := sender.NormalizeURL(s)
				return err
			}),
		huh.NewInput().Key("api_key_env").Title("--api-key-env").
			Description("environment variable holding the bearer key (empty: none)").Value(&d.apiKeyEnv).
			Validate(func(s string) error {
				if s = strings.TrimSpace(s); s != "" && os.Getenv(s) == "" {
					return fmt.Errorf("--api-key-env: environment variable %s is not set", s)
				}
				return nil
			}),
		huh.NewInput().Key("lmcache_url").Title("--lmcache-url").
			Description("LMCache server to check the tokens-per-GB lookup against (empty: skipped)").Value(&d.lmcacheURL),
	).Title("Doctor").Description("What does the engine report that a cache benchmark needs?")).
		WithTheme(d.c.Styles.Huh()).WithKeyMap(km).WithShowHelp(false).WithShowErrors(false)
	d.size()
}

func (d *Doctor) size() {
	if d.width > 0 && d.height > 0 {
		d.form.WithWidth(min(d.width, 100)).WithHeight(max(d.height-2, 3))
	}
}

type doctorMsg struct {
	to     common.ID
	report doctor.Report
	err    error
}

// check runs the checks in a command; for builtin it starts the
// simulated engine for the time of the checks, as `kvbench doctor` does.
func (d *Doctor) check() tea.Cmd {
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel, d.running, d.report, d.err = cancel, true, nil, nil
	o := doctor.Options{EngineURL: strings.TrimSpace(d.engineURL), LMCacheURL: strings.TrimSpace(d.lmcacheURL)}
	if name := strings.TrimSpace(d.apiKeyEnv); name != "" {
		o.APIKey = os.Getenv(name)
	}
	return func() tea.Msg {
		defer cancel()
		display := ""
		if o.EngineURL == bench.BuiltinURL {
			run, err := bench.StartBuiltin("", 0)
			if err != nil {
				return doctorMsg{to: d.id, err: err}
			}
			defer run.Close()
			o.EngineURL, display = run.URL(), "builtin"
			if o.LMCacheURL == "" {
				o.LMCacheURL = run.URL()
			}
		}
		rep := doctor.Run(ctx, o)
		if display != "" {
			rep.EngineURL = display
		}
		return doctorMsg{to: d.id, report: rep}
	}
}

func (d *Doctor) Init() tea.Cmd { return d.form.Init() }

// Answer is the message a check of this doctor answers with: tests and
// replays show a report without an engine.
func (d *Doctor) Answer(rep doctor.Report, err error) tea.Msg {
	return doctorMsg{to: d.id, report: rep, err: err}
}

func (d *Doctor) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if m, ok := msg.(doctorMsg); ok {
		if m.to == d.id {
			d.running = false
			d.report, d.err = &m.report, m.err
			d.offset = 0
		}
		return d, nil
	}
	k, isKey := msg.(tea.KeyMsg)
	switch {
	case isKey && key.Matches(k, d.keys.Back):
		if d.cancel != nil {
			d.cancel()
		}
		return d, common.Pop
	case d.running:
		return d, nil
	case d.report != nil || d.err != nil:
		if isKey {
			switch {
			case key.Matches(k, d.keys.Again):
				d.report, d.err = nil, nil
				d.buildForm()
				return d, d.form.Init()
			case key.Matches(k, d.keys.Up):
				d.offset = max(d.offset-1, 0)
			case key.Matches(k, d.keys.Down):
				d.offset++
			}
		}
		return d, nil
	}
	next, cmd := d.form.Update(msg)
	if f, ok := next.(*huh.Form); ok {
		d.form = f
	}
	if d.form.State == huh.StateCompleted {
		return d, d.check()
	}
	return d, cmd
}

func (d *Doctor) View() string {
	st := d.c.Styles
	switch {
	case d.running:
		return st.Muted.Render("Checking " + d.engineURL + "… (esc cancels)")
	case d.err != nil:
		return st.Error.Render("✗ " + common.ErrorText(d.err))
	case d.report != nil:
		return d.reportView()
	}
	errLine := ""
	if errs := d.form.Errors(); len(errs) > 0 {
		errLine = st.Error.Render("✗ " + errs[0].Error())
	}
	return d.form.View() + "\n\n" + errLine
}

func (d *Doctor) reportView() string {
	st := d.c.Styles
	r := d.report
	model := r.Model
	if model == "" {
		model = "none"
	}
	lines := []string{
		st.Title.Render("Doctor") + st.Muted.Render(" · ") + r.EngineURL + st.Muted.Render(" · model ") + model,
		r.Tally(),
		"",
	}
	idW := 0
	for _, c := range r.Checks {
		idW = max(idW, len(c.ID))
	}
	indent := 8 + idW
	// Messages and hints wrap under their column.
	wrap := func(s string, style lipgloss.Style) []string {
		w := max(d.width-indent, 20)
		return strings.Split(style.Render(lipgloss.NewStyle().Width(w).Render(s)), "\n")
	}
	for _, c := range r.Checks {
		if c.Skipped() {
			// Not run because another check failed: one muted line.
			lines = append(lines, st.Muted.Render(fmt.Sprintf("%-4s  %-*s  %s", "SKIP", idW, c.ID, ansi.Truncate(c.Why(), max(d.width-indent, 20), "…"))))
			continue
		}
		mark := map[string]lipgloss.Style{doctor.Pass: st.OK, doctor.Warn: st.Warn, doctor.Fail: st.Error, doctor.Info: st.Muted}[c.Status]
		head := mark.Render(fmt.Sprintf("%-4s", strings.ToUpper(c.Status))) + "  " + fmt.Sprintf("%-*s", idW, c.ID) + "  "
		for i, l := range wrap(c.Message, lipgloss.NewStyle()) {
			if i == 0 {
				lines = append(lines, head+l)
			} else {
				lines = append(lines, strings.Repeat(" ", indent)+l)
			}
		}
		if c.Hint != "" {
			for _, l := range wrap("hint: "+c.Hint, st.Muted) {
				lines = append(lines, strings.Repeat(" ", indent)+l)
			}
		}
	}
	d.offset = min(d.offset, max(len(lines)-d.height, 0))
	lines = lines[d.offset:]
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, max(d.width, 0), "…")
	}
	return strings.Join(lines, "\n")
}

func (d *Doctor) SetSize(w, h int) {
	d.width, d.height = w, h
	d.size()
}

func (d *Doctor) Title() string { return "doctor" }

func (d *Doctor) Typing() bool {
	return !d.running && d.report == nil && d.err == nil
}

func (d *Doctor) ShortHelp() []key.Binding {
	if d.report != nil || d.err != nil {
		return []key.Binding{d.keys.Again, d.keys.Up, d.keys.Down, d.keys.Back}
	}
	if d.running {
		return []key.Binding{d.keys.Back}
	}
	return append(d.form.KeyBinds(), d.keys.Back)
}

func (d *Doctor) FullHelp() [][]key.Binding { return [][]key.Binding{d.ShortHelp()} }
