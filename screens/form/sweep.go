package form

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/huh"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/load"
	bsweep "github.com/kvbench/kvbench/bench/sweep"
	"github.com/kvbench/kvbench/screens/common"
)

// The form's sweep choice: the summary's "Sweep" asks what `kvbench
// sweep` would take beyond the run's settings (a list of rates or
// concurrencies, or a capacity search with its SLO and target), then
// starts the sweep screen through the router.

// Sweep kinds offered, as `kvbench sweep` flags them.
const (
	sweepRateList   = "rate list"
	sweepConcList   = "concurrency list"
	sweepRateSearch = "capacity search: rate"
	sweepConcSearch = "capacity search: concurrency"
	sweepWSList     = "working-set list"
	sweepWSSearch   = "cliff search: working set"
)

// sweepKinds in the select's order: the working-set two between the
// load kinds, so ←/→ from the first still wraps to a load search; the
// select's description names the four load kinds, as before, and ←/→
// shows the other two.
var sweepKinds = []string{sweepRateList, sweepConcList, sweepRateSearch, sweepWSList, sweepWSSearch, sweepConcSearch}

// loadKinds are the four kinds the select's description names.
var loadKinds = []string{sweepRateList, sweepConcList, sweepRateSearch, sweepConcSearch}

// sweepAnswers are the sweep settings typed in the form; they are kept
// when the sweep is refused, so the form reopens with them.
type sweepAnswers struct {
	kind, list, slo, target, maxCells string
}

func newSweepAnswers(slo string) sweepAnswers {
	return sweepAnswers{kind: sweepRateList, list: "1,2,4,8", slo: slo, target: "0.9", maxCells: "12"}
}

func isSearch(kind string) bool {
	return kind == sweepRateSearch || kind == sweepConcSearch || kind == sweepWSSearch
}

// isWorkingSet reports a working-set kind (spec/load.md, "Working-set
// sweeps"): its list is of sizes, its target a hit ratio, no SLO needed.
func isWorkingSet(kind string) bool { return kind == sweepWSList || kind == sweepWSSearch }

func dimensionOf(kind string) string {
	switch kind {
	case sweepConcList, sweepConcSearch:
		return bsweep.Concurrency
	case sweepWSList, sweepWSSearch:
		return bsweep.WorkingSet
	}
	return bsweep.Rate
}

// listFlagOf is the flag the list stands for (--sweep-rate,
// --sweep-concurrency or --sweep-working-set), as the errors name it.
func listFlagOf(kind string) string {
	if isWorkingSet(kind) {
		return "sweep-working-set"
	}
	return "sweep-" + dimensionOf(kind)
}

// parseList reads the list field for a kind (sizes in tokens for a
// working-set kind, at tokensPerGB for a GB suffix).
func parseList(kind, s string, tokensPerGB int) ([]float64, error) {
	if isWorkingSet(kind) {
		return bsweep.ParseSizes(listFlagOf(kind), s, tokensPerGB)
	}
	return bsweep.ParseList(listFlagOf(kind), s)
}

// tokensPerGB is the run's, the built-in engine's when it has none.
func (m *Model) tokensPerGB() int {
	if m.cfg == nil {
		return 0
	}
	set := m.cfg.Settings()
	t := set.TokensPerGB
	if t == 0 && set.EngineURL == bench.BuiltinURL {
		t = bench.BuiltinTokensPerGB()
	}
	return t
}

func (a *sweepAnswers) search() bool      { return isSearch(a.kind) }
func (a *sweepAnswers) dimension() string { return dimensionOf(a.kind) }
func (a *sweepAnswers) listFlag() string  { return listFlagOf(a.kind) }

// kindNow is the kind chosen, for the field checks: huh runs them in
// commands, off the update loop that writes a.kind, so they read this
// copy, stored after every update.
func (m *Model) kindNow() string {
	k, _ := m.sweepKind.Load().(string)
	return k
}

// options builds the sweep's options on top of the run's config and
// checks them as `kvbench sweep` would (exit 2 there, a line here).
func (m *Model) sweepOptions() (bsweep.Options, error) {
	a := &m.sweep
	var o bsweep.Options
	if m.cfg == nil || m.cfgErr != nil {
		return o, fmt.Errorf("the run's settings are not valid yet")
	}
	cfg := m.cfg.Clone()
	if err := cfg.SetSLO(strings.TrimSpace(a.slo)); err != nil {
		return o, err
	}
	values, err := parseList(a.kind, a.list, m.tokensPerGB())
	if err != nil {
		return o, err
	}
	target, err := strconv.ParseFloat(strings.TrimSpace(a.target), 64)
	if err != nil {
		return o, fmt.Errorf("--%s %q is not a number", targetFlag(a.kind), a.target)
	}
	cells, err := strconv.Atoi(strings.TrimSpace(a.maxCells))
	if err != nil {
		return o, fmt.Errorf("--search-max-cells %q is not a whole number", a.maxCells)
	}
	o = bsweep.Options{Config: cfg, Dimension: a.dimension(), Values: values, Search: a.search(),
		GoodputTarget: target, Precision: 0.05, MaxCells: cells}
	if isWorkingSet(a.kind) {
		o.GoodputTarget, o.HitTarget, o.Precision = 0, target, bsweep.DefaultWorkingSetPrecision
		if strings.TrimSpace(a.maxCells) == newSweepAnswers("").maxCells {
			// The form's default, as the command line's: a working-set
			// search bisects twice (capacity, then the fast tier).
			o.MaxCells = bsweep.DefaultWorkingSetCells
		}
	}
	return o, o.Validate()
}

