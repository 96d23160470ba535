// Package app is kvbench's full-screen front-end: the root bubbletea
// model (model.go: the screen stack, global keys, help, size), the router
// (router.go: every screen and the intent that opens it) and the entry
// points below, which the command line calls on a terminal. Headless
// mode never builds a program.
package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/record"
	bsweep "github.com/kvbench/kvbench/bench/sweep"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/home"
	"github.com/kvbench/kvbench/screens/run"
	sweepscreen "github.com/kvbench/kvbench/screens/sweep"
	"github.com/kvbench/kvbench/theme"
)

// fps caps redraws: the live screen never repaints more than this.
const fps = 10

// newCommon builds the shared context; the styles are decided here,
// before the program owns the terminal. The logger is ctx's debug log
// (--log-file), one that discards without it.
func newCommon(ctx context.Context) *common.Common {
	return &common.Common{
		Styles:    theme.Setup(),
		KeyMap:    common.DefaultKeyMap(),
		Now:       time.Now,
		Logger:    bench.LoggerFrom(ctx),
		RunsDir:   record.RunsDir(),
		ConfigDir: config.Dir(),
	}
}

// execute runs the program and then waits for every run it started, so
// the record is complete whatever ended the program (a signal included).
func execute(ctx context.Context, m *model) int {
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithFPS(fps))
	m.common.Logger.Info("screen", "action", "start", "title", m.top().Title())
	_, err := p.Run()
	m.common.Logger.Info("program ended", "code", m.code, "error", errString(err))
	for _, s := range m.sessions {
		s.Stop()
		s.Wait()
	}
	for _, s := range m.sweeps {
		s.Stop()
		s.Wait()
	}
	printLast(os.Stdout, os.Stderr, m.last)
	// As headless mode does: each sweep's table on stdout, where it is
	// on stderr.
	for _, s := range m.sweeps {
		s.Report(os.Stdout, os.Stderr)
	}
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "kvbench: %v\n", err)
		return 1
	}
	if err != nil {
		return 130
	}
	return m.code
}

// printLast leaves on the terminal what headless mode prints: the last
// finished run's summary on stdout (JSON with --format json) and where its
// record is on stderr.
func printLast(stdout, stderr io.Writer, fin *run.FinishedMsg) {
	if fin == nil {
		return
	}
	var cfg *config.Config
	if fin.Session != nil {
		cfg = fin.Session.Info().Config
	}
	switch {
	case fin.Summary == nil:
	case cfg != nil && cfg.Settings().Format == "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(fin.Summary)
	default:
		_, _ = io.WriteString(stdout, fin.Text)
	}
	if fin.Dir != "" {
		fmt.Fprintf(stderr, "kvbench: run record in %s\n", fin.Dir)
	}
}

// RunHome shows the home screen (`kvbench` on a TTY). The exit code is
// the last run's, else 0 (130 after ctrl+c).
func RunHome(ctx context.Context) int {
	c := newCommon(ctx)
	return execute(ctx, newModel(c, home.New(c)))
}

// RunGuided opens the config form asking what cfg is missing first, then
// runs the benchmark live and returns its exit code (130 when the user
// leaves before a run finished).
func RunGuided(ctx context.Context, cfg *config.Config) int {
	c := newCommon(ctx)
	first, _ := route(c, common.OpenForm{Config: cfg, Guided: true})
	m := newModel(c, first)
	m.noRunCode = 130
	return execute(ctx, m)
}

// RunLive shows the live run screen for a prepared runner and returns
// the run's exit code (130 if stopped).
func RunLive(ctx context.Context, r *bench.Runner) int {
	c := newCommon(ctx)
	screen := run.New(c, r)
	m := newModel(c, screen)
	m.noRunCode = 130
	code := execute(ctx, m)
	s := screen.Session()
	switch {
	case !s.Started():
		r.Prepared().Close()
		return 130
	case m.ranOnce:
		return code
	}
	// The program ended before the run did (a signal): the run was
	// stopped and its partial record written.
	code = s.Wait()
	if dir := s.Info().Dir; dir != "" {
		fmt.Fprintf(os.Stderr, "kvbench: run record in %s\n", dir)
	}
	return code
}

// Open runs the application starting on the screen an intent asks for
// (`kvbench results` opens the explorer or one run, `kvbench compare` the
// comparison), over runsDir when it is set.
func Open(ctx context.Context, runsDir string, i common.Intent) int {
	c := newCommon(ctx)
	if runsDir != "" {
		c.RunsDir = runsDir
	}
	first, _ := route(c, i)
	if first == nil {
		fmt.Fprintf(os.Stderr, "kvbench: no screen for %T\n", i)
		return 1
	}
	return execute(ctx, newModel(c, first))
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// RunSweep shows the sweep screen while the sweep runs and returns its
// exit code; leaving the screen stops the sweep (what ran is recorded,
// exit 130).
func RunSweep(ctx context.Context, o bsweep.Options) int {
	c := newCommon(ctx)
	screen := sweepscreen.Start(c, o)
	m := newModel(c, screen)
	m.noRunCode = 130
	// Known before it starts: however the program ends, execute stops
	// it, waits for it and prints its table.
	m.addSweep(screen.Session())
	code := execute(ctx, m)
	if s := screen.Session(); s.Started() && !m.ranOnce {
		// The program ended before the sweep did: it was stopped.
		return s.Wait()
	}
	return code
}
