// Package form is the config form: every setting of `kvbench run` in
// groups (engine, KV budget, the workload's own, general, advanced) with
// the CLI's defaults and validation messages, then a summary with start,
// export and save-as-profile. In guided mode it asks what the command line
// left missing first, as LMCache's guided setup does.
package form

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/huh"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/workload"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/common"
)

type stage int

const (
	stageForm stage = iota
	stageSummary
	stageExport
	stageProfile
	stagePreparing
	stageSweep
)

// Keys of the settings each group shows.
var (
	engineKeys   = []string{"model", "served_model_name", "api_key_env"}
	generalKeys  = []string{"seed", "ignore_eos", "output_dir", "name"}
	advancedKeys = []string{"endpoint", "extra_body", "request_timeout", "idle_timeout", "metrics_url", "no_csv"}
)

// Model is the form screen.
type Model struct {
	c      *common.Common
	id     common.ID
	base   *config.Config
	guided bool
	// What the command line left missing (guided mode).
	askURL, askWorkload, askBudget bool

	vals  map[string]*string
	bools map[string]*bool

	engineURL, workload, lmcacheURL, tokens string
	useLMCache, review, advanced            bool

	form  *huh.Form
	sub   *huh.Form
	stage stage

	cfg    *config.Config
	cfgErr error
	notice string
	failed bool
	action int

	fileName, profileName string
	startNow              bool

	ldp      ldpFactor    // long-doc-permutator's tokens per context word
	ldpInput *huh.Input   // the pool-words field (--ldp-context-length), nil when not built
	ldpField config.Field // its setting
	sweep    sweepAnswers // the sweep choice's settings
	// sweepKind is sweep.kind as the sweep form's checks read it.
	sweepKind atomic.Value
	// The sweep fields whose words follow the kind, and the kind they show.
	sweepList, sweepSLO, sweepTarget *huh.Input
	sweepShown                       string
	// The KV budget's fields whose words follow the engine URL.
	lmcacheQ         *huh.Confirm
	tokensIn         *huh.Input
	describedBuiltin bool

	width, height int
	keys          keys
	keyq          keyQueue // keys held while a focus move is on its way
	startErr      error    // why the last start was refused, until the settings change
}

type keys struct {
	Back, Left, Right, Choose, Start, Sweep, Export, Profile, Edit, Doctor key.Binding
}

func newKeys(km *common.KeyMap) keys {
	return keys{
		Back:    km.Back,
		Left:    key.NewBinding(key.WithKeys("left", "h", "shift+tab"), key.WithHelp("←/→", "choose")),
		Right:   key.NewBinding(key.WithKeys("right", "l", "tab")),
		Choose:  common.Named(km.Select, "enter", "do it"),
		Start:   key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "start")),
		Sweep:   key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "sweep")),
		Export:  key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "export")),
		Profile: key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "save profile")),
		Edit:    key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "change")),
		Doctor:  key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "check engine")),
	}
}

// New opens the form prefilled with cfg (defaults when nil): every group
// is offered, the engine URL defaulting to `builtin`.
func New(c *common.Common, cfg *config.Config) *Model {
	m := newModel(c, cfg, false)
	if m.engineURL == "" {
		m.engineURL = "builtin"
	}
	m.build()
	return m
}

// NewGuided opens the guided setup: the settings cfg is missing first
// (engine URL, workload, LMCache server yes/no, its URL or tokens per GB),
// then an offer to review the optional groups.
func NewGuided(c *common.Common, cfg *config.Config) *Model {
	m := newModel(c, cfg, true)
	set := m.base.Settings()
	m.askURL = set.EngineURL == ""
	m.askWorkload = set.Workload == ""
	m.askBudget = m.base.NeedsTokensPerGB()
	if m.askWorkload && set.TokensPerGB <= 0 && set.LMCacheURL == "" {
		// The chosen workload decides whether the budget is needed.
		m.askBudget = true
	}
	m.build()
	return m
}

