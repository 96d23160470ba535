package run

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/stats"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/dialog"
	"github.com/kvbench/kvbench/screens/screentest"
	"github.com/kvbench/kvbench/theme"
)

func TestMain(m *testing.M) {
	screentest.PinColors()
	os.Exit(m.Run())
}

var t0 = screentest.Now

type source struct {
	events chan bench.Event
	snap   bench.Snapshot
}

func (s *source) Events() <-chan bench.Event       { return s.events }
func (s *source) Snapshot() bench.Snapshot         { return s.snap }
func (s *source) Run(context.Context) bench.Finish { return bench.Finish{} }
func (s *source) Abort()                           {}

func newScreen(src Source) *Model {
	return NewFromSource(screentest.Common(100, 30, t0), src, Info{Workload: "long-doc-qa", Engine: "builtin", Model: "m"})
}

func TestRingKeepsTheNewest(t *testing.T) {
	var r ring
	for i := range logCapacity + 250 {
		r.add(logLine{text: fmt.Sprint(i)})
	}
	if r.len() != logCapacity {
		t.Fatalf("len %d", r.len())
	}
	if r.at(0).text != "250" || r.at(logCapacity-1).text != fmt.Sprint(logCapacity+249) {
		t.Errorf("oldest %q newest %q", r.at(0).text, r.at(logCapacity-1).text)
	}
}

func TestProgress(t *testing.T) {
	s := bench.Snapshot{Phase: "measured", PhaseDone: 5, PhaseTotal: 20, Started: t0,
		PhaseStart: t0.Add(2 * time.Second), Elapsed: 12 * time.Second}
	pct, eta, ok := progressOf(s)
	// 5 of 20 in 10 s: 25 %, 30 s to go.
	if !ok || pct != 0.25 || eta != 30*time.Second {
		t.Errorf("by requests: %v %v %v", pct, eta, ok)
	}
	s = bench.Snapshot{Phase: "measuring", PhaseTotal: -1, PhaseLength: 60 * time.Second,
		Started: t0, PhaseStart: t0, Elapsed: 15 * time.Second}
	if pct, eta, ok = progressOf(s); !ok || pct != 0.25 || eta != 45*time.Second {
		t.Errorf("by time: %v %v %v", pct, eta, ok)
	}
	s = bench.Snapshot{Phase: "measured", PhaseTotal: -1}
	if _, _, ok = progressOf(s); ok {
		t.Error("progress without a total or a duration")
	}
}

// The event command takes everything already queued in one message and
// is re-armed by Update until the stream closes, then waits for the end.
func TestEventsAreBatchedAndRearmed(t *testing.T) {
	src := &source{events: make(chan bench.Event, 100)}
	m := newScreen(src)
	for i := range 50 {
		ttft := 0.01
		src.events <- bench.Event{Kind: bench.RequestFinished, Time: t0,
			Result: &sender.Result{RequestID: fmt.Sprintf("r%d", i), Successful: true, TTFT: &ttft, CacheState: "cold"}}
	}
	msg := m.waitEvents()().(eventsMsg)
	if len(msg.events) != 50 || msg.closed {
		t.Fatalf("batch of %d (closed %v), want all 50 queued", len(msg.events), msg.closed)
	}
	_, cmd := m.Update(msg)
	if cmd == nil {
		t.Fatal("the event command was not re-armed")
	}
	if m.log.len() != 50 {
		t.Errorf("log has %d lines", m.log.len())
	}
	close(src.events)
	if last := m.waitEvents()().(eventsMsg); !last.closed {
		t.Error("a closed stream is not reported")
	}
	// Once the stream has closed, the screen waits for the end instead.
	m.sess.run()
	_, cmd = m.Update(eventsMsg{id: m.id, closed: true})
	if cmd == nil {
		t.Fatal("nothing waits for the end after the stream closed")
	}
	if _, ok := cmd().(endedMsg); !ok {
		t.Error("re-armed after the stream closed")
	}
	// Another screen's events are not ours.
	if _, cmd := m.Update(eventsMsg{id: m.id + 1, events: msg.events}); cmd != nil || m.log.len() != 50 {
		t.Error("took another screen's events")
	}
}

