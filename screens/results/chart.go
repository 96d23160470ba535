package results

import (
	"fmt"
	"math"
	"strings"

	"github.com/kvbench/kvbench/bench/report/visual"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/stats"
	"github.com/kvbench/kvbench/theme"
)

// The charts are drawn on a braille grid (2x4 dots a cell) rather than
// with ntcharts, whose packages all need bubblezone for mouse zones this
// screen does not use.

var states = []string{sender.StateCold, sender.StateReused, sender.StateUnverified}

// braille dot bits, by [x%2][y%4].
var dotBits = [2][4]rune{{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}}

// yLabelWidth is the width of the value axis labels.
const yLabelWidth = 8

func axisNumber(v float64) string {
	switch {
	case v >= 10000:
		return fmt.Sprintf("%.0fk", v/1000)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// scatter draws each sampled request's TTFT (y, ms) against its submit
// time (x, s since the first submit), a cell coloured by the cache state
// most of its dots belong to; the warmup's requests, when warmups, are a
// series of their own in the muted colour. Only states in show are
// drawn. TTFTs above yMax sit on the top row. w x h is the whole chart
// with its axes.
func scatter(pts []runs.Point, show func(state string) bool, warmups bool, span, yMax float64, w, h int, s *theme.Styles) string {
	pw, ph := w-yLabelWidth-1, h-2
	if pw < 4 || ph < 2 {
		return ""
	}
	if span <= 0 {
		span = 1
	}
	if yMax <= 0 {
		yMax = 1
	}
	type cell struct {
		bits  rune
		count [4]int // cold, reused, unverified, warmup
	}
	grid := make([]cell, pw*ph)
	for _, p := range pts {
		si := stateIndex(p.State)
		switch {
		case p.Warmup && !warmups:
			continue
		case p.Warmup:
			si = warmupIndex
		case !show(states[si]):
			continue
		}
		x := int(p.T / span * float64(pw*2-1))
		y := int((1 - min(p.TTFT/yMax, 1)) * float64(ph*4-1))
		x, y = clamp(x, 0, pw*2-1), clamp(y, 0, ph*4-1)
		c := &grid[(y/4)*pw+x/2]
		c.bits |= dotBits[x%2][y%4]
		c.count[si]++
	}
	var b strings.Builder
	for row := range ph {
		label := ""
		switch row {
		case 0:
			label = axisNumber(yMax)
		case ph / 2:
			label = axisNumber(yMax / 2)
		case ph - 1:
			label = "0"
		}
		b.WriteString(s.ChartLabel.Render(fmt.Sprintf("%*s", yLabelWidth, label)))
		b.WriteString(s.ChartAxis.Render("│"))
		for col := range pw {
			c := grid[row*pw+col]
			if c.bits == 0 {
				b.WriteByte(' ')
				continue
			}
			best := 0
			for i := range c.count {
				if c.count[i] > c.count[best] {
					best = i
				}
			}
			st := s.Muted
			if best != warmupIndex {
				st = s.State(states[best])
			}
			b.WriteString(st.Render(string(0x2800 + c.bits)))
		}
		b.WriteByte('\n')
	}
	b.WriteString(timeAxis(pw, span, s))
	return b.String()
}

// warmupIndex is the warmup's series in a scatter cell's counts.
const warmupIndex = 3

func stateIndex(state string) int {
	switch state {
	case sender.StateCold:
		return 0
	case sender.StateReused:
		return 1
	}
	return 2
}

func clamp(v, lo, hi int) int { return min(max(v, lo), hi) }

var bars = []rune(" ▁▂▃▄▅▆▇█")

// histogram draws the distribution of sorted TTFTs (ms) between their
// minimum and hi, one bin per column; values above hi go to the last bin.
func histogram(sorted []float32, hi float64, w, h int, s *theme.Styles) string {
	pw, ph := w-yLabelWidth-1, h-2
	if pw < 4 || ph < 1 || len(sorted) == 0 {
		return ""
	}
	lo := float64(sorted[0])
	if hi <= lo {
		hi = lo + 1
	}
	counts := make([]int, pw)
	for _, v := range sorted {
		i := int((float64(v) - lo) / (hi - lo) * float64(pw))
		counts[clamp(i, 0, pw-1)]++
	}
	top := 0
	for _, c := range counts {
		top = max(top, c)
	}
	var b strings.Builder
	for row := range ph {
		label := ""
		switch row {
		case 0:
			label = fmt.Sprint(top)
		case ph - 1:
			if ph > 1 {
				label = "0"
			}
		}
		b.WriteString(s.ChartLabel.Render(fmt.Sprintf("%*s", yLabelWidth, label)))
		b.WriteString(s.ChartAxis.Render("│"))
		var line strings.Builder
		for _, c := range counts {
			// Eighths of a row this bar reaches into row (counted from
			// the top).
			eighths := int(math.Ceil(float64(c) / float64(top) * float64(ph*8)))
			fill := eighths - (ph-1-row)*8
			line.WriteRune(bars[clamp(fill, 0, 8)])
		}
		b.WriteString(s.SeriesA.Render(line.String()))
		b.WriteByte('\n')
	}
	b.WriteString(strings.Repeat(" ", yLabelWidth) + s.ChartAxis.Render("└"+strings.Repeat("─", pw)) + "\n")
	left, right := axisNumber(lo)+"ms", axisNumber(hi)+"ms"
	gap := max(pw+1-len(left)-len(right), 1)
	b.WriteString(strings.Repeat(" ", yLabelWidth) + s.ChartLabel.Render(left+strings.Repeat(" ", gap)+right))
	return b.String()
}

// nearest is the nearest-rank p-th percentile of sorted values.
func nearest(sorted []float32, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(n)/100)) - 1
	return float64(sorted[clamp(i, 0, n-1)])
}

