package visual

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/bench/runs/seriestest"
)

var tT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)

// A comparison report opens with the tested rows: right under the
// header and its warnings, before the charts, labelled as the text
// labels them, with the words of the text.
func TestComparisonReportRows(t *testing.T) {
	dir := t.TempDir()
	a := runstest.Write(t, dir, runstest.Spec{Name: "a", Started: tT0, Requests: 60, ReusedEvery: 2, JitterMs: 3, JitterSeed: 1, Summary: true})
	b := runstest.Write(t, dir, runstest.Spec{Name: "b", Started: tT0.Add(time.Hour), Requests: 60, ReusedEvery: 5, JitterMs: 3, JitterSeed: 2, Summary: true})
	rep, err := Open(dir, []string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.HTML(&buf); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	selfContained(t, html)
	rows, charts, cache := strings.Index(html, "What changed: B against A"), strings.Index(html, `id="charts"`), strings.Index(html, "The cache served 24.0 pp more")
	if rows < 0 || charts < 0 || cache < 0 || !(cache < rows && rows < charts) {
		t.Fatalf("cache note %d, rows %d, charts %d", cache, rows, charts)
	}
	hit := regexp.MustCompile(`<td class="label">Hit ratio</td>.*?</tr>`).FindString(html)
	if !strings.Contains(hit, "24.0pp<") || !strings.Contains(hit, `class="better">better`) {
		t.Errorf("hit ratio row: %s", hit)
	}
	cold := regexp.MustCompile(`<td class="label">TTFT p50, cold requests</td>.*?</tr>`).FindString(html)
	if !strings.Contains(cold, ">~<") {
		t.Errorf("cold TTFT row: %s", cold)
	}
	if strings.Contains(html[rows:charts], "ttft_p50") {
		t.Error("a raw metric key is visible text")
	}
}

// A series report is its runs and summary; two series are compared run
// by run.
func TestSeriesReport(t *testing.T) {
	dir := t.TempDir()
	s1 := seriestest.Write(t, dir, "base", 5, runstest.Spec{Started: tT0, Requests: 20, BaseTTFTms: 100, JitterMs: 2, Summary: true})
	s2 := seriestest.Write(t, dir, "slow", 5, runstest.Spec{Started: tT0.Add(time.Hour), Requests: 20, BaseTTFTms: 130, JitterMs: 2, Summary: true})
	one, err := Open(dir, []string{filepath.Base(s1)})
	if err != nil {
		t.Fatal(err)
	}
	if got := one.DefaultPath("html", ""); got != filepath.Join(s1, "report.html") {
		t.Errorf("default path %s", got)
	}
	var buf bytes.Buffer
	if err := one.HTML(&buf); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	selfContained(t, html)
	for _, want := range []string{"kvbench report · Series", "Runs of " + filepath.Base(s1), "Summary of " + filepath.Base(s1) + " over its runs",
		"95% interval of the median", "5 of 5"} {
		if !strings.Contains(html, want) {
			t.Errorf("series report lacks %q", want)
		}
	}
	two, err := Open(dir, []string{s1, s2})
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := two.HTML(&buf); err != nil {
		t.Fatal(err)
	}
	html = buf.String()
	row := regexp.MustCompile(`<td class="label">TTFT p50</td>.*?</tr>`).FindString(html)
	if !strings.Contains(html, "What changed: B against A ("+filepath.Base(s1)+", run by run)") || !strings.Contains(row, ">worse<") {
		t.Errorf("series comparison row: %s", row)
	}
	run := runstest.Write(t, dir, runstest.Spec{Name: "r", Started: tT0.Add(2 * time.Hour), Requests: 3, Summary: true})
	if _, err := Open(dir, []string{s1, run}); err == nil || !strings.Contains(err.Error(), "one kind") {
		t.Errorf("a series with a run: %v", err)
	}
}