func TestLogLines(t *testing.T) {
	st := theme.New(theme.Default)
	ttft := 0.0843
	ok, _ := fromEvent(bench.Event{Kind: bench.RequestFinished, Time: t0,
		Result: &sender.Result{RequestID: "doc3_q1", Phase: "measured", Successful: true, TTFT: &ttft, CacheState: "reused"}})
	if got := ok.render(st, 80); got != "09:30:00   doc3_q1  ttft   84.3 ms  reused" {
		t.Errorf("finished: %q", got)
	}
	e := "HTTP 500"
	bad, _ := fromEvent(bench.Event{Kind: bench.RequestFinished, Time: t0,
		Result: &sender.Result{RequestID: "doc4_q0", Phase: "measured", Error: &e}})
	if got := bad.render(st, 80); got != "09:30:00 ✗ doc4_q0 HTTP 500" || bad.kind != logError {
		t.Errorf("failed: %q", got)
	}
	ph, _ := fromEvent(bench.Event{Kind: bench.PhaseChanged, Time: t0, Phase: "measuring", Total: -1, Duration: time.Minute})
	if !strings.Contains(ph.text, "measuring: 1m0s") {
		t.Errorf("phase: %q", ph.text)
	}
	ml, _ := fromEvent(bench.Event{Kind: bench.LogLine, Text: "two\nlines", Warn: true})
	if ml.text != "two lines" || ml.kind != logWarn {
		t.Errorf("log line: %+v", ml)
	}
	if _, shown := fromEvent(bench.Event{Kind: bench.RequestSent}); shown {
		t.Error("a sent request is logged")
	}
}

// endingSource logs a line, closes its events and returns how it ended,
// in that order, as bench.Runner does.
type endingSource struct {
	source
	finish bench.Finish
}

func (s *endingSource) Run(context.Context) bench.Finish {
	s.events <- bench.Event{Kind: bench.LogLine, Text: "last words"}
	close(s.events)
	return s.finish
}

// How the run ended reaches the screen once, after its last event: the
// summary keeps the workload's sections, the log ends with the exit code
// and the failed check's reason, and the application hears of it once.
func TestEndComesOnceAfterTheLastEvent(t *testing.T) {
	sum := &record.Summary{}
	sum.Run.ID, sum.Run.FinishedAt = "x", "2026-05-04T09:30:20Z"
	sec := report.Section{Title: "Workload check", Rows: []report.Row{{Label: "Expected", Value: "yes"}}}
	src := &endingSource{source: source{events: make(chan bench.Event, 4)},
		finish: bench.Finish{Summary: sum, ExitCode: 1, Sections: []report.Section{sec}, Reasons: []string{"a mismatch"}}}
	m := newScreen(src)
	m.sess.run()
	var finished []FinishedMsg
	queue := []tea.Cmd{m.waitEvents()}
	for len(queue) > 0 {
		cmd := queue[0]
		queue = queue[1:]
		if cmd == nil {
			continue
		}
		switch msg := cmd().(type) {
		case tea.BatchMsg:
			queue = append(queue, msg...)
		case FinishedMsg:
			finished = append(finished, msg)
		case eventsMsg, endedMsg:
			_, next := m.Update(msg)
			queue = append(queue, next)
		}
	}
	if !m.finished || !strings.Contains(m.summaryText, "Workload check") {
		t.Fatalf("finished %v, summary without the section:\n%s", m.finished, m.summaryText)
	}
	if len(finished) != 1 || finished[0].Code != 1 {
		t.Errorf("the application heard of the end %d time(s): %+v", len(finished), finished)
	}
	n := m.log.len()
	if n < 2 || m.log.at(n-2).text != "last words" || m.log.at(n-1).text != "run finished (exit 1); a mismatch" {
		t.Errorf("log does not end with the last event then the end: %+v", m.log.at(n-1))
	}
	if got := m.log.at(n - 1).at; !got.Equal(t0.Add(20 * time.Second)) {
		t.Errorf("end logged at %v, want the summary's finish time", got)
	}
	// A second end changes nothing and is not announced again.
	if cmd := m.End(bench.Finish{ExitCode: 0}); cmd != nil || m.code != 1 {
		t.Errorf("a second end was taken: code %d", m.code)
	}
}

func TestChartsRedrawOnlyOnANewSecond(t *testing.T) {
	m := newScreen(&source{})
	var snap bench.Snapshot
	snap.Series = []stats.Point{{Second: 0, TTFTP50ms: 10, TTFTMaxms: 20, OutputTPS: 5, InputTPS: 50}}
	m.Feed(snap)
	first := m.ttftChart
	if strings.Contains(first, waiting) || first == "" {
		t.Fatalf("chart not drawn:\n%s", first)
	}
	m.ttftChart = "sentinel"
	m.Feed(snap) // the same second: no redraw
	if m.ttftChart != "sentinel" {
		t.Error("redrawn without a new second")
	}
	snap.Series = append(snap.Series, stats.Point{Second: 1, TTFTP50ms: 30, TTFTMaxms: 40})
	m.Feed(snap)
	if m.ttftChart == "sentinel" {
		t.Error("not redrawn for a new second")
	}
}

