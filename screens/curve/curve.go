// Package curve draws the curves of sweeps: a figure of every cell
// against the load the cell achieved. Each series is joined in load
// order (a capacity search visits loads out of order) and has its own
// stroke and point mark, so series read apart without colour. Guides
// go under the curves: levels (an SLO limit, a goodput target) as
// dashed horizontal lines, marks (the capacity found) as dashed vertical
// ones. The sweep screen and the comparison of two sweeps draw with it.
package curve

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/canvas/graph"
	"github.com/NimbleMarkets/ntcharts/canvas/runes"
	"github.com/NimbleMarkets/ntcharts/linechart"
	"github.com/charmbracelet/lipgloss"

	"github.com/kvbench/kvbench/theme"
)

// Stroke is how a series' points are joined.
type Stroke int

const (
	// Box joins points with box-drawing lines (rounded corners).
	Box Stroke = iota
	// Braille joins points with braille dots.
	Braille
)

// Series is one figure of a sweep's cells: X the achieved load, Y the
// figure. The points may come in any order.
type Series struct {
	Points []canvas.Float64Point
	Stroke Stroke
	Mark   rune // drawn at every point
	Style  lipgloss.Style
}

// Guide is a dashed line across the plot: at Y = At (a level) or at
// X = At (a mark).
type Guide struct {
	At    float64
	Style lipgloss.Style
	// Label is a level's y label, in its style, in place of the round
	// values next to it ("" for none).
	Label string
}

// The guides' runes: dashed, so they never read as a series' stroke.
const (
	LevelRune = '┄'
	MarkRune  = '┆'
)

// Chart is what Draw draws: the axes run from 0 to MaxX and 0 to MaxY.
type Chart struct {
	MaxX, MaxY float64
	// XUnit is written at the right end of the x axis labels ("" for
	// none).
	XUnit  string
	Series []Series // the first is drawn on top
	Levels []Guide
	Marks  []Guide
}

// Ordered is pts sorted by X (stable: points at the same load keep
// their order), the order a curve joins them in.
func Ordered(pts []canvas.Float64Point) []canvas.Float64Point {
	out := slices.Clone(pts)
	slices.SortStableFunc(out, func(a, b canvas.Float64Point) int { return cmp.Compare(a.X, b.X) })
	return out
}

// Draw draws c in w x h cells: the y axis with its labels, the plot, and
// the x axis labels (round values) on the last line. It returns "" when
// w x h is too small for a plot.
func Draw(st *theme.Styles, w, h int, c Chart) string {
	if w < 8 || h < 3 || c.MaxX <= 0 || c.MaxY <= 0 {
		return ""
	}
	lc := linechart.New(w, h, 0, c.MaxX, 0, c.MaxY,
		linechart.WithXYSteps(1, 2),
		linechart.WithStyles(st.ChartAxis, st.ChartLabel, st.ChartAxis),
		// The x labels are drawn under the chart at round values.
		linechart.WithXLabelFormatter(func(int, float64) string { return "" }),
		// Room for the y labels yLabels writes.
		linechart.WithYLabelFormatter(func(int, float64) string { return strings.Repeat(" ", yLabelWidth(h-2, c)) }))
	lc.DrawXYAxisAndLabel()
	o, gw, gh := lc.Origin(), lc.GraphWidth(), lc.GraphHeight()
	a := area{x0: o.X + 1, y0: o.Y - 1, gw: gw, gh: gh, maxX: c.MaxX, maxY: c.MaxY}
	yLabels(&lc, st, a, c.Levels)
	series := make([]Series, len(c.Series))
	for i, s := range c.Series {
		s.Points = Ordered(s.Points)
		series[i] = s
	}
	// Strokes from the last series to the first, so the first is on top.
	for i := len(series) - 1; i >= 0; i-- {
		s := series[i]
		for j := 1; j < len(s.Points); j++ {
			if s.Stroke == Braille {
				dots := graph.NewBrailleGrid(gw, gh, 0, c.MaxX, 0, c.MaxY)
				for _, p := range graph.GetLinePoints(a.dot(s.Points[j-1]), a.dot(s.Points[j])) {
					dots.Set(p)
				}
				graph.DrawBraillePatterns(&lc.Canvas, canvas.Point{X: a.x0, Y: a.y0 - gh + 1}, dots.BraillePatterns(), s.Style)
			} else {
				graph.DrawLinePoints(&lc.Canvas, graph.GetLinePoints(a.at(s.Points[j-1]), a.at(s.Points[j])), runes.ArcLineStyle, s.Style)
			}
		}
	}
	// Guides only where no stroke runs.
	free := func(p canvas.Point) bool { return lc.Canvas.Cell(p).Rune == runes.Null }
	for _, g := range c.Levels {
		if g.At < 0 || g.At > c.MaxY {
			continue
		}
		y := a.at(canvas.Float64Point{Y: g.At}).Y
		for x := a.x0; x < a.x0+gw; x++ {
			if p := (canvas.Point{X: x, Y: y}); free(p) {
				lc.Canvas.SetCell(p, canvas.NewCellWithStyle(LevelRune, g.Style))
			}
		}
	}
	for _, g := range c.Marks {
		if g.At < 0 || g.At > c.MaxX {
			continue
		}
		x := a.at(canvas.Float64Point{X: g.At}).X
		for y := a.y0 - gh + 1; y <= a.y0; y++ {
			if p := (canvas.Point{X: x, Y: y}); free(p) {
				lc.Canvas.SetCell(p, canvas.NewCellWithStyle(MarkRune, g.Style))
			}
		}
	}
	// Point marks last, in the same order as the strokes, each in the
	// cell its stroke passes the point in.
	for i := len(series) - 1; i >= 0; i-- {
		s := series[i]
		for _, f := range s.Points {
			lc.Canvas.SetCell(a.at(f), canvas.NewCellWithStyle(s.Mark, s.Style))
		}
	}
	lines := strings.Split(lc.View(), "\n")
	lines[len(lines)-1] = XAxis(st, w, a.x0, gw, c.MaxX, c.XUnit)
	return strings.Join(lines, "\n")
}

