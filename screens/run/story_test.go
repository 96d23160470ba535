package run

import (
	"math"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/stats"
	"github.com/kvbench/kvbench/screens/screentest"
	"github.com/kvbench/kvbench/theme"
)

var sizes = [][2]int{{80, 24}, {60, 20}, {200, 60}}

func sized(w, h int) *Model {
	return NewFromSource(screentest.Common(w, h, t0), &source{}, Info{Workload: "long-doc-qa", Engine: "builtin", Model: "m"})
}

// flat is a view's text on one line, wrapping undone: what a reader
// reads, whatever the width.
func flat(v string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(ansi.Strip(v), "│", " ")), " ")
}

func fptr(v float64) *float64 { return &v }

// column is the cells from..to of every line of v.
func column(v string, from, to int) string {
	lines := strings.Split(v, "\n")
	for i, l := range lines {
		lines[i] = ansi.Cut(l, from, to)
	}
	return strings.Join(lines, "\n")
}

const limit = "the load was not delivered: client overloaded: machine CPU > 95% busy for 3 s (max 100%) (latencies may be inflated)"

func headlineSummary() *record.Summary {
	met, base := record.VerdictMet, stats.BaselineWarmupCold
	s := &record.Summary{}
	s.Run.ID = "20261201-193736-long-doc-qa"
	s.Headline = &record.Headline{Verdict: &met, HitRatio: fptr(0.9857), Baseline: &base, ColdTTFTP50ms: fptr(107.01),
		ReusedTTFTP50ms: fptr(7.92), Speedup: fptr(13.5), SpeedupCI95: &[2]float64{9.7, 14.4}, LimitedBy: []string{limit}}
	return s
}

// TestFinishedScreenLeadsWithTheHeadline: once the run ends, the line
// under the status is the summary's headline (the text summary's and
// the report's words), then what limited the run, whole at every size.
func TestFinishedScreenLeadsWithTheHeadline(t *testing.T) {
	sum := headlineSummary()
	want := report.HeadlineLine(sum.Headline)
	for _, sz := range sizes {
		m := sized(sz[0], sz[1])
		m.End(bench.Finish{Summary: sum})
		v := m.View()
		lines := strings.Split(ansi.Strip(v), "\n")
		if len(lines) < 2 || !strings.HasPrefix(lines[1], "expectation met · hit 98.6% · TTFT cold 107 ms") {
			t.Fatalf("%dx%d: the headline is not first:\n%s", sz[0], sz[1], v)
		}
		f := flat(v)
		for _, part := range []string{want, "! limited by: " + limit} {
			if !strings.Contains(f, part) {
				t.Errorf("%dx%d: %q is not there whole:\n%s", sz[0], sz[1], part, v)
			}
		}
		if h := strings.Index(f, want); h > strings.Index(f, "Summary") {
			t.Errorf("%dx%d: the headline comes after the summary", sz[0], sz[1])
		}
		for i, l := range lines {
			if ansi.StringWidth(l) > sz[0] {
				t.Errorf("%dx%d: line %d is %d cells", sz[0], sz[1], i, ansi.StringWidth(l))
			}
		}
	}
	// A summary written before headlines: none, and no zeros for one.
	m := sized(80, 24)
	m.End(bench.Finish{Summary: &record.Summary{}})
	if v := flat(m.View()); strings.Contains(v, "TTFT cold") || strings.Contains(v, "0.0x") || strings.Contains(v, "limited by") {
		t.Errorf("a summary without a headline shows one:\n%s", m.View())
	}
}

