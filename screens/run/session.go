// Package run is the live run screen: a header with the phase and a
// progress bar, TTFT and throughput charts fed one point per second from
// the runner's snapshot, counters, the cache panel, client health and a
// rolling log of the runner's events; when the run ends, its summary.
package run

import (
	"context"
	"sync/atomic"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/textclean"
	"github.com/kvbench/kvbench/screens/common"
)

// Source is what the screen needs of a runner (*bench.Runner is one);
// tests give a scripted one. Events is closed when the run has ended,
// before Run returns how it ended.
type Source interface {
	Events() <-chan bench.Event
	Snapshot() bench.Snapshot
	Run(ctx context.Context) bench.Finish
	Abort()
}

// Info describes the run in the header.
type Info struct {
	Workload, Engine, Model string
	ID, Dir                 string
	// Config is the resolved config, for "run again"; nil hides the key.
	Config *config.Config
}

// InfoOf describes a prepared runner.
func InfoOf(r *bench.Runner) Info {
	p := r.Prepared()
	return Info{
		Workload: p.Config.Workload(),
		Engine:   textclean.Line(p.DisplayURL()), // shown in the header
		Model:    p.RequestModel(),               // cleaned in the config (a label)
		ID:       r.ID(),
		Dir:      r.Dir(),
		Config:   p.Config.Clone(),
	}
}

// Session owns one run's goroutine and its cancellation: the screen asks
// it to stop, the application waits for it before exiting so the record
// is always complete.
type Session struct {
	src    Source
	info   Info
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	started atomic.Bool
	finish  bench.Finish // set before done is closed
}

// NewSession wraps a source; nothing runs until the screen starts it.
func NewSession(src Source, info Info) *Session {
	ctx, cancel := context.WithCancel(context.Background())
	return &Session{src: src, info: info, ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// Info describes the run.
func (s *Session) Info() Info { return s.info }

// run runs the source once and blocks until it has ended; it is called
// from a tea.Cmd.
func (s *Session) run() {
	if !s.started.CompareAndSwap(false, true) {
		return
	}
	s.finish = s.src.Run(s.ctx)
	close(s.done)
}

// result waits for the run's end and returns how it ended.
func (s *Session) result() bench.Finish {
	<-s.done
	return s.finish
}

// Stop asks the run to stop dispatching; in-flight requests finish and
// the partial record is written (exit 130).
func (s *Session) Stop() { s.cancel() }

// Abort stops at once: every request in flight is cancelled.
func (s *Session) Abort() {
	s.cancel()
	s.src.Abort()
}

// Started reports whether the run was started.
func (s *Session) Started() bool { return s.started.Load() }

// Wait blocks until a started run has ended and returns its exit code
// (130 when it never started).
//
// Wait is for after the program has ended: it drains the runner's events
// itself, since no screen reads them any more and the runner must be able
// to deliver its last ones to finish.
func (s *Session) Wait() int {
	if !s.Started() {
		return 130
	}
	go func() {
		for range s.src.Events() {
		}
	}()
	return s.result().ExitCode
}

// StartedMsg tells the application that a session is running, so it can
// stop and wait for it before exiting.
type StartedMsg struct{ Session *Session }

// FinishedMsg reports the end of a run and its exit code, with what the
// command line prints once the full screen is gone: the summary (Text is
// the text one, the workload's sections included) and the run folder.
type FinishedMsg struct {
	Session *Session
	Code    int
	Summary *record.Summary
	Text    string
	Dir     string
}

// PreparedMsg, Prepare and HandOver live in screens/common, which every
// screen that starts a run imports (a screen never imports another).
type PreparedMsg = common.PreparedMsg

// Prepare is common.Prepare.
func Prepare(c *common.Common, to common.ID, cfg *config.Config) tea.Cmd {
	return common.Prepare(c, to, cfg)
}

// HandOver is common.HandOver.
func HandOver(msg PreparedMsg) tea.Cmd { return common.HandOver(msg) }