// area is the plot inside the axes: gw columns from x0, gh rows up from
// y0 (the row over the x axis). 0 sits on the first column and row and
// the maximum on the last, so no curve runs along an axis.
type area struct {
	x0, y0, gw, gh int
	maxX, maxY     float64
}

func frac(v, m float64) float64 { return min(max(v/m, 0), 1) }

// at is the cell of a value (the cell of its braille dot, so box lines
// and braille agree), values outside the axes at their edge.
func (a area) at(f canvas.Float64Point) canvas.Point {
	d := a.dot(f)
	return canvas.Point{X: a.x0 + d.X/2, Y: a.y0 - a.gh + 1 + d.Y/4}
}

// dot is the braille dot of a value in a grid of 2 x 4 dots per cell,
// from the top left of the plot (ntcharts' own grid truncates; this
// rounds).
func (a area) dot(f canvas.Float64Point) canvas.Point {
	w, h := 2*a.gw-1, 4*a.gh-1
	return canvas.Point{X: int(math.Round(frac(f.X, a.maxX) * float64(w))), Y: h - int(math.Round(frac(f.Y, a.maxY)*float64(h)))}
}

// yTicks are the round values labelled on a y axis of gh rows from 0
// to maxY.
func yTicks(gh int, maxY float64) []float64 {
	step := NiceStep(maxY / float64(max(gh/2, 1)))
	var out []float64
	for v := 0.0; v <= maxY+1e-9; v += step {
		out = append(out, v)
	}
	return out
}

func yLabelWidth(gh int, c Chart) int {
	n := 1
	for _, v := range yTicks(gh, c.MaxY) {
		n = max(n, len(AxisLabel(0, v)))
	}
	for _, g := range c.Levels {
		n = max(n, len([]rune(g.Label)))
	}
	return n
}

// yLabels writes round values (not ntcharts' evenly spaced rows, which
// give odd values) at their rows, at least two rows apart, and the
// levels' labels, in place of a round value on the same row.
func yLabels(lc *linechart.Model, st *theme.Styles, a area, levels []Guide) {
	taken := map[int]bool{}
	for _, g := range levels {
		if g.Label == "" || g.At < 0 || g.At > a.maxY {
			continue
		}
		y := a.at(canvas.Float64Point{Y: g.At}).Y
		if n := len([]rune(g.Label)); n <= a.x0-1 {
			lc.Canvas.SetStringWithStyle(canvas.Point{X: a.x0 - 1 - n, Y: y}, g.Label, g.Style)
			taken[y] = true
		}
	}
	last := a.y0 + 3
	for _, v := range yTicks(a.gh, a.maxY) {
		y := a.at(canvas.Float64Point{Y: v}).Y
		label := AxisLabel(0, v)
		if y > last-2 || taken[y] || len(label) > a.x0-1 {
			continue
		}
		lc.Canvas.SetStringWithStyle(canvas.Point{X: a.x0 - 1 - len(label), Y: y}, label, st.ChartLabel)
		last = y
	}
}

// XAxis labels round values of 0..maxX under a plot whose first column
// is x and that is gw wide, with unit at the right end when it fits.
func XAxis(st *theme.Styles, w, x, gw int, maxX float64, unit string) string {
	line := []rune(strings.Repeat(" ", w))
	end := w // labels end before end
	if u := []rune(unit); len(u) > 0 && len(u)+x+8 <= w {
		copy(line[w-len(u):], u)
		end = w - len(u) - 1
	}
	step := NiceStep(maxX / float64(max(gw/8, 1)))
	next := 0 // first free column
	for v := 0.0; v <= maxX+1e-9; v += step {
		label := AxisLabel(0, v)
		at := x + int(math.Round(v/maxX*float64(gw-1)))
		if at < next || at+len(label) > end {
			continue
		}
		copy(line[at:], []rune(label))
		next = at + len(label) + 1
	}
	return st.ChartLabel.Render(strings.TrimRight(string(line), " "))
}

// NiceStep is the smallest 1, 2 or 5 times a power of ten >= v.
func NiceStep(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// AxisLabel formats an axis label in at most five cells (the shape of
// ntcharts' label formatters).
func AxisLabel(_ int, v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	case v >= 10 || v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