func newModel(c *common.Common, cfg *config.Config, guided bool) *Model {
	if cfg == nil {
		cfg = config.Default()
	}
	base := cfg.Clone()
	set := base.Settings()
	m := &Model{
		c: c, id: common.NewID(), base: base, guided: guided,
		vals:        map[string]*string{},
		bools:       map[string]*bool{},
		engineURL:   set.EngineURL,
		workload:    set.Workload,
		lmcacheURL:  set.LMCacheURL,
		useLMCache:  set.LMCacheURL != "",
		keys:        newKeys(c.KeyMap),
		fileName:    "bench_config.json",
		profileName: "",
		ldp:         builtinLDPFactor(),
		sweep:       newSweepAnswers(set.Load.SLO),
	}
	if m.workload == "" {
		m.workload = config.Workloads[0]
	}
	if n := set.TokensPerGB; n > 0 {
		m.tokens = strconv.Itoa(n)
	}
	for _, f := range config.Fields {
		if f.Kind == config.Bool {
			b := base.Bool(f.Key)
			m.bools[f.Key] = &b
			continue
		}
		s := format(f, base)
		m.vals[f.Key] = &s
	}
	m.width, m.height = c.Width, c.Height
	return m
}

// needsBudget reports whether tokens-per-GB must still be asked, with
// the answers given so far.
func (m *Model) needsBudget() bool {
	if !config.NeedsTokensPerGB(m.workload) {
		return false
	}
	if m.guided {
		return m.askBudget && strings.TrimSpace(m.engineURL) != "builtin"
	}
	return true
}

// lmcacheQuestion and tokensDescription are the KV budget's words, which
// depend on whether the engine is the built-in one.
func lmcacheQuestion(builtin bool) string {
	if builtin {
		return "yes: read tokens per GB from its /status; no: give it, or leave 0 for the built-in engine's own figure"
	}
	return "yes: read tokens per GB from its /status; no: give tokens per GB yourself"
}

func tokensDescription(builtin bool) string {
	d := describe(field("tokens_per_gb_kvcache"))
	if builtin {
		d += " · 0 = the built-in engine's figure"
	}
	return d
}

// redescribe follows the engine URL on the update loop (huh evaluates a
// DescriptionFunc in a command, off this loop, which both races with the
// URL's writes and leaves a frame without it).
func (m *Model) redescribe() {
	b := m.builtin()
	if m.lmcacheQ == nil || b == m.describedBuiltin {
		return
	}
	m.describedBuiltin = b
	m.lmcacheQ.Description(lmcacheQuestion(b))
	m.tokensIn.Description(tokensDescription(b))
}

func (m *Model) builtin() bool { return strings.TrimSpace(m.engineURL) == "builtin" }

func (m *Model) checkTokens(s string) error {
	if strings.TrimSpace(s) == "" {
		s = "0"
	}
	if err := check(field("tokens_per_gb_kvcache"))(s); err != nil {
		return err
	}
	if n, _ := strconv.Atoi(strings.TrimSpace(s)); n <= 0 && !m.builtin() && !m.useLMCache {
		return fmt.Errorf("missing required arguments: --tokens-per-gb-kvcache or --lmcache-url")
	}
	return nil
}

func checkLMCacheURL(s string) error {
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("missing required arguments: --lmcache-url")
	}
	return nil
}

