package run

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/stats"
)

// evicting is a 30-second series whose hit ratio is 90 % until second
// 18 and 10 % after it: the cache ran out.
func evicting(withCounts bool) bench.Snapshot {
	var snap bench.Snapshot
	for i := range 30 {
		p := stats.Point{Second: i, Requests: 2, TTFTP50ms: 10, TTFTMaxms: 20, OutputTPS: 300, InputTPS: 2000}
		if withCounts {
			p.PromptTokens, p.CachedTokens = 1000, 900
			if i >= 18 {
				p.CachedTokens = 100
			}
		}
		snap.Series = append(snap.Series, p)
	}
	return snap
}

// hitRows are the rows of the hit ratio panel in v (its title row
// first), nil when there is none.
func hitRows(v string) []string {
	lines := strings.Split(ansi.Strip(v), "\n")
	for i, l := range lines {
		if strings.Contains(l, "Hit ratio per second (%)") {
			end := i + 1
			for end < len(lines) && !strings.HasPrefix(lines[end], "╰") {
				end++
			}
			return lines[i:end]
		}
	}
	return nil
}

// dotCol is the first column of row holding a braille dot, -1 for none.
func dotCol(row string) int {
	for i, r := range []rune(row) {
		if r > 0x2800 && r <= 0x28ff {
			return i
		}
	}
	return -1
}

// TestLiveHitRatioChart: a run whose seconds carry token counts shows
// the hit ratio per second under the charts at every size, high before
// the drop and at the bottom after it, the drop where second 18 is, and
// the latest second's ratio in the title. 80x21 is what the app leaves
// the screen of an 80x24 terminal: the chart row shrinks for it.
func TestLiveHitRatioChart(t *testing.T) {
	for _, sz := range [][2]int{{80, 21}, {80, 24}, {120, 40}, {200, 60}} {
		m := sized(sz[0], sz[1])
		m.Feed(evicting(true))
		v := m.View()
		rows := hitRows(v)
		if len(rows) < 4 {
			t.Fatalf("%dx%d: no hit ratio chart:\n%s", sz[0], sz[1], v)
		}
		if !strings.Contains(rows[0], "last 10 %") {
			t.Errorf("%dx%d: the title has no latest ratio: %q", sz[0], sz[1], rows[0])
		}
		top, bottom := rows[1], rows[len(rows)-2]
		if !strings.Contains(top, "100│") || !strings.Contains(bottom, "  0│") {
			t.Errorf("%dx%d: the axis is not 0 to 100 %%:\n%s", sz[0], sz[1], strings.Join(rows, "\n"))
		}
		// 90 % in the top row from the left edge, 10 % in the bottom one
		// from the drop on; the drop at 18/30 of the width.
		x0 := strings.Index(top, "│") // the panel's border
		axis := len([]rune(top[:x0])) + 5
		hi, lo := dotCol(top), dotCol(bottom)
		if hi != axis+1 && hi != axis {
			t.Errorf("%dx%d: 90 %% does not start at the left edge (column %d, axis %d):\n%s", sz[0], sz[1], hi, axis, strings.Join(rows, "\n"))
		}
		gw := sz[0] - 2 - 2 - 5 - 1
		want := axis + gw*18/29
		if lo < want-2 || lo > want+2 {
			t.Errorf("%dx%d: the drop is at column %d, want about %d:\n%s", sz[0], sz[1], lo, want, strings.Join(rows, "\n"))
		}
		if strings.ContainsAny(ansi.Cut(top, lo+2, sz[0]-2), "⠁⠂⠄⠈⠐⠠⡀⢀⠉⠒⠤⣀") {
			t.Errorf("%dx%d: the top row goes on after the drop:\n%s", sz[0], sz[1], strings.Join(rows, "\n"))
		}
		for i, l := range strings.Split(v, "\n") {
			if w := ansi.StringWidth(l); w > sz[0] {
				t.Errorf("%dx%d: line %d is %d cells", sz[0], sz[1], i, w)
			}
		}
		if n := len(strings.Split(v, "\n")); n > sz[1] {
			t.Errorf("%dx%d: %d lines", sz[0], sz[1], n)
		}
	}
}