// legend names the states in their colours with their counts of
// measured requests, then the warmup's (drawn when warmups).
func legend(s *theme.Styles, counts map[string]int, show func(string) bool, warm int, warmups bool) string {
	var parts []string
	for _, st := range states {
		mark := "●"
		if !show(st) {
			mark = "○"
		}
		parts = append(parts, s.State(st).Render(mark+" "+st)+s.Muted.Render(fmt.Sprintf(" %d", counts[st])))
	}
	if warm > 0 {
		mark := "●"
		if !warmups {
			mark = "○"
		}
		parts = append(parts, s.Muted.Render(fmt.Sprintf("%s warmup %d", mark, warm)))
	}
	return strings.Join(parts, "   ")
}

// hitChart draws a run's hit ratio over time (the summary's series:
// cached over prompt tokens of the requests that finished in each
// second) as a braille step line from 0 to 100 %, a gap where a second
// had no valid counts; w x h is the whole chart with its axes. The time
// axis is the scatter's: span seconds from the run's first submit, the
// series starting at offset (its first measured submit), so a column
// is the same second in both. Empty when too small or without a point.
func hitChart(series []stats.SecondPoint, offset, span float64, w, h int, s *theme.Styles) string {
	pw, ph := w-yLabelWidth-1, h-2
	if pw < 4 || ph < 2 {
		return ""
	}
	spans := visual.HitSpans(series, pw*2)
	if len(spans) == 0 {
		return ""
	}
	end := float64(spans[len(spans)-1].To)
	if math.IsNaN(offset) || offset < 0 {
		offset = 0
	}
	if !(span > 0) || span > maxSeriesSpan {
		span = offset + end
	}
	offset = min(offset, span)
	grid := make([]rune, pw*ph)
	dotX := func(sec int) int {
		return clamp(int((offset+float64(sec))/span*float64(pw*2)), 0, pw*2-1)
	}
	dotY := func(r float64) int { return clamp(int(math.Round((1-r)*float64(ph*4-1))), 0, ph*4-1) }
	set := func(x, y int) { grid[(y/4)*pw+x/2] |= dotBits[x%2][y%4] }
	prevY, prevX := -1, -1
	for _, sp := range spans {
		if sp.Ratio == nil {
			prevY = -1
			continue
		}
		y := dotY(*sp.Ratio)
		x0, x1 := dotX(sp.From), max(dotX(sp.To)-1, dotX(sp.From))
		if prevY >= 0 && prevX == x0-1 {
			// The step from the previous second's level.
			for yy := min(prevY, y); yy <= max(prevY, y); yy++ {
				set(x0, yy)
			}
		}
		for x := x0; x <= x1; x++ {
			set(x, y)
		}
		prevY, prevX = y, x1
	}
	var b strings.Builder
	for row := range ph {
		label := ""
		switch row {
		case 0:
			label = "100"
		case ph - 1:
			label = "0"
		case ph / 2:
			label = "50"
		}
		b.WriteString(s.ChartLabel.Render(fmt.Sprintf("%*s", yLabelWidth, label)))
		b.WriteString(s.ChartAxis.Render("│"))
		var line strings.Builder
		for col := range pw {
			if c := grid[row*pw+col]; c != 0 {
				line.WriteRune(0x2800 + c)
			} else {
				line.WriteByte(' ')
			}
		}
		b.WriteString(s.State(sender.StateReused).Render(line.String()))
		b.WriteByte('\n')
	}
	b.WriteString(timeAxis(pw, span, s))
	return b.String()
}

// maxSeriesSpan bounds the time axis of the hit chart (two days: a
// series holds at most one).
const maxSeriesSpan = 2 * 86400

// measuredStart is the submit time (seconds since the first submit) of
// the earliest measured request among the chart's points: where the
// summary's series starts on the scatter's axis.
func measuredStart(pts []runs.Point) float64 {
	first := math.Inf(1)
	for _, p := range pts {
		if !p.Warmup {
			first = min(first, p.T)
		}
	}
	if math.IsInf(first, 1) {
		return 0
	}
	return first
}

// timeAxis is a chart's axis line and its first and last second, under
// a plot pw columns wide spanning span seconds.
func timeAxis(pw int, span float64, s *theme.Styles) string {
	left, right := "0s", fmt.Sprintf("%.1fs", span)
	gap := max(pw+1-len(left)-len(right), 1)
	return strings.Repeat(" ", yLabelWidth) + s.ChartAxis.Render("└"+strings.Repeat("─", pw)) + "\n" +
		strings.Repeat(" ", yLabelWidth) + s.ChartLabel.Render(left+strings.Repeat(" ", gap)+right)
}