func (m *Model) build() {
	var groups []*huh.Group
	optional := func() bool { return m.guided && !m.review }

	// Engine.
	urlInput := huh.NewInput().Key("engine_url").Title("--engine-url").
		Description("engine base URL; builtin starts the simulated engine in-process (ctrl+e takes the suggestion)").
		Suggestions([]string{"builtin", "http://localhost:8000"}).Placeholder("builtin or http://host:8000").
		Value(&m.engineURL).Validate(checkEngineURL)
	if m.guided {
		if m.askURL {
			groups = append(groups, huh.NewGroup(urlInput).Title("Engine").Description("Which engine to benchmark."))
		}
	} else {
		fields := []huh.Field{urlInput}
		for _, k := range engineKeys {
			fields = append(fields, m.input(k))
		}
		groups = append(groups, huh.NewGroup(fields...).Title("Engine").
			Description("model empty = the first id of GET /v1/models; the key itself is read from the variable, never stored"))
	}

	// Workload.
	if m.askWorkload || m.base.Workload() == "" {
		opts := make([]huh.Option[string], len(config.Workloads))
		for i, w := range config.Workloads {
			opts[i] = huh.NewOption(fmt.Sprintf("%-22s %s", w, config.WorkloadInfo[w]), w)
		}
		groups = append(groups, huh.NewGroup(
			huh.NewSelect[string]().Key("workload").Title("--workload").Description("what to measure").
				Options(opts...).Value(&m.workload)).Title("Workload"))
	}

	// KV budget.
	budget := func() bool { return !m.needsBudget() }
	lmcacheQ := huh.NewConfirm().Key("use_lmcache").Title("Is there an LMCache server?").
		Description(lmcacheQuestion(m.builtin())).
		Affirmative("yes").Negative("no").Value(&m.useLMCache)
	kvVolume := m.input("kv_cache_volume")
	tokensIn := huh.NewInput().Key("tokens_per_gb_kvcache").Title("--tokens-per-gb-kvcache")
	m.lmcacheQ, m.tokensIn, m.describedBuiltin = lmcacheQ, tokensIn, m.builtin()
	if m.guided {
		groups = append(groups, huh.NewGroup(lmcacheQ).Title("KV budget").WithHideFunc(budget))
	} else {
		groups = append(groups, huh.NewGroup(lmcacheQ, kvVolume).Title("KV budget").
			Description("the workloads size themselves to this budget").WithHideFunc(budget))
	}
	groups = append(groups,
		huh.NewGroup(huh.NewInput().Key("lmcache_url").Title("--lmcache-url").
			Description("LMCache server URL: tokens per GB is read from GET /status").
			Value(&m.lmcacheURL).Validate(checkLMCacheURL)).Title("KV budget").
			WithHideFunc(func() bool { return budget() || !m.useLMCache }),
		huh.NewGroup(tokensIn.Description(tokensDescription(m.builtin())).Value(&m.tokens).Validate(m.checkTokens)).Title("KV budget").
			WithHideFunc(func() bool { return budget() || m.useLMCache }),
	)

	if m.guided {
		groups = append(groups, huh.NewGroup(huh.NewConfirm().Key("review").
			Title("Review the optional settings?").
			Description("engine details, KV cache volume, the workload's settings, seed, output; no keeps the defaults").
			Affirmative("yes").Negative("no").Value(&m.review)).Title("Optional settings"))
		fields := []huh.Field{}
		for _, k := range engineKeys {
			fields = append(fields, m.input(k))
		}
		groups = append(groups, huh.NewGroup(fields...).Title("Engine").WithHideFunc(optional))
		groups = append(groups, huh.NewGroup(kvVolume).Title("KV budget").
			WithHideFunc(func() bool { return optional() || !config.NeedsTokensPerGB(m.workload) }))
	}

	// The workload's own settings: one group per workload, the chosen one
	// shown.
	for _, w := range config.Workloads {
		w := w
		var fields []huh.Field
		for _, f := range config.WorkloadFields(w) {
			fields = append(fields, m.input(f.Key))
		}
		// A workload cannot start without its required settings (a
		// trace replay's file): its settings are asked for even when the
		// optional ones are skipped.
		groups = append(groups, huh.NewGroup(fields...).Title(w+" settings").Description(config.WorkloadInfo[w]).
			WithHideFunc(func() bool { return m.workload != w || (optional() && !m.needsRequired(w)) }))
	}

	var general []huh.Field
	for _, k := range generalKeys {
		general = append(general, m.input(k))
	}
	general = append(general, huh.NewConfirm().Key("advanced").Title("Show the advanced settings?").
		Description("endpoint, extra body, timeouts, metrics URL, CSV").
		Affirmative("yes").Negative("no").Value(&m.advanced))
	groups = append(groups, huh.NewGroup(general...).Title("General").WithHideFunc(optional))
	var adv []huh.Field
	for _, k := range advancedKeys {
		adv = append(adv, m.input(k))
	}
	groups = append(groups, huh.NewGroup(adv...).Title("Advanced").
		WithHideFunc(func() bool { return optional() || !m.advanced }))

	km := huh.NewDefaultKeyMap()
	km.Quit = key.NewBinding(key.WithDisabled())
	km.Select.Filter.SetEnabled(false)
	m.form = huh.NewForm(groups...).WithTheme(m.c.Styles.Huh()).WithKeyMap(km).
		WithShowHelp(false).WithShowErrors(false)
	m.sizeForm()
	m.stage = stageForm
}

// needsRequired reports whether one of w's required settings is not
// given yet.
func (m *Model) needsRequired(w string) bool {
	for _, f := range config.WorkloadFields(w) {
		if v, ok := m.vals[f.Key]; ok && f.Required && strings.TrimSpace(*v) == "" {
			return true
		}
	}
	return false
}

// formHeight leaves a line for the inline error under the form.
func (m *Model) formHeight() int { return max(m.height-2, 3) }

