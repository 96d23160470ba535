// Package home is the first screen of `kvbench` on a terminal: the seven
// workloads with what each one tests, the saved profiles and the recent
// runs. Enter configures the selected workload (or loads the profile, or
// opens the run).
package home

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/dialog"
)

// RecentRuns is how many runs home lists.
const RecentRuns = 5

// Run is one recent run as home shows it.
type Run struct {
	ID, Dir, Workload, Name string
	Started                 time.Time
	MeanTTFTms              *float64 // nil: no request had a first token
	HitRatio                *float64
	OK, Failed              int
	Complete, Interrupted   bool
	// Running: a live process is still writing the run.
	Running bool
}

type itemKind int

const (
	itemWorkload itemKind = iota
	itemProfile
	itemRun
)

type item struct {
	kind  itemKind
	index int
}

type keys struct {
	Up, Down, Next, Enter, Results, Doctor, Delete, Refresh key.Binding
	RunNow                                                  key.Binding
}

func newKeys(km *common.KeyMap) keys {
	return keys{
		Up:      km.Up,
		Down:    km.Down,
		Next:    common.Named(km.Next, "tab", "next section"),
		Enter:   common.Named(km.Select, "enter", "configure"),
		Results: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "results")),
		Doctor:  key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "doctor")),
		Delete:  key.NewBinding(key.WithKeys("x", "delete"), key.WithHelp("x", "delete profile")),
		Refresh: key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "refresh")),
		RunNow:  key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "run this profile now")),
	}
}

// Model is the home screen.
type Model struct {
	c    *common.Common
	id   common.ID
	keys keys

	profiles   []config.Profile
	runs       []Run
	runsErr    error
	profileErr error
	loaded     bool

	cursor        int
	width, height int
}

// New builds the home screen; Init loads the profiles and recent runs.
func New(c *common.Common) *Model {
	return &Model{c: c, id: common.NewID(), keys: newKeys(c.KeyMap), width: c.Width, height: c.Height}
}

// Loaded answers a load of the profiles and recent runs.
type LoadedMsg struct {
	Profiles   []config.Profile
	ProfileErr error
	Runs       []Run
	RunsErr    error
}

type profileMsg struct {
	to   common.ID
	name string
	cfg  *config.Config
	err  error
	// start runs the profile at once instead of showing its summary.
	start bool
}

type deletedMsg struct {
	to   common.ID
	name string
	err  error
}

// Load reads the profiles and the recent runs (a command: it does I/O).
func Load(c *common.Common) tea.Cmd {
	dir, runsDir := c.ConfigDir, c.RunsDir
	return func() tea.Msg {
		p, perr := config.Profiles{Dir: dir}.List()
		r, rerr := RecentFrom(runsDir, RecentRuns)
		return LoadedMsg{Profiles: p, ProfileErr: perr, Runs: r, RunsErr: rerr}
	}
}

// RecentFrom reads the newest n runs of runsDir (runs.Recent: the
// explorer's order).
func RecentFrom(runsDir string, n int) ([]Run, error) {
	list, err := runs.Recent(runsDir, n)
	if err != nil {
		return nil, fmt.Errorf("runs directory %s: %w", runsDir, err)
	}
	var out []Run
	for _, r := range list {
		row := Run{ID: r.ID, Dir: r.Dir, Workload: r.Workload, Complete: r.Complete, Running: r.Running}
		if r.Complete {
			row.Name, row.Started, row.Interrupted = r.Name, r.StartedAt, r.Interrupted
			row.MeanTTFTms, row.HitRatio = r.MeanTTFTms, r.HitRatio
			row.OK, row.Failed = r.SuccessfulRequests, r.FailedRequests
		}
		out = append(out, row)
	}
	return out, nil
}

func (m *Model) Init() tea.Cmd { return Load(m.c) }

func (m *Model) items() []item {
	var out []item
	for i := range config.Workloads {
		out = append(out, item{itemWorkload, i})
	}
	for i := range m.profiles {
		out = append(out, item{itemProfile, i})
	}
	for i := range m.runs {
		out = append(out, item{itemRun, i})
	}
	return out
}

func (m *Model) selected() item {
	it := m.items()
	m.cursor = min(max(m.cursor, 0), len(it)-1)
	return it[m.cursor]
}

