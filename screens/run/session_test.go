package run

import (
	"context"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/record"
)

// emittingSource is a runner that, like bench.Runner, must deliver its
// last events before Run can return.
type emittingSource struct {
	source
	n int
}

func (s *emittingSource) Run(ctx context.Context) bench.Finish {
	defer close(s.events)
	for i := 0; i < s.n; i++ {
		s.events <- bench.Event{Kind: bench.LogLine, Text: "line"}
	}
	return bench.Finish{Summary: &record.Summary{}, ExitCode: 130}
}

func TestWaitDrainsEventsNobodyReads(t *testing.T) {
	src := &emittingSource{source: source{events: make(chan bench.Event)}, n: 100}
	s := NewSession(src, Info{})
	go s.run()
	deadline := time.Now().Add(20 * time.Second)
	for !s.Started() {
		if time.Now().After(deadline) {
			t.Fatal("the run never started")
		}
		time.Sleep(time.Millisecond)
	}
	done := make(chan int)
	go func() { done <- s.Wait() }()
	select {
	case code := <-done:
		if code != 130 {
			t.Fatalf("exit %d, want 130", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Wait never returned: the run blocked on events no screen reads")
	}
}