// TestMessagesWrapAtEveryWidth: an overload warning and a long error in
// the log are read whole at 60, 80 and 200 columns, and the narrow
// panels say "client" once.
func TestMessagesWrapAtEveryWidth(t *testing.T) {
	warning := "client overloaded, latencies may be inflated: machine CPU > 95% busy for 3 s (max 100%)"
	detail := "preflight: GET http://127.0.0.1:9/v1/models: connection refused: is the engine running and listening on 127.0.0.1:9? e.g. http://localhost:8000"
	code := "connect"
	for _, sz := range sizes {
		m := sized(sz[0], sz[1])
		m.Feed(bench.Snapshot{Warning: warning}, bench.Event{Kind: bench.RequestFinished, Time: t0,
			Result: &sender.Result{RequestID: "doc0_q0", Phase: "measured", Error: &code, ErrorDetail: &detail}})
		v := m.View()
		f := flat(v)
		// The log's entry whole, or, in a log too short for it, its
		// beginning and a mark that there is more (tab scrolls it).
		if !strings.Contains(f, "doc0_q0 connect: "+detail) && !(strings.Contains(f, "doc0_q0 connect: preflight:") && strings.Contains(f, "…")) {
			t.Errorf("%dx%d: the log's error is cut:\n%s", sz[0], sz[1], v)
		}
		if strings.Contains(f, "client client") {
			t.Errorf("%dx%d: \"client client\":\n%s", sz[0], sz[1], v)
		}
		// The Client panel (the right third, or the last lines of the
		// narrow layout): the warning whole, or its first words and
		// where the rest is.
		client := f
		if sz[0] >= compactWidth {
			client = flat(column(m.panelsView(), 2*(sz[0]/3), sz[0]))
		}
		if !strings.Contains(client, warning) && !strings.Contains(client, "overloaded (see the log)") && !strings.Contains(client, "(reasons in the log)") {
			t.Errorf("%dx%d: the warning is cut:\n%s", sz[0], sz[1], v)
		}
		if sz[0] != 80 && !strings.Contains(client, warning) {
			t.Errorf("%dx%d has room for the whole warning:\n%s", sz[0], sz[1], v)
		}
		for i, l := range strings.Split(v, "\n") {
			if ansi.StringWidth(l) > sz[0] {
				t.Errorf("%dx%d: line %d is %d cells", sz[0], sz[1], i, ansi.StringWidth(l))
			}
		}
	}
}

// TestOutputHasItsOwnAxis: output tok/s is drawn on its own scale, not
// under an input rate fifty times larger; input has a chart of its own
// on a wide terminal, and its figure in the title on a narrow one.
func TestOutputHasItsOwnAxis(t *testing.T) {
	var snap bench.Snapshot
	for i := range 10 {
		snap.Series = append(snap.Series, stats.Point{Second: i, Requests: 1, TTFTP50ms: 10, TTFTMaxms: 20, OutputTPS: 300 + float64(i), InputTPS: 20000})
	}
	for _, w := range []int{80, 140} {
		m := sized(w, 30)
		m.Feed(snap)
		// Output near the top of its own chart, not flat on zero under
		// a scale fifty times larger.
		rows := strings.Split(ansi.Strip(m.outChart), "\n")
		if len(rows) < 4 || !strings.Contains(rows[0]+rows[1], "─") || !strings.Contains(rows[0], "30") {
			t.Errorf("%d columns: the output chart's axis is not its own:\n%s", w, m.outChart)
		}
		v := flat(m.View())
		switch w {
		case 80:
			if m.inChart != "" || !strings.Contains(v, "output tok/s · input 20k tok/s") {
				t.Errorf("80 columns: input is not in the output chart's title:\n%s", m.View())
			}
		case 140:
			if in := strings.Split(ansi.Strip(m.inChart), "\n"); len(in) < 4 || !strings.Contains(in[0], "k") || !strings.Contains(in[0]+in[1], "─") || !strings.Contains(v, "input tok/s") {
				t.Errorf("140 columns: no input chart:\n%s", m.View())
			}
		}
	}
}

// TestTTFTGapIsNoZero: a second in which no request had a first token
// leaves a gap in the TTFT chart rather than a line down to 0.
func TestTTFTGapIsNoZero(t *testing.T) {
	st := theme.New(theme.Default)
	d := seriesData([]stats.Point{
		{Second: 0, Requests: 1, TTFTP50ms: 40, TTFTMaxms: 50},
		{Second: 1, Requests: 0},
		{Second: 2, Requests: 1, TTFTP50ms: 40, TTFTMaxms: 50},
	})
	if !math.IsNaN(d.ttftP50[1]) || !math.IsNaN(d.ttftMax[1]) {
		t.Fatalf("an empty second has a TTFT: %v", d.ttftP50)
	}
	out := drawChart(st, 40, 8, d.ttftP50, d.ttftMax, d.first, d.last, waiting)
	rows := strings.Split(out, "\n")
	bottom := rows[len(rows)-2] // the row over the time axis
	if strings.ContainsAny(bottom, "─╭╮╰╯") {
		t.Errorf("the gap is drawn at 0:\n%s", out)
	}
	if strings.Count(out, "─") < 10 {
		t.Errorf("the seconds around the gap are not drawn:\n%s", out)
	}
}