// The engine's own hit rate (from --metrics-url) shows when known.
func TestEngineHitRate(t *testing.T) {
	m := newScreen(&source{})
	m.Feed(bench.Snapshot{})
	if strings.Contains(m.View(), "engine hit rate") {
		t.Error("an unknown engine hit rate is shown")
	}
	r := 0.625
	m.Feed(bench.Snapshot{ServerHitRate: &r})
	if !strings.Contains(m.View(), "62.5 %") {
		t.Errorf("engine hit rate missing:\n%s", m.View())
	}
}

// A replayed trace's expected hits show next to the observed one.
func TestExpectedHitRatio(t *testing.T) {
	m := newScreen(&source{})
	m.Feed(bench.Snapshot{})
	if strings.Contains(m.View(), "expected") {
		t.Error("an expectation is shown for a workload without one")
	}
	obs, exp, lru := 0.25, 0.375, 0.125
	m.Feed(bench.Snapshot{Snapshot: stats.Snapshot{HitRatio: &obs}, ExpectedHitRatio: &exp})
	v := m.View()
	for _, want := range []string{"25.0 %", "expected hit", "37.5 %"} {
		if !strings.Contains(v, want) {
			t.Errorf("%q missing:\n%s", want, v)
		}
	}
	// With a KV budget, the LRU prediction is the one to compare with.
	m.Feed(bench.Snapshot{Snapshot: stats.Snapshot{HitRatio: &obs}, ExpectedHitRatio: &exp, ExpectedHitRatioLRU: &lru})
	v = m.View()
	for _, want := range []string{"25.0 %", "expected (LRU)", "12.5 %"} {
		if !strings.Contains(v, want) {
			t.Errorf("%q missing:\n%s", want, v)
		}
	}
}

func TestStopKeys(t *testing.T) {
	m := newScreen(&source{})
	q := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'q'}}
	if !m.InterceptsKey(q) || !m.InterceptsKey(tea.KeyMsg{Type: tea.KeyCtrlC}) {
		t.Fatal("q and ctrl+c are not kept during a run")
	}
	cmd := m.onKey(q)
	push, ok := cmd().(common.PushMsg)
	if !ok {
		t.Fatalf("q gave %T", cmd())
	}
	if _, ok := push.Screen.(*dialog.Confirm); !ok {
		t.Fatalf("q pushed %T", push.Screen)
	}
	m.End(bench.Finish{Summary: &record.Summary{}})
	if m.InterceptsKey(q) {
		t.Error("q is still kept after the run ended")
	}
}

// Both lines show from the first second, the largest value included
// (not pushed off the top of the chart).
func TestBothLinesDrawn(t *testing.T) {
	st := theme.New(theme.Default)
	for _, n := range []int{1, 5} {
		a, b := make([]float64, n), make([]float64, n)
		for i := range n {
			a[i], b[i] = 10, 20
		}
		out := drawChart(st, 30, 5, a, b, 0, len(a)-1, waiting)
		// p50 in box lines, max in braille dots: told apart without
		// colour, and each over the whole width.
		lines, dots := 0, 0
		for _, l := range strings.Split(out, "\n") {
			if strings.Count(l, "─") >= 20 {
				lines++
			}
			if strings.Count(l, "⠤")+strings.Count(l, "⠒")+strings.Count(l, "⠉")+strings.Count(l, "⣀") >= 20 {
				dots++
			}
		}
		if lines != 1 || dots != 1 {
			t.Errorf("%d second(s): %d rows of line, %d of dots; want the p50 and the max across the chart:\n%s", n, lines, dots, out)
		}
		if !strings.Contains(out, "0s") || !strings.Contains(out, fmt.Sprintf("%ds", max(n, 1))) {
			t.Errorf("%d second(s): no time labels:\n%s", n, out)
		}
	}
}

// TestClientPanelNeverKeepsUpWhileSlipping: a schedule that slips is
// said to, with its cause; the rate shows against its target and the
// running good fraction appears with an SLO.
func TestClientPanelNeverKeepsUpWhileSlipping(t *testing.T) {
	m := newScreen(&source{})
	target, got := 4.0, 0.5
	m.Feed(bench.Snapshot{Load: load.Live{TargetRate: &target, AchievedRate: &got}})
	if v := m.View(); !strings.Contains(v, "client keeps up") || !strings.Contains(v, "0.5 / 4.0 req/s") {
		t.Fatalf("on schedule:\n%s", v)
	}
	good := 0.875
	m.Feed(bench.Snapshot{Load: load.Live{TargetRate: &target, AchievedRate: &got, Slipping: true, Cause: "held back by the workload", GoodFraction: &good}})
	v := m.View()
	if strings.Contains(v, "keeps up") || !strings.Contains(v, "schedule slipping") || !strings.Contains(v, "87.5 %") {
		t.Fatalf("slipping:\n%s", v)
	}
}