// openSweep shows the sweep's settings under the summary.
func (m *Model) openSweep() tea.Cmd {
	m.stage = stageSweep
	a := &m.sweep
	m.sweepKind.Store(a.kind)
	list := huh.NewInput().Key("sweep_list").Title(sweepListTitle(a.kind)).
		Description("1,2,4,8 or 1:64:x2 (geometric) or 10:100:+10 (linear); each value is one cell, an ordinary run").
		Value(&a.list).Validate(func(s string) error {
		_, err := parseList(m.kindNow(), s, m.tokensPerGB())
		return err
	})
	slo := huh.NewInput().Key("slo").Title("--slo").Description(sweepSLODescription(a.kind)).
		Value(&a.slo).Validate(func(s string) error {
		_, err := load.ParseSLO(s)
		if err == nil && isSearch(m.kindNow()) && !isWorkingSet(m.kindNow()) && strings.TrimSpace(s) == "" {
			err = fmt.Errorf("--search needs --slo (e.g. ttft=500ms)")
		}
		return err
	})
	target := huh.NewInput().Key("goodput_target").Title("--" + targetFlag(a.kind)).
		Description(targetDescription(a.kind)).
		Value(&a.target).Validate(func(s string) error {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || !(v > 0 && v <= 1) {
			return fmt.Errorf("--%s must be in (0, 1]", targetFlag(m.kindNow()))
		}
		return nil
	})
	cells := huh.NewInput().Key("search_max_cells").Title("--search-max-cells").
		Description("most cells the search runs · in [1, 1000] · default 12").
		Value(&a.maxCells).Validate(func(s string) error {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 1 || v > 1000 {
			return fmt.Errorf("--search-max-cells must be in [1, 1000]")
		}
		return nil
	})
	kind := huh.NewSelect[string]().Key("sweep_kind").Title("Sweep").
		Description("the same run at several loads, each cell with its own prompt salt · " + strings.Join(loadKinds, " | ") + " (←/→)").
		Inline(true).Options(huh.NewOptions(sweepKinds...)...).Value(&a.kind)
	km := huh.NewDefaultKeyMap()
	km.Quit = key.NewBinding(key.WithDisabled())
	km.Select.Filter.SetEnabled(false)
	m.sweepList, m.sweepSLO, m.sweepTarget, m.sweepShown = list, slo, target, a.kind
	m.sub = huh.NewForm(
		huh.NewGroup(kind, list, slo),
		huh.NewGroup(target, cells).WithHideFunc(func() bool { return !isSearch(m.kindNow()) && !isWorkingSet(m.kindNow()) }),
	).WithTheme(m.c.Styles.Huh()).WithKeyMap(km).WithShowHelp(false).WithShowErrors(false)
	m.sizeForm()
	return m.sub.Init()
}

// sweepListTitle is the list field's title for a kind.
func sweepListTitle(kind string) string {
	if isSearch(kind) {
		return "--" + listFlagOf(kind) + " (the search starts at the first value)"
	}
	return "--" + listFlagOf(kind)
}

// targetDescription is the target field's description for a kind.
func targetDescription(kind string) string {
	if isWorkingSet(kind) {
		return "a cell passes when its hit ratio reaches this share of the ideal · in (0, 1] · default 0.9"
	}
	return "good fraction a cell must reach to pass · in (0, 1] · default 0.9"
}

// targetFlag is the flag the target field stands for.
func targetFlag(kind string) string {
	if isWorkingSet(kind) {
		return "hit-target"
	}
	return "goodput-target"
}

func sweepSLODescription(kind string) string {
	if isWorkingSet(kind) {
		return "optional: each cell's good fraction under it; a working-set cell passes on its hit ratio"
	}
	if isSearch(kind) {
		return "needed by a search: a cell passes when its good fraction under it reaches the target · e.g. ttft=500ms,tpot=50ms"
	}
	return "optional: each cell's good fraction under it, and the highest passing value · e.g. ttft=500ms"
}

// retitleSweep follows a change of kind on the update loop. huh's
// TitleFunc and DescriptionFunc are evaluated in commands, so a frame
// drawn before their answer arrives shows an empty title; a title set
// here is on the very next frame.
func (m *Model) retitleSweep() {
	kind := m.sweep.kind
	m.sweepKind.Store(kind)
	if m.sweepList == nil || kind == m.sweepShown {
		return
	}
	m.sweepShown = kind
	m.sweepList.Title(sweepListTitle(kind))
	m.sweepSLO.Description(sweepSLODescription(kind))
	if m.sweepTarget != nil {
		m.sweepTarget.Title("--" + targetFlag(kind))
		m.sweepTarget.Description(targetDescription(kind))
	}
}

// sweepDone starts the sweep the answers describe, or says why not.
func (m *Model) sweepDone() tea.Cmd {
	m.stage, m.sub = stageSummary, nil
	o, err := m.sweepOptions()
	if err != nil {
		m.notice, m.failed = "cannot sweep: "+err.Error(), true
		return common.Failure(fmt.Errorf("cannot sweep: %w", err))
	}
	return common.Open(common.StartSweep{Options: o})
}