func (m *Model) sizeForm() {
	if m.width <= 0 || m.height <= 0 {
		return
	}
	if m.form != nil {
		m.form.WithWidth(min(m.width, 100)).WithHeight(m.formHeight())
	}
	if m.sub != nil {
		m.sub.WithWidth(min(m.width, 100))
		if m.stage == stageSweep {
			m.sub.WithHeight(max(m.height-4, 3))
		}
	}
}

// Config is the config the answers make (valid or not), for tests and
// the summary.
func (m *Model) Config() (*config.Config, error) { return m.apply() }

// apply turns the answers into a config on top of the starting one.
func (m *Model) apply() (*config.Config, error) {
	c := m.base.Clone()
	setText := func(key, s string) error {
		f := field(key)
		if format(f, c) == s || (s == "" && f.Kind != config.String) {
			return nil
		}
		return c.SetString(key, s)
	}
	if err := setText("engine_url", strings.TrimSpace(m.engineURL)); err != nil {
		return c, err
	}
	if err := setText("workload", m.workload); err != nil {
		return c, err
	}
	keys := []string{"kv_cache_volume"}
	keys = append(keys, engineKeys...)
	keys = append(keys, generalKeys...)
	keys = append(keys, advancedKeys...)
	for _, f := range config.WorkloadFields(m.workload) {
		keys = append(keys, f.Key)
	}
	for _, k := range keys {
		if b, ok := m.bools[k]; ok {
			if *b != c.Bool(k) {
				if err := c.Set(k, *b); err != nil {
					return c, err
				}
			}
			continue
		}
		if err := setText(k, *m.vals[k]); err != nil {
			return c, err
		}
	}
	if base := m.base.Settings(); m.needsBudget() || base.LMCacheURL != "" || base.TokensPerGB > 0 {
		if m.useLMCache {
			if err := setText("lmcache_url", strings.TrimSpace(m.lmcacheURL)); err != nil {
				return c, err
			}
		} else {
			if c.Settings().LMCacheURL != "" {
				c.SetLMCacheURL("")
			}
			t := strings.TrimSpace(m.tokens)
			if t == "" {
				t = "0"
			}
			if err := setText("tokens_per_gb_kvcache", t); err != nil {
				return c, err
			}
		}
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	if missing := c.Missing(); len(missing) > 0 {
		return c, fmt.Errorf("missing required arguments: %s", strings.Join(missing, ", "))
	}
	return c, nil
}

// NewReview opens the form at its summary, every value taken from cfg
// (a saved profile): one key starts it, c changes it. With start the
// run is prepared at once ("run this profile now").
func NewReview(c *common.Common, cfg *config.Config, start bool) *Model {
	m := New(c, cfg)
	m.toSummary()
	m.startNow = start && m.cfgErr == nil
	return m
}

func (m *Model) Init() tea.Cmd {
	if m.stage == stageSummary {
		if m.startNow {
			m.startNow = false
			return m.updateSummary(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'s'}})
		}
		return m.measureLDP(m.cfg)
	}
	return m.form.Init()
}

// Messages answered to this form.
type (
	exportedMsg struct {
		to   common.ID
		path string
		err  error
	}
	savedMsg struct {
		to   common.ID
		name string
		err  error
	}
)

func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case common.PreparedMsg:
		if msg.To != m.id {
			return m, nil
		}
		if msg.Err != nil {
			m.stage, m.notice, m.failed = stageSummary, msg.Err.Error(), true
			m.startErr = msg.Err
			return m, common.Failure(msg.Err)
		}
		return m, common.HandOver(msg)
	case exportedMsg:
		if msg.to != m.id {
			return m, nil
		}
		return m, m.done(fmt.Sprintf("config exported to %s", msg.path), msg.err)
	case ldpTokensMsg:
		if msg.to == m.id {
			m.setLDP(msg)
		}
		return m, nil
	case savedMsg:
		if msg.to != m.id {
			return m, nil
		}
		cmd := m.done(fmt.Sprintf("saved as profile %q", msg.name), msg.err)
		if msg.err == nil {
			cmd = tea.Batch(cmd, common.Changed(common.ProfilesChanged{}))
		}
		return m, cmd
	}

	return m, m.handleQueued(msg)
}

// dispatch hands msg to the stage on screen.
func (m *Model) dispatch(msg tea.Msg) tea.Cmd {
	switch m.stage {
	case stageForm:
		return m.updateForm(msg)
	case stageSummary:
		if k, ok := msg.(tea.KeyMsg); ok {
			return m.updateSummary(k)
		}
	case stageExport, stageProfile, stageSweep:
		return m.updateSub(msg)
	}
	return nil
}

