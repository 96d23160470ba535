package results_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/screens/results"
)

func flatView(v string) string { return strings.Join(strings.Fields(ansi.Strip(v)), " ") }

// TestSummaryLeadsWithTheHeadline: the Summary tab's first line is the
// summary's headline (the terminal's and the report's words), whole at
// 60, 80 and 200 columns; figures are labelled as the text summary
// labels them; the Charts tab counts the measured requests the Summary
// counts, with the summary's p90, the warmup a series of its own.
func TestSummaryLeadsWithTheHeadline(t *testing.T) {
	dir := t.TempDir()
	p := runstest.Write(t, dir, runstest.Spec{Name: "story", Started: t0, Requests: 10, Warmup: 5, ReusedEvery: 5, Summary: true, Headline: true})
	s, err := record.ReadSummary(p)
	if err != nil {
		t.Fatal(err)
	}
	if s.Headline == nil {
		t.Fatal("the fixture has no headline")
	}
	line := report.HeadlineLine(s.Headline)
	for _, sz := range [][2]int{{60, 20}, {80, 24}, {200, 60}} {
		d := results.NewDetail(newCommon(dir, sz[0], sz[1]), p)
		m, _ := drive(t, d, d.Init())
		v := m.View()
		lines := strings.Split(ansi.Strip(v), "\n")
		if len(lines) < 4 || !strings.HasPrefix(lines[3], "expectation") && !strings.HasPrefix(lines[3], "no expectation") {
			t.Fatalf("%dx%d: the headline is not the Summary's first line:\n%s", sz[0], sz[1], v)
		}
		if !strings.Contains(flatView(v), line) {
			t.Errorf("%dx%d: the headline %q is not whole:\n%s", sz[0], sz[1], line, v)
		}
		for i, l := range lines {
			if ansi.StringWidth(l) > sz[0] {
				t.Errorf("%dx%d: line %d is %d cells", sz[0], sz[1], i, ansi.StringWidth(l))
			}
		}
	}
	d := results.NewDetail(newCommon(dir, 200, 60), p)
	m, _ := drive(t, d, d.Init())
	sum := flatView(m.View())
	p90 := report.Figure{Unit: "ms"}.ShowNumber(s.Results.P90TTFTms)
	for _, want := range []string{"P90 TTFT " + p90 + " ms", "Benchmark duration", "Total input tokens", "Hit ratio", "Warmup requests 5"} {
		if !strings.Contains(sum, want) {
			t.Errorf("the Summary lacks %q:\n%s", want, m.View())
		}
	}
	if regexp.MustCompile(`\b[a-z]+_[a-z_]+\.[a-z0-9_]+\b`).MatchString(sum) {
		t.Errorf("a raw key in the Summary:\n%s", m.View())
	}
	m, _ = press(t, m, "2")
	charts := flatView(m.View())
	want := fmt.Sprintf("%d measured requests: p50 %s · p90 %s", s.Results.SuccessfulRequests, report.Figure{Unit: "ms"}.ShowNumber(s.Results.P50TTFTms), p90)
	if !strings.Contains(charts, want) {
		t.Errorf("the Charts tab does not agree with the Summary (%q):\n%s", want, m.View())
	}
	if !strings.Contains(charts, "warmup 5") {
		t.Errorf("the warmup is not a series of its own:\n%s", m.View())
	}
	// A summary written before headlines shows none: no zeros.
	old := runstest.Write(t, dir, runstest.Spec{Name: "old", Started: t0.Add(1), Requests: 10, Summary: true})
	d = results.NewDetail(newCommon(dir, 80, 24), old)
	m, _ = drive(t, d, d.Init())
	if v := flatView(m.View()); strings.Contains(v, "TTFT cold") || strings.Contains(v, "limited by") || strings.Contains(v, "0.0x") {
		t.Errorf("an old summary shows a headline:\n%s", m.View())
	}
}