func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case LoadedMsg:
		m.profiles, m.profileErr = msg.Profiles, msg.ProfileErr
		m.runs, m.runsErr = msg.Runs, msg.RunsErr
		m.loaded = true
		m.selected()
		return m, nil
	case common.RunsChanged, common.ProfilesChanged:
		// A run was added or a profile saved: refresh the lists.
		return m, Load(m.c)
	case profileMsg:
		if msg.to != m.id {
			return m, nil
		}
		if msg.err != nil {
			return m, common.Failure(msg.err)
		}
		// A profile's values are all known: its summary, one key from
		// the start (or the run itself with s).
		return m, common.Open(common.OpenForm{Config: msg.cfg, Review: true, Start: msg.start})
	case deletedMsg:
		if msg.to != m.id {
			return m, nil
		}
		if msg.err != nil {
			return m, common.Failure(msg.err)
		}
		return m, tea.Batch(common.Status(fmt.Sprintf("profile %q deleted", msg.name)), Load(m.c))
	case tea.KeyMsg:
		return m, m.onKey(msg)
	}
	return m, nil
}

func (m *Model) onKey(k tea.KeyMsg) tea.Cmd {
	n := len(m.items())
	switch {
	case key.Matches(k, m.keys.Up):
		m.cursor = (m.cursor + n - 1) % n
	case key.Matches(k, m.keys.Down):
		m.cursor = (m.cursor + 1) % n
	case key.Matches(k, m.keys.Next):
		cur := m.selected().kind
		for i := 1; i <= n; i++ {
			j := (m.cursor + i) % n
			if m.items()[j].kind != cur {
				m.cursor = j
				break
			}
		}
	case key.Matches(k, m.keys.Enter):
		return m.open(m.selected())
	case key.Matches(k, m.keys.Results):
		return common.Open(common.OpenResults{})
	case key.Matches(k, m.keys.Doctor):
		return common.Open(common.OpenDoctor{})
	case key.Matches(k, m.keys.Delete):
		it := m.selected()
		if it.kind != itemProfile {
			return nil
		}
		name := m.profiles[it.index].Name
		dir := m.c.ConfigDir
		return common.Push(dialog.NewConfirm(m.c, "Delete profile?",
			fmt.Sprintf("The profile %q (%s) is removed from disk.", name, filepath.Join(dir, "profiles", name+".json")),
			func() tea.Msg {
				return deletedMsg{to: m.id, name: name, err: config.Profiles{Dir: dir}.Delete(name)}
			}))
	case key.Matches(k, m.keys.Refresh):
		return Load(m.c)
	case key.Matches(k, m.keys.RunNow):
		if it := m.selected(); it.kind == itemProfile {
			return m.loadProfile(it.index, true)
		}
	}
	return nil
}

// loadProfile reads profile i; start runs it once read.
func (m *Model) loadProfile(i int, start bool) tea.Cmd {
	name, dir, id := m.profiles[i].Name, m.c.ConfigDir, m.id
	return func() tea.Msg {
		cfg, err := config.Profiles{Dir: dir}.Load(name)
		return profileMsg{to: id, name: name, cfg: cfg, err: err, start: start}
	}
}

func (m *Model) open(it item) tea.Cmd {
	switch it.kind {
	case itemWorkload:
		cfg := config.Default()
		cfg.SetString("workload", config.Workloads[it.index])
		return common.Open(common.OpenForm{Config: cfg})
	case itemProfile:
		return m.loadProfile(it.index, false)
	case itemRun:
		return common.Open(common.OpenRunDetail{Dir: m.runs[it.index].Dir})
	}
	return nil
}

func (m *Model) SetSize(w, h int) { m.width, m.height = w, h }
func (m *Model) Title() string    { return "home" }
func (m *Model) Typing() bool     { return false }

func (m *Model) ShortHelp() []key.Binding {
	enter := m.keys.Enter
	switch m.selected().kind {
	case itemProfile:
		enter.SetHelp("enter", "load profile")
	case itemRun:
		enter.SetHelp("enter", "open run")
	}
	b := []key.Binding{m.keys.Up, m.keys.Down, enter, m.keys.Results, m.keys.Doctor}
	if m.selected().kind == itemProfile {
		b = append(b, m.keys.RunNow, m.keys.Delete)
	}
	return b
}

