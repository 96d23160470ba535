package compare

import (
	"slices"
	"strings"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/screens/curve"
	"github.com/kvbench/kvbench/theme"
)

// A sweep comparison overlays the two curves: one chart per figure (TTFT
// p50, TTFT p99, good fraction), A drawn with box lines and B with
// braille dots, both against the achieved load; under them the capacity
// each sweep found and the cells side by side.

// figure is one figure of every cell of a sweep, against achieved load.
type figure struct {
	title string
	get   func(c record.SweepCell) *float64
	pct   bool // a fraction shown 0..100
}

var figures = []figure{
	{"TTFT p50 (ms)", func(c record.SweepCell) *float64 { return c.P50TTFTms }, false},
	{"TTFT p99 (ms)", func(c record.SweepCell) *float64 { return c.P99TTFTms }, false},
	{"good fraction (%)", func(c record.SweepCell) *float64 { return c.GoodFraction }, true},
}

// minChartW is the narrowest useful chart.
const minChartW = 36

// shownCurves are the charts that fit in w, in their display order: the
// p99 first, then the good fraction (when any cell has one), then the p50.
func shownCurves(cmp *runs.SweepComparison, w int) []figure {
	anyGood := false
	for _, s := range []*runs.SweepSide{cmp.A, cmp.B} {
		for _, c := range s.Cells {
			anyGood = anyGood || c.GoodFraction != nil
		}
	}
	priority := []int{1}
	if anyGood {
		priority = append(priority, 2)
	}
	priority = append(priority, 0)
	n := min(max(w/minChartW, 1), len(priority))
	keep := slices.Clone(priority[:n])
	slices.Sort(keep)
	out := make([]figure, len(keep))
	for i, k := range keep {
		out[i] = figures[k]
	}
	return out
}

func points(s *runs.SweepSide, get func(record.SweepCell) *float64, scale float64) []canvas.Float64Point {
	var pts []canvas.Float64Point
	for _, c := range s.Cells {
		x, y := s.AchievedLoad(c), get(c)
		if x == nil || y == nil {
			continue
		}
		pts = append(pts, canvas.Float64Point{X: *x, Y: *y * scale})
	}
	return pts
}

// sweepCharts draws the charts side by side in w x h cells (a title line
// over each chart).
func sweepCharts(st *theme.Styles, cmp *runs.SweepComparison, w, h int) string {
	cs := shownCurves(cmp, w)
	cw := w / len(cs)
	maxX := 0.0
	for _, s := range []*runs.SweepSide{cmp.A, cmp.B} {
		for _, c := range s.Cells {
			if x := s.AchievedLoad(c); x != nil {
				maxX = max(maxX, *x)
			}
		}
	}
	var cols []string
	for _, cv := range cs {
		scale := 1.0
		if cv.pct {
			scale = 100
		}
		a, b := points(cmp.A, cv.get, scale), points(cmp.B, cv.get, scale)
		top := 1.0
		for _, p := range append(slices.Clone(a), b...) {
			top = max(top, p.Y)
		}
		top *= 1.15
		if cv.pct {
			top = 100
		}
		title := st.PanelTitle.Render(ansi.Truncate(cv.title, cw-1, "…"))
		var body string
		if len(a)+len(b) == 0 || maxX <= 0 {
			body = lipgloss.Place(cw-1, h-1, lipgloss.Center, lipgloss.Center, st.Muted.Render("no cell measured"))
		} else {
			body = drawCurves(st, cw-1, h-1, maxX*1.05, top, a, b)
		}
		cols = append(cols, lipgloss.NewStyle().Width(cw).Render(title+"\n"+body))
	}
	return lipgloss.JoinHorizontal(lipgloss.Top, cols...)
}

// drawCurves draws a (box lines, ● at each cell) over b (braille, ○)
// in w x h cells.
func drawCurves(st *theme.Styles, w, h int, maxX, maxY float64, a, b []canvas.Float64Point) string {
	return curve.Draw(st, w, h, curve.Chart{MaxX: maxX, MaxY: maxY, Series: []curve.Series{
		{Points: a, Stroke: curve.Box, Mark: '●', Style: st.SeriesA},
		{Points: b, Stroke: curve.Braille, Mark: '○', Style: st.SeriesB},
	}})
}

// sweepLegend names the strokes and the x axis.
func sweepLegend(st *theme.Styles, cmp *runs.SweepComparison) string {
	x := "achieved req/s"
	if cmp.A.Dimension == "concurrency" {
		x = "mean requests in flight"
	}
	return st.SeriesA.Render("●─ A") + " " + st.SeriesB.Render("○⠒ B") + st.Muted.Render("  against "+x)
}

// SweepBody is what scrolls under the charts: the notes, the capacity
// each sweep found and the cells side by side.
func SweepBody(cmp *runs.SweepComparison, st *theme.Styles) string {
	var b strings.Builder
	for _, n := range cmp.Notes {
		b.WriteString(st.Warn.Render(n) + "\n")
	}
	b.WriteString(st.PanelTitle.Render("Capacity") + st.Muted.Render(" (highest "+cmp.A.Dimension+" meeting the goodput target)") + "\n")
	b.WriteString(st.SeriesA.Bold(true).Render("A") + " " + cmp.A.Capacity() + "\n")
	b.WriteString(st.SeriesB.Bold(true).Render("B") + " " + cmp.B.Capacity() + "\n\n")

	groups, head := cmp.SweepHeader()
	rows := [][]string{head}
	for _, r := range cmp.Rows {
		rows = append(rows, r.Cells(cmp.A))
	}
	widths := make([]int, len(head))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	span := func(g runs.SweepGroup) int {
		n := 2 * (g.To - g.From)
		for i := g.From; i <= g.To; i++ {
			n += widths[i]
		}
		return n
	}
	for _, g := range groups {
		if short := ansi.StringWidth(g.Title) - span(g); short > 0 {
			widths[g.To] += short
		}
	}
	pad := func(s string, w int) string { return strings.Repeat(" ", max(w-ansi.StringWidth(s), 0)) + s }
	var gl strings.Builder
	col := 0
	for _, g := range groups {
		for ; col < g.From; col++ {
			gl.WriteString(strings.Repeat(" ", widths[col]+2))
		}
		gl.WriteString(pad(g.Title, span(g)) + "  ")
		col = g.To + 1
	}
	b.WriteString(st.PanelTitle.Render(strings.TrimRight(gl.String(), " ")) + "\n")
	// Columns by side: A's in A's colour, B's in B's, the delta by verdict.
	sideOf := []lipgloss.Style{lipgloss.NewStyle(), st.SeriesA, st.SeriesB, st.SeriesA, st.SeriesB, st.SeriesA, st.SeriesB, st.Muted, st.SeriesA, st.SeriesB}
	marked := false
	for i, r := range rows {
		var parts []string
		for j, c := range r {
			style := sideOf[j]
			switch {
			case i == 0:
				style = st.Muted
			case j == 7 && strings.HasPrefix(c, "+"):
				style = st.StatusError // a higher p99 is worse
			case j == 7 && strings.HasPrefix(c, "-") && c != "-":
				style = st.OK
			case (j == 1 || j == 2) && strings.HasSuffix(c, "*"):
				style = st.Warn
				marked = true
			}
			parts = append(parts, style.Render(pad(c, widths[j])))
		}
		b.WriteString(strings.Join(parts, "  ") + "\n")
	}
	if marked {
		b.WriteString(st.Warn.Render("* the cell did not deliver its load: its latencies understate that load") + "\n")
	}
	return b.String()
}
