package app

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/screens/run"
	"github.com/kvbench/kvbench/screens/screentest"
)

// stoppableSource runs until its context is cancelled, then finishes as
// the runner does after an interrupt: the event channel closed, then an
// interrupted summary and exit 130 returned.
type stoppableSource struct {
	events  chan bench.Event
	aborted atomic.Bool
	stopped atomic.Bool
}

func newStoppable() *stoppableSource {
	return &stoppableSource{events: make(chan bench.Event, 16)}
}

func (s *stoppableSource) Events() <-chan bench.Event { return s.events }
func (s *stoppableSource) Snapshot() bench.Snapshot   { return liveSnapshot() }
func (s *stoppableSource) Abort()                     { s.aborted.Store(true) }

func (s *stoppableSource) Run(ctx context.Context) bench.Finish {
	s.events <- bench.Event{Kind: bench.RunStarted, Time: t0}
	s.events <- bench.Event{Kind: bench.PhaseChanged, Time: t0, Phase: "measured", Total: 20}
	<-ctx.Done()
	s.stopped.Store(true)
	sum := finishedSummary()
	sum.Run.Interrupted, sum.Run.ExitCode = true, 130
	s.events <- bench.Event{Kind: bench.LogLine, Time: t0, Text: "last words"}
	close(s.events)
	return bench.Finish{Summary: sum, ExitCode: 130}
}

func TestStopAsksThenSavesPartial(t *testing.T) {
	c := testCommon("/runs", "/cfg")
	src := newStoppable()
	screen := run.NewFromSource(c, src, runInfo())
	m := newModel(c, screen)
	m.noRunCode = 130
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	var tr transcript

	tr.waitFor(t, tm, "in flight", "phase measured")
	tm.Send(screentest.Key("q"))
	tr.waitFor(t, tm, "Stop the run?", "partial results are saved")
	tm.Send(screentest.Key("n")) // changed my mind
	tr.waitFor(t, tm, "q/ctrl+c stop")
	if src.stopped.Load() {
		t.Fatal("answering no stopped the run")
	}
	tm.Send(screentest.Key("q"))
	tr.waitFor(t, tm, "Stop the run?")
	tm.Send(screentest.Key("y"))
	tr.waitFor(t, tm, "interrupted (partial results saved)", "Engine Benchmark Result")
	tm.Send(screentest.Key("q")) // the run screen is the only one: q quits
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*model)
	if fm.code != 130 {
		t.Errorf("exit %d, want 130 for a stopped run", fm.code)
	}
	if src.aborted.Load() {
		t.Error("a graceful stop aborted the requests in flight")
	}
	if code := screen.Session().Wait(); code != 130 {
		t.Errorf("session code %d", code)
	}
}

func TestCtrlCTwiceStopsAtOnce(t *testing.T) {
	c := testCommon("/runs", "/cfg")
	src := newStoppable()
	m := newModel(c, run.NewFromSource(c, src, runInfo()))
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	var tr transcript

	tr.waitFor(t, tm, "in flight")
	tm.Send(screentest.Key("ctrl+c"))
	tr.waitFor(t, tm, "Stop the run?", "Press ctrl+c again")
	tm.Send(screentest.Key("ctrl+c"))
	// The program ends by itself once the partial record is written.
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*model)
	if !src.aborted.Load() || !src.stopped.Load() {
		t.Errorf("aborted %v stopped %v, want both", src.aborted.Load(), src.stopped.Load())
	}
	if fm.code != 130 {
		t.Errorf("exit %d, want 130", fm.code)
	}
}