func (m *Model) done(text string, err error) tea.Cmd {
	if err != nil {
		m.notice, m.failed = err.Error(), true
		return common.Failure(err)
	}
	m.notice, m.failed = text, false
	return common.Status(text)
}

func (m *Model) updateForm(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyMsg); ok && key.Matches(k, m.keys.Back) {
		return common.Pop
	}
	next, cmd := m.form.Update(msg)
	if f, ok := next.(*huh.Form); ok {
		m.form = f
	}
	m.refreshLDP()
	m.redescribe()
	if m.form.State == huh.StateCompleted {
		m.toSummary()
		return m.measureLDP(m.cfg)
	}
	return cmd
}

func (m *Model) toSummary() {
	m.stage = stageSummary
	m.cfg, m.cfgErr = m.apply()
	m.startErr = nil
	m.notice, m.failed = "", false
	m.action = 0
	if m.cfgErr != nil {
		m.action = actChange
	}
}

type action struct{ label, key string }

// The summary's actions, in the order they are drawn; actNone is no
// choice. A summary with an error puts the cursor on actChange.
const (
	actNone = iota - 1
	actStart
	actSweep
	actExport
	actProfile
	actChange
	actDoctor
)

var actions = []action{
	actStart: {"Start", "s"}, actSweep: {"Sweep", "w"}, actExport: {"Export", "e"}, actProfile: {"Save profile", "p"},
	actChange: {"Change settings", "c"}, actDoctor: {"Check engine", "d"},
}

func (m *Model) updateSummary(k tea.KeyMsg) tea.Cmd {
	choose := actNone
	switch {
	case key.Matches(k, m.keys.Back):
		choose = actChange
	case key.Matches(k, m.keys.Left):
		m.action = (m.action + len(actions) - 1) % len(actions)
	case key.Matches(k, m.keys.Right):
		m.action = (m.action + 1) % len(actions)
	case key.Matches(k, m.keys.Choose):
		choose = m.action
	case key.Matches(k, m.keys.Start):
		choose = actStart
	case key.Matches(k, m.keys.Sweep):
		choose = actSweep
	case key.Matches(k, m.keys.Export):
		choose = actExport
	case key.Matches(k, m.keys.Profile):
		choose = actProfile
	case key.Matches(k, m.keys.Edit):
		choose = actChange
	case key.Matches(k, m.keys.Doctor):
		choose = actDoctor
	}
	switch choose {
	case actStart:
		if m.cfgErr != nil {
			m.notice, m.failed = "cannot start: "+m.cfgErr.Error(), true
			return nil
		}
		m.stage = stagePreparing
		m.notice, m.failed = "", false
		return tea.Batch(common.Status("preparing: starting the engine, detecting the model…"), common.Prepare(m.c, m.id, m.cfg.Clone()))
	case actSweep:
		if m.cfgErr != nil {
			m.notice, m.failed = "cannot sweep: "+m.cfgErr.Error(), true
			return nil
		}
		m.notice, m.failed = "", false
		return m.openSweep()
	case actExport, actProfile:
		if m.cfg == nil || m.cfg.Workload() == "" {
			return nil
		}
		return m.openSub(choose == actExport)
	case actChange:
		// Back to the form; after a rejected value, at that value.
		target := ""
		if m.cfgErr != nil {
			target = fieldOf(m.cfgErr.Error())
		} else if m.startErr != nil {
			// A start the run refused: at the setting it named.
			target = fieldOf(m.startErr.Error())
		}
		m.startErr = nil
		m.build()
		cmd := m.form.Init()
		if target != "" {
			m.seek(target)
		}
		return cmd
	case actDoctor:
		// The doctor checks the engine this form names, before GPU
		// hours are spent on a run it cannot report on.
		if m.cfg == nil {
			return nil
		}
		return common.Open(common.OpenDoctor{URL: m.cfg.Settings().EngineURL})
	}
	return nil
}

// fieldOf is the key of the first setting an error message names by its
// flag ("--ldqa-document-length must be …"), "" when it names none.
func fieldOf(msg string) string {
	for _, w := range strings.FieldsFunc(msg, func(r rune) bool { return r == ' ' || r == ',' || r == ':' || r == '=' }) {
		if !strings.HasPrefix(w, "--") {
			continue
		}
		flag := strings.TrimPrefix(w, "--")
		for _, f := range config.Fields {
			if f.Flag == flag {
				return f.Key
			}
		}
	}
	return ""
}

