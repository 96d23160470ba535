package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/internal/textclean/cleantest"
)

// The headless progress quotes the runner's log and engines' errors: each
// line is printed cleaned.
func TestHeadlessProgressIsCleaned(t *testing.T) {
	var stderr bytes.Buffer
	p := &progress{o: HeadlessOptions{Stderr: &stderr}}
	e, detail := cleantest.Text, "body "+cleantest.Text
	p.event(bench.Event{Kind: bench.LogLine, Text: "engine said " + cleantest.Text, Warn: true})
	p.event(bench.Event{Kind: bench.RequestFinished, Result: &sender.Result{RequestID: "r1", Error: &e, ErrorDetail: &detail}})
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), stderr.String())
	}
	for _, l := range lines {
		cleantest.Check(t, "progress line", l)
	}
}
