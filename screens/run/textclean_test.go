package run

import (
	"testing"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/internal/textclean/cleantest"
	"github.com/kvbench/kvbench/screens/screentest"
)

// The run screen's log quotes engines' errors, the runner's lines and
// model ids: a line holding terminal controls is drawn cleaned.
func TestLogLinesAreCleaned(t *testing.T) {
	src := &source{events: make(chan bench.Event, 10)}
	m := NewFromSource(screentest.Common(250, 40, t0), src, Info{Workload: "long-doc-qa", Engine: "builtin", Model: "m"})
	e, detail := cleantest.Text, "body: "+cleantest.Text
	src.events <- bench.Event{Kind: bench.LogLine, Time: t0, Text: "engine said " + cleantest.Text, Warn: true}
	src.events <- bench.Event{Kind: bench.RequestFinished, Time: t0,
		Result: &sender.Result{RequestID: "doc1_q0", Phase: "measured", Error: &e, ErrorDetail: &detail}}
	m.Update(m.waitEvents()())
	if m.log.len() != 2 {
		t.Fatalf("%d log lines, want 2", m.log.len())
	}
	for i := range m.log.len() {
		cleantest.Check(t, "log line", m.log.at(i).text)
	}
	cleantest.Check(t, "run screen", m.View())

	m.log.add(logLine{at: t0, kind: logWarn, text: "cannot auto-detect the model: " + cleantest.Text})
	cleantest.Check(t, "a line the screen adds", m.log.at(2).text)
}