// seek moves the form's focus forward to the field key, through the
// groups shown; when key is not on the way the form starts over at its
// first field.
func (m *Model) seek(key string) {
	for range 500 {
		f := m.form.GetFocusedField()
		if f == nil || m.form.State != huh.StateNormal {
			break
		}
		if f.GetKey() == key {
			return
		}
		m.form.NextField()
		if m.form.GetFocusedField() == f {
			m.form.NextGroup()
			if m.form.GetFocusedField() == f {
				break
			}
		}
	}
	m.build()
	m.form.Init()
}

func (m *Model) openSub(export bool) tea.Cmd {
	var in *huh.Input
	if export {
		m.stage = stageExport
		in = huh.NewInput().Key("file").Title("Export the config to").
			Description("the replayable JSON (no URL, no key); load it with kvbench run --config FILE").
			Value(&m.fileName).Validate(func(s string) error {
			if strings.TrimSpace(s) == "" {
				return fmt.Errorf("give a file name")
			}
			return nil
		})
	} else {
		m.stage = stageProfile
		in = huh.NewInput().Key("profile").Title("Save as profile").
			Description("stored in " + filepath.Join(m.c.ConfigDir, "profiles") + "; a profile of the same name is replaced").
			Value(&m.profileName).Validate(config.CheckProfileName)
	}
	km := huh.NewDefaultKeyMap()
	km.Quit = key.NewBinding(key.WithDisabled())
	m.sub = huh.NewForm(huh.NewGroup(in)).WithTheme(m.c.Styles.Huh()).WithKeyMap(km).
		WithShowHelp(false).WithShowErrors(false)
	m.sizeForm()
	return m.sub.Init()
}

func (m *Model) updateSub(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyMsg); ok && key.Matches(k, m.keys.Back) {
		m.stage, m.sub = stageSummary, nil
		return nil
	}
	next, cmd := m.sub.Update(msg)
	if f, ok := next.(*huh.Form); ok {
		m.sub = f
	}
	if m.stage == stageSweep {
		m.retitleSweep()
	}
	if m.sub.State != huh.StateCompleted {
		return cmd
	}
	if m.stage == stageSweep {
		return m.sweepDone()
	}
	export := m.stage == stageExport
	m.stage, m.sub = stageSummary, nil
	data, id := m.cfg.ExportJSON(), m.id
	if export {
		name := strings.TrimSpace(m.fileName)
		return func() tea.Msg {
			abs, err := filepath.Abs(name)
			if err != nil {
				abs = name
			}
			if err := config.WriteFileAtomic(abs, data, 0o644); err != nil {
				return exportedMsg{to: id, err: fmt.Errorf("export %s: %w", name, err)}
			}
			return exportedMsg{to: id, path: abs}
		}
	}
	name, cfg, dir := m.profileName, m.cfg.Clone(), m.c.ConfigDir
	return func() tea.Msg {
		return savedMsg{to: id, name: name, err: config.Profiles{Dir: dir}.Save(name, cfg)}
	}
}

func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	m.sizeForm()
}

func (m *Model) Title() string {
	if m.guided {
		return "guided setup"
	}
	return "configure " + m.workload
}

// Typing reports whether a text field has focus.
func (m *Model) Typing() bool {
	switch m.stage {
	case stageExport, stageProfile:
		return true
	case stageSweep:
		_, ok := m.sub.GetFocusedField().(*huh.Input)
		return ok
	case stageForm:
		_, ok := m.form.GetFocusedField().(*huh.Input)
		return ok
	}
	return false
}

func (m *Model) ShortHelp() []key.Binding {
	switch m.stage {
	case stageForm:
		return append(m.form.KeyBinds(), m.keys.Back)
	case stageExport, stageProfile, stageSweep:
		return append(m.sub.KeyBinds(), m.keys.Back)
	case stageSummary:
		return []key.Binding{m.keys.Left, m.keys.Choose, m.keys.Start, m.keys.Sweep, m.keys.Export, m.keys.Profile, m.keys.Edit, m.keys.Doctor}
	}
	return nil
}

func (m *Model) FullHelp() [][]key.Binding { return [][]key.Binding{m.ShortHelp()} }

