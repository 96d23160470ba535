package sweep

import (
	"context"
	"io"
	"sync/atomic"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/load"
	bsweep "github.com/kvbench/kvbench/bench/sweep"
	"github.com/kvbench/kvbench/screens/common"
)

// Session owns one sweep's goroutine and its cancellation: the screen
// asks it to stop, the application stops it and waits for it before
// exiting, so the sweep's folder is always complete.
type Session struct {
	o      bsweep.Options
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	started atomic.Bool
	// Set before done is closed.
	file *bsweep.File
	dir  string
	code int
	err  error
}

// NewSession wraps a sweep's options; nothing runs until the screen
// starts it.
func NewSession(o bsweep.Options) *Session {
	ctx, cancel := context.WithCancel(context.Background())
	return &Session{o: o, ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// InfoOf describes a sweep for the screen's header and its curve's
// levels (the SLO's TTFT limit, the goodput target).
func InfoOf(o bsweep.Options) Info {
	info := Info{Workload: o.Config.Workload(), Dimension: o.Dimension, Values: o.Values, Search: o.Search,
		MaxCells: o.MaxCells}
	if slo, _ := load.ParseSLO(o.Config.Settings().Load.SLO); slo != nil {
		g := o.GoodputTarget
		info.SLO, info.GoodputTarget, info.TTFTSLOms = true, &g, slo.Millis().TTFTms
	}
	return info
}

// run runs the sweep once, reporting to events, and blocks until it has
// ended; it is called from a tea.Cmd. The last event is Done.
func (s *Session) run(events chan<- Event) {
	if !s.started.CompareAndSwap(false, true) {
		return
	}
	o := s.o
	o.CellStarted = func(i int, v float64, r *bench.Runner) {
		events <- Event{Kind: CellStarted, Index: i, Value: v, Runner: r}
	}
	o.Cell = func(i int, c bsweep.Cell) {
		events <- Event{Kind: CellDone, Index: i, Cell: c}
	}
	s.file, s.dir, s.code, s.err = bsweep.Run(s.ctx, o)
	events <- Event{Kind: Done, File: s.file, Dir: s.dir, Code: s.code, Err: s.err}
	close(s.done)
}

// Stop asks the sweep to stop: no new cell, the running cell stops
// dispatching, what ran is recorded (exit 130).
func (s *Session) Stop() { s.cancel() }

// Started reports whether the sweep was started.
func (s *Session) Started() bool { return s.started.Load() }

// Wait blocks until a started sweep has ended and returns its exit code
// (130 when it never started).
func (s *Session) Wait() int {
	if !s.Started() {
		return 130
	}
	<-s.done
	return s.code
}

// Report writes, once the sweep has ended, what headless mode prints:
// the cells' table on stdout and where the sweep is on stderr (and why
// it stopped, if it did).
func (s *Session) Report(stdout, stderr io.Writer) {
	if !s.Started() {
		return
	}
	<-s.done
	if s.file != nil && s.dir != "" {
		bsweep.WriteTable(stdout, s.file)
		io.WriteString(stderr, "kvbench: sweep in "+s.dir+"\n")
	}
	if msg := bsweep.CutMessage(s.file); msg != "" {
		io.WriteString(stderr, "kvbench: "+msg+"\n")
	}
	if s.err != nil {
		io.WriteString(stderr, "kvbench: "+s.err.Error()+"\n")
	}
}

// StartedMsg tells the application that a sweep is running, so it can
// stop and wait for it before exiting.
type StartedMsg struct{ Session *Session }

// Start returns the screen of a sweep it starts itself (the form's
// sweep choice, `kvbench sweep` on a terminal): the sweep runs as a
// command of the screen's Init.
func Start(c *common.Common, o bsweep.Options) *Model {
	events := make(chan Event, 4096)
	m := New(c, InfoOf(o), events)
	m.sess, m.feed = NewSession(o), events
	return m
}

// Session is the sweep the screen started (nil when it only shows one).
func (m *Model) Session() *Session { return m.sess }

// startCmd runs the sweep and announces it to the application.
func (m *Model) startCmd() tea.Cmd {
	s, events := m.sess, m.feed
	return tea.Batch(
		func() tea.Msg { return StartedMsg{Session: s} },
		func() tea.Msg { s.run(events); return nil },
	)
}