func (m *Model) FullHelp() [][]key.Binding {
	return [][]key.Binding{m.ShortHelp(), {m.keys.Next, m.keys.Delete, m.keys.Refresh}}
}

func (m *Model) View() string {
	st := m.c.Styles
	sel := m.selected()
	var b strings.Builder
	line := func(s string) {
		b.WriteString(ansi.Truncate(s, max(m.width, 0), "…"))
		b.WriteByte('\n')
	}
	cursor := func(it item) string {
		if it == sel {
			return st.Selected.Render("› ")
		}
		return "  "
	}

	line(st.Header.Render("Workloads") + st.Muted.Render("  enter to configure"))
	nameW := 0
	for _, w := range config.Workloads {
		nameW = max(nameW, len(w))
	}
	for i, w := range config.Workloads {
		it := item{itemWorkload, i}
		name := fmt.Sprintf("%-*s", nameW, w)
		if it == sel {
			name = st.Selected.Render(name)
		}
		line(cursor(it) + name + "  " + st.Muted.Render(config.WorkloadInfo[w]))
	}

	line("")
	line(st.Header.Render("Saved profiles"))
	switch {
	case m.profileErr != nil:
		line("  " + st.Error.Render(common.ErrorText(m.profileErr)))
	case len(m.profiles) == 0:
		line("  " + st.Muted.Render("none yet: save one from the form's summary"))
	}
	profW := 0
	for _, p := range m.profiles {
		profW = max(profW, len(p.Name))
	}
	for i, p := range m.profiles {
		it := item{itemProfile, i}
		name := fmt.Sprintf("%-*s", profW, p.Name)
		if it == sel {
			name = st.Selected.Render(name)
		}
		desc := p.Workload
		if p.Err != nil {
			desc = st.Error.Render(common.ErrorText(p.Err))
		}
		line(cursor(it) + name + "  " + st.Muted.Render(desc))
	}

	line("")
	line(st.Header.Render("Recent runs") + st.Muted.Render("  "+m.c.RunsDir))
	switch {
	case m.runsErr != nil:
		line("  " + st.Error.Render(common.ErrorText(m.runsErr)))
	case !m.loaded:
		line("  " + st.Muted.Render("reading…"))
	case len(m.runs) == 0:
		line("  " + st.Muted.Render("no run yet"))
	default:
		line("  " + st.Muted.Render(fmt.Sprintf("%-16s  %-20s %11s %8s %9s", "started", "workload", "mean TTFT", "hit", "ok/failed")))
	}
	for i, r := range m.runs {
		it := item{itemRun, i}
		line(cursor(it) + m.runLine(r, it == sel))
	}
	return strings.TrimRight(b.String(), "\n")
}

func (m *Model) runLine(r Run, selected bool) string {
	st := m.c.Styles
	started := "—"
	if !r.Started.IsZero() {
		started = r.Started.Local().Format("2006-01-02 15:04")
	}
	wl := r.Workload
	if r.Name != "" {
		wl += " " + r.Name
	}
	wl = ansi.Truncate(wl, 20, "…")
	started, wl = pad(started, 16), pad(wl, 20)
	if r.Running {
		return st.Muted.Render(started + "  " + wl + " running")
	}
	if !r.Complete {
		return st.Warn.Render(started + "  " + wl + " incomplete (no summary)")
	}
	hit := "n/a"
	if r.HitRatio != nil {
		hit = fmt.Sprintf("%.1f %%", *r.HitRatio*100)
	}
	counts := fmt.Sprintf("%d/%d", r.OK, r.Failed)
	ttft := "n/a"
	if r.MeanTTFTms != nil {
		ttft = fmt.Sprintf("%.1f", *r.MeanTTFTms)
	}
	s := started + "  " + wl + fmt.Sprintf(" %8s ms %8s %9s", ttft, hit, counts)
	if selected {
		s = st.Selected.Render(s)
	}
	switch {
	case r.Interrupted:
		s += st.Warn.Render(" interrupted")
	case r.Failed > 0:
		s += st.Error.Render(" failed")
	}
	return lipgloss.NewStyle().Render(s)
}

// pad fills s with spaces to n cells (fmt pads by bytes).
func pad(s string, n int) string {
	if w := ansi.StringWidth(s); w < n {
		return s + strings.Repeat(" ", n-w)
	}
	return s
}