func (m *Model) View() string {
	st := m.c.Styles
	switch m.stage {
	case stageForm:
		errLine := ""
		if errs := m.form.Errors(); len(errs) > 0 {
			errLine = m.errorLines(errs[0].Error())
		}
		// A long error takes lines from the form rather than being cut.
		room := max(m.formHeight()-lipgloss.Height(errLine)+1, 1)
		return lipgloss.NewStyle().MaxHeight(room).Render(m.form.View()) + "\n\n" + errLine
	case stageExport, stageProfile:
		errLine := ""
		if errs := m.sub.Errors(); len(errs) > 0 {
			errLine = m.errorLines(errs[0].Error())
		}
		return m.summaryView() + "\n\n" + m.sub.View() + "\n" + errLine
	case stagePreparing:
		return m.summaryView() + "\n\n" + st.Muted.Render("Preparing the run: starting the engine, detecting the model…")
	case stageSweep:
		// The sweep's own settings, under one line saying what it sweeps
		// (the summary would leave them no room).
		errLine := ""
		if errs := m.sub.Errors(); len(errs) > 0 {
			errLine = m.errorLines(errs[0].Error())
		}
		head := st.Title.Render("Sweep") + st.Muted.Render(fmt.Sprintf(" · %s on %s: each cell an ordinary run",
			m.cfg.Workload(), orText(m.cfg.Settings().EngineURL, "—")))
		return head + "\n\n" + lipgloss.NewStyle().MaxHeight(max(m.height-4, 3)).Render(m.sub.View()) + "\n" + errLine
	}
	return m.summaryView() + "\n\n" + m.actionsView()
}

// errorLines is an error wrapped to the screen's width, read whole.
func (m *Model) errorLines(msg string) string {
	return common.WrapStyled(m.c.Styles.Error, "✗ "+msg, max(m.width, 20), 2)
}

func (m *Model) actionsView() string {
	st := m.c.Styles
	var b []string
	for i, a := range actions {
		// Brackets mark the choice without colour too (NO_COLOR).
		label := "  " + a.label + "  "
		style := st.Muted
		if i == m.action {
			label = "[ " + a.label + " ]"
			style = st.Selected
		}
		if i == actStart && m.cfgErr != nil {
			style = style.Strikethrough(true)
		}
		b = append(b, style.Render(label))
	}
	line := strings.Join(b, "  ")
	if lipgloss.Width(line) > m.width && m.width > 0 {
		// Narrow terminals: tighter spacing, then as many lines as needed.
		line = ""
		row := ""
		for _, item := range b {
			switch {
			case row == "":
				row = item
			case lipgloss.Width(row)+lipgloss.Width(item) <= m.width:
				row += item
			default:
				line += row + "\n"
				row = item
			}
		}
		line += row
	}
	if m.notice != "" {
		n := common.WrapStyled(st.OK, "✓ "+m.notice, m.width, 2)
		if m.failed {
			n = m.errorLines(m.notice)
		}
		line += "\n" + n
	}
	return line
}

