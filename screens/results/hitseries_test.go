package results_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/bench/stats"
	"github.com/kvbench/kvbench/screens/results"
)

// withSeries adds a series to the run's summary as the collector writes
// it: every prompt cached for the first half of the seconds, nothing
// after (eviction started).
func withSeries(t *testing.T, rd string, seconds int) {
	t.Helper()
	var series []stats.SecondPoint
	for i := range seconds {
		p := stats.SecondPoint{Second: i, Requests: 4, PromptTokens: 8000}
		if i < seconds/2 {
			p.CachedTokens = 8000
		}
		r := float64(p.CachedTokens) / float64(p.PromptTokens)
		p.HitRatio = &r
		series = append(series, p)
	}
	path := filepath.Join(rd, record.SummaryFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["series"], _ = json.Marshal(series)
	b, _ = json.Marshal(m)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// chartsOf opens the run's Charts tab at w x h.
func chartsOf(t *testing.T, dir, rd string, w, h int) []string {
	t.Helper()
	d := results.NewDetail(newCommon(dir, w, h), rd)
	m, _ := drive(t, d, d.Init())
	m, _ = press(t, m, "2")
	return strings.Split(ansi.Strip(m.View()), "\n")
}

// The explorer's Charts tab draws the summary's hit ratio per second, so
// a working-set cell past the cliff shows from which second eviction
// starts: the line at 100 % on the left half and at 0 on the right
// half. On a short screen it takes the histogram's place; a summary
// without a series draws no such chart.
func TestChartsTabHitRatioPerSecond(t *testing.T) {
	dir := t.TempDir()
	rd := runstest.Write(t, dir, runstest.Spec{Name: "cliff", Started: t0, Requests: 40, ReusedEvery: 2, Summary: true})
	plain := runstest.Write(t, dir, runstest.Spec{Name: "plain", Started: t0.Add(1e9), Requests: 40, ReusedEvery: 2, Summary: true})
	withSeries(t, rd, 4)
	for _, sz := range [][2]int{{120, 40}, {80, 20}, {200, 60}} {
		lines := chartsOf(t, dir, rd, sz[0], sz[1])
		at := -1
		for i, l := range lines {
			if strings.HasPrefix(l, "Hit ratio per second (%)") {
				at = i
			}
		}
		if at < 0 {
			t.Fatalf("%dx%d: no hit ratio chart:\n%s", sz[0], sz[1], strings.Join(lines, "\n"))
		}
		// The chart's rows: from the "100" row down to the "0" row.
		var rows []string
		for _, l := range lines[at+1:] {
			if strings.Contains(l, "└") {
				break
			}
			rows = append(rows, l)
		}
		if len(rows) < 2 || !strings.HasPrefix(strings.TrimSpace(rows[0]), "100│") || !strings.HasPrefix(strings.TrimSpace(rows[len(rows)-1]), "0│") {
			t.Fatalf("%dx%d: chart rows %q", sz[0], sz[1], rows)
		}
		plot := func(row string) []rune { _, p, _ := strings.Cut(row, "│"); return []rune(p) }
		top, bottom := plot(rows[0]), plot(rows[len(rows)-1])
		dotsIn := func(r []rune, from, to int) int {
			n := 0
			for _, c := range r[min(from, len(r)):min(to, len(r))] {
				if c >= 0x2801 && c <= 0x28FF {
					n++
				}
			}
			return n
		}
		// The scatter's axis spans the run from its first submit; the
		// series' 4 seconds cover the measured part, hits before its
		// middle, none after.
		mid := len(top) / 2
		if dotsIn(top, 0, len(top)) == 0 || dotsIn(bottom, 0, len(bottom)) == 0 {
			t.Errorf("%dx%d: the line is not at 100 and at 0:\n%s", sz[0], sz[1], strings.Join(rows, "\n"))
		}
		if dotsIn(top, mid+len(top)/8, len(top)) > 0 {
			t.Errorf("%dx%d: hits drawn in the second half:\n%s", sz[0], sz[1], strings.Join(rows, "\n"))
		}
		hist := false
		for _, l := range lines {
			hist = hist || strings.ContainsAny(l, "▁▂▃▄▅▆▇█")
		}
		if short := sz[1] <= 20; hist == short {
			t.Errorf("%dx%d: histogram shown %v:\n%s", sz[0], sz[1], hist, strings.Join(lines, "\n"))
		}
	}
	for _, l := range chartsOf(t, dir, plain, 120, 40) {
		if strings.Contains(l, "Hit ratio per second") {
			t.Error("a summary without a series drew a hit ratio chart")
		}
	}
}