// TestNoHitChartWithoutCounts: an engine that reports no cached tokens
// leaves the screen as it was, the log in its place.
func TestNoHitChartWithoutCounts(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		with, without := sized(sz[0], sz[1]), sized(sz[0], sz[1])
		with.Feed(evicting(true))
		without.Feed(evicting(false))
		if hitRows(without.View()) != nil || without.hitChart != "" {
			t.Errorf("%dx%d: a hit chart without counts:\n%s", sz[0], sz[1], without.View())
		}
		if without.logHeight() <= with.logHeight() || !strings.Contains(without.View(), "Log") {
			t.Errorf("%dx%d: the log has %d rows without the chart, %d with it", sz[0], sz[1], without.logHeight(), with.logHeight())
		}
	}
}

// TestFocusedLogTakesTheHitRows: on a short screen the hit chart takes
// the log's rows; tab gives them back to the log, and again to the chart.
func TestFocusedLogTakesTheHitRows(t *testing.T) {
	for _, h := range []int{21, 24} {
		m := sized(80, h)
		m.Feed(evicting(true))
		if hitRows(m.View()) == nil || strings.Contains(m.View(), "─ Log ─") {
			t.Fatalf("80x%d: the chart should take the log's rows:\n%s", h, m.View())
		}
		m.Update(tea.KeyMsg{Type: tea.KeyTab})
		if v := m.View(); hitRows(v) != nil || !strings.Contains(v, "─ Log ─") {
			t.Fatalf("80x%d: the focused log is not shown:\n%s", h, v)
		}
		m.Update(tea.KeyMsg{Type: tea.KeyTab})
		if hitRows(m.View()) == nil {
			t.Fatalf("80x%d: the chart did not come back:\n%s", h, m.View())
		}
	}
}

// TestFinishedHitRatioChart: the finished screen keeps the hit ratio
// per second beside the summary, between the charts and the log.
func TestFinishedHitRatioChart(t *testing.T) {
	m := sized(200, 60)
	m.Feed(evicting(true))
	m.End(bench.Finish{Summary: headlineSummary()})
	v := m.View()
	rows := hitRows(v)
	if len(rows) < 5 || !strings.Contains(v, "Log") {
		t.Fatalf("no hit chart on the finished screen:\n%s", v)
	}
	if strings.Index(v, "output tok/s") > strings.Index(v, "Hit ratio per second") || strings.Index(v, "Hit ratio per second") > strings.Index(v, "─ Log ─") {
		t.Errorf("the hit chart is not between the charts and the log:\n%s", v)
	}
	n := sized(200, 60)
	n.Feed(evicting(false))
	n.End(bench.Finish{Summary: headlineSummary()})
	if hitRows(n.View()) != nil {
		t.Errorf("a hit chart without counts:\n%s", n.View())
	}
}

// TestHitChartShowsTheNewestSeconds: a run longer than the chart is
// wide shows its newest seconds, one column each, the drop where its
// second is; a second without counts is a gap, not a 0.
func TestHitChartShowsTheNewestSeconds(t *testing.T) {
	var series []stats.Point
	for i := range 300 {
		p := stats.Point{Second: i, Requests: 1, PromptTokens: 100, CachedTokens: 100}
		switch {
		case i == 250:
			p.PromptTokens, p.CachedTokens = 0, 0 // no counts
		case i >= 280:
			p.CachedTokens = 0
		}
		series = append(series, p)
	}
	d := seriesData(series)
	m := sized(80, 24)
	out := ansi.Strip(drawHits(m.c.Styles, 74, 6, d, waiting))
	rows := strings.Split(out, "\n")
	if len(rows) != 6 {
		t.Fatalf("%d rows:\n%s", len(rows), out)
	}
	gw := 74 - 4 - 1 // label and axis, the right margin
	from := 300 - gw
	top, bottom := []rune(rows[0]), []rune(rows[4])
	col := func(sec int) int { return 4 + (2*(sec-from)*(2*gw-1)/(gw-1))/4 }
	if c := dotCol(rows[4]); c < col(280)-1 || c > col(280)+1 {
		t.Errorf("the drop is at column %d, want %d:\n%s", c, col(280), out)
	}
	// The level line is whole (⠉) but for the gap's dot column.
	gap := -1
	for c := 4; c < col(280)-1; c++ {
		if top[c] != '⠉' {
			gap = c
			break
		}
	}
	if gap < col(250)-1 || gap > col(250)+1 || bottom[gap] != ' ' {
		t.Errorf("second 250 (no counts): the first break in the line is at column %d, want %d:\n%s", gap, col(250), out)
	}
	if !strings.HasSuffix(strings.TrimSpace(rows[5]), "05:00") {
		t.Errorf("the time axis does not end at the run's last second: %q", rows[5])
	}
}