// summaryView lists what will run: the settings that differ from the
// defaults stand out.
func (m *Model) summaryView() string {
	st := m.c.Styles
	c := m.cfg
	if c == nil {
		c, _ = m.apply()
	}
	type kv = [2]string
	set := c.Settings()
	rows := []kv{
		{"engine", orText(set.EngineURL, "—")},
		{"model", orText(set.Model, "auto-detect")},
	}
	if s := set.ServedModelName; s != "" {
		rows = append(rows, kv{"served model name", s})
	}
	if s := set.APIKeyEnv; s != "" {
		rows = append(rows, kv{"API key from", "$" + s})
	}
	rows = append(rows, kv{"workload", c.Workload()})
	if config.NeedsTokensPerGB(c.Workload()) {
		tpg := "—"
		switch {
		case set.LMCacheURL != "":
			tpg = "from LMCache " + set.LMCacheURL
		case set.TokensPerGB > 0:
			tpg = strconv.Itoa(set.TokensPerGB)
		case set.EngineURL == bench.BuiltinURL:
			tpg = "from the built-in engine"
		}
		vol := format(field("kv_cache_volume"), c) + " GB"
		if set.EngineURL == bench.BuiltinURL && !set.KVCacheGBGiven {
			// What the run will record: the built-in engine's own cache.
			vol = strconv.FormatFloat(bench.BuiltinKVGB(), 'f', -1, 64) + " GB (the built-in engine's cache)"
		}
		rows = append(rows, kv{"KV cache volume", vol}, kv{"tokens per GB", tpg})
	}
	// What the run will do, before it starts.
	if m.cfgErr == nil && m.startErr == nil {
		// Estimates of a config that does not pass its checks mislead
		// (600k requests, 0 prompt tokens): they wait for a valid one.
		rows = append(rows, planRows(c)...)
	}
	for _, f := range config.WorkloadFields(c.Workload()) {
		v := orText(format(f, c), "—")
		if f.PoolWords {
			// Words, as LMCache counts them; the tokens they make under.
			rows = append(rows, kv{"--" + f.Flag, v + " words"})
			if n, words := m.ldpTokens(format(f, c)); n != "" {
				rows = append(rows, kv{"  ≈ tokens", n + " (" + words + ")"})
			}
			continue
		}
		rows = append(rows, kv{"--" + f.Flag, v})
	}
	rows = append(rows, kv{"seed", format(field("seed"), c)})
	if set.IgnoreEOS {
		rows = append(rows, kv{"ignore EOS", "yes"})
	}
	rows = append(rows, kv{"output dir", orText(set.OutputDir, m.c.RunsDir)})
	if s := set.Name; s != "" {
		rows = append(rows, kv{"run name", s})
	}
	for _, k := range advancedKeys {
		f := field(k)
		if v := format(f, c); v != format(f, config.Default()) {
			rows = append(rows, kv{"--" + f.Flag, v})
		}
	}
	labelW := 0
	for _, r := range rows {
		labelW = max(labelW, ansi.StringWidth(r[0]))
	}
	lines := make([]string, len(rows))
	for i, r := range rows {
		lines[i] = st.Muted.Render(fmt.Sprintf("%-*s", labelW, r[0])) + "  " + r[1]
	}
	// Two columns when the list is taller than the room left.
	room := max(m.height-6, 4)
	body := strings.Join(lines, "\n")
	if len(lines) > room && m.width >= 100 {
		half := (len(lines) + 1) / 2
		left := lipgloss.NewStyle().Width(m.width / 2).Render(strings.Join(lines[:half], "\n"))
		body = lipgloss.JoinHorizontal(lipgloss.Top, left, strings.Join(lines[half:], "\n"))
	}
	head := st.Title.Render("Summary") + st.Muted.Render(" · "+config.WorkloadInfo[c.Workload()])
	if m.cfgErr != nil {
		head += "\n" + m.errorLines(m.cfgErr.Error())
	}
	return head + "\n\n" + body
}

// planRows say what the run will send: requests, prompt tokens, the KV
// budget in tokens it sizes itself to and, where the workload's schedule
// fixes it, how long it lasts. Estimates from the same sizing the
// workloads use; a budget read from LMCache is only known at the start.
func planRows(c *config.Config) [][2]string {
	var rows [][2]string
	set := c.Settings()
	tpg := set.TokensPerGB
	vol := set.KVCacheGB
	if set.EngineURL == bench.BuiltinURL {
		if tpg <= 0 {
			tpg = bench.BuiltinTokensPerGB()
		}
		if !set.KVCacheGBGiven {
			vol = bench.BuiltinKVGB()
		}
	}
	needs := config.NeedsTokensPerGB(c.Workload())
	if needs && tpg <= 0 {
		return [][2]string{{"plan", "sized when the run starts (tokens per GB from LMCache)"}}
	}
	sized := c.Clone()
	sized.SetKVCacheGB(vol)
	if p, ok := workload.EstimatePlan(sized, tpg); ok {
		rows = append(rows, [2]string{"requests", "≈ " + humanInt(p.Requests)},
			[2]string{"prompt tokens", "≈ " + humanInt(p.Tokens)})
	}
	if needs {
		rows = append(rows, [2]string{"KV budget", fmt.Sprintf("%s tokens (%g GB × %d tokens/GB)", humanInt(vol*float64(tpg)), vol, tpg)})
	}
	if d := fixedDuration(c); d != "" {
		rows = append(rows, [2]string{"expected duration", d})
	}
	return rows
}

// fixedDuration is the length a workload's schedule fixes (its duration
// setting), "" when the run lasts as long as its requests take.
func fixedDuration(c *config.Config) string {
	for _, f := range config.WorkloadFields(c.Workload()) {
		if f.RunLength {
			return format(f, c) + " s (--" + f.Flag + ")"
		}
	}
	return ""
}

func humanInt(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.1f G", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.1f M", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0f k", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ID is the form's identity: runs prepared for it are its own.
func (m *Model) ID() common.ID { return m.id }