// TestClientPanelTimingError: the timing error p99 shows for every run
// (n/a before a figure), a busy machine's note in place of "client keeps
// up", and the overload warning with its inflation figure; the compact
// line says the same.
func TestClientPanelTimingError(t *testing.T) {
	m := newScreen(&source{})
	if v := m.View(); !regexp.MustCompile(`timing error p99 +n/a`).MatchString(v) || !strings.Contains(v, "client keeps up") {
		t.Fatalf("before a figure:\n%s", v)
	}
	p := 0.41
	m.Feed(bench.Snapshot{TimingErrorP99Ms: &p, Note: "machine busy; timing error p99 0.41 ms"})
	v := m.View()
	if !regexp.MustCompile(`timing error p99 +0.41 ms`).MatchString(v) || !strings.Contains(v, "machine busy;") || strings.Contains(v, "keeps up") {
		t.Fatalf("busy machine:\n%s", v)
	}
	p = 7.2
	m.Feed(bench.Snapshot{TimingErrorP99Ms: &p, Note: "",
		Warning: "client overloaded, latencies may be inflated by up to 7.20 ms (timing error p99; max 41.0 ms): timing error p99 7.20 ms > 2.00 ms allowed"})
	v = m.View()
	if !strings.Contains(v, "client overloaded, latencies") || !strings.Contains(v, "inflated by up to 7.20") || strings.Contains(v, "keeps up") {
		t.Fatalf("overloaded:\n%s", v)
	}
	m.SetSize(60, 30)
	if v := m.View(); !strings.Contains(v, "overloaded, latencies may") || !strings.Contains(v, "timing error p99 7.20 ms") {
		t.Fatalf("compact:\n%s", v)
	}
	// A busy machine's note on the compact line carries the timing error:
	// it is said once.
	p = 0.41
	m.Feed(bench.Snapshot{TimingErrorP99Ms: &p, Note: "machine busy; timing error p99 0.41 ms"})
	v = ansi.Strip(m.View())
	flat := strings.Join(strings.Fields(v), " ")
	if n := strings.Count(flat, "timing error p99"); n != 1 || !strings.Contains(flat, "machine busy; timing error p99 0.41 ms") {
		t.Fatalf("compact, busy machine: %d times \"timing error p99\"\n%s", n, v)
	}
}

// TestMaxNeverBelowP50: in every column of the TTFT chart, the max's
// braille dots are never drawn in a row under the p50's line (ntcharts
// scales its box lines and braille differently: a max equal to or just
// above the p50 showed a row below it).
func TestMaxNeverBelowP50(t *testing.T) {
	st := theme.New(theme.Default)
	cases := [][2][]float64{
		{{12, 12, 12, 12, 8, 8, 8, 8, 8, 8, 8, 8, 14}, {12, 12, 12, 12, 9, 9, 9, 9, 9, 9, 9, 9, 16}},
		{{10, 10, 10, 10}, {10.5, 10.5, 10.5, 10.5}},
		{{8, 7.9, 8.2, 16, 8, 7.5, 8.1, 8.3}, {12, 11, 8.2, 16.5, 12, 9, 10, 16}},
		{{100, 50, 25, 12, 6}, {200, 60, 26, 30, 7}},
	}
	for _, c := range cases {
		for _, h := range []int{5, 8, 14} {
			out := drawChart(st, 40, h, c[0], c[1], 0, len(c[0])-1, waiting)
			rows := strings.Split(out, "\n")
			grid := make([][]rune, len(rows))
			for i, r := range rows {
				grid[i] = []rune(r)
			}
			for x := 0; x < 40; x++ {
				lineBottom := -1
				for y := range grid {
					if x < len(grid[y]) && strings.ContainsRune("─╭╮╰╯│╴╶", grid[y][x]) {
						lineBottom = y
					}
				}
				for y := range grid {
					if x < len(grid[y]) && grid[y][x] > 0x2800 && grid[y][x] <= 0x28ff && lineBottom >= 0 && y > lineBottom {
						t.Fatalf("max drawn under the p50 at column %d (height %d):\n%s", x, h, out)
					}
				}
			}
		}
	}
}
