package run

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/canvas/graph"
	"github.com/NimbleMarkets/ntcharts/canvas/runes"
	"github.com/NimbleMarkets/ntcharts/linechart"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench/stats"
	"github.com/kvbench/kvbench/screens/curve"
	"github.com/kvbench/kvbench/theme"
)

// chartData is the per-second series split into the two lines of each
// chart.
type chartData struct {
	ttftP50, ttftMax []float64
	outTPS, inTPS    []float64
	// hits is each second's hit ratio (%), NaN in a second without token
	// counts; hasHits when any second has one (the chart is drawn only
	// then: an engine that reports no cached tokens has no such chart).
	hits    []float64
	hasHits bool
	// first and last are the seconds (from the first measured submit)
	// of the first and the last point, for the time axis.
	first, last int
	// key identifies the series, so charts are redrawn only when a new
	// second arrived (or the size changed).
	key string
}

func seriesData(series []stats.Point) chartData {
	d := chartData{
		ttftP50: make([]float64, len(series)),
		ttftMax: make([]float64, len(series)),
		outTPS:  make([]float64, len(series)),
		inTPS:   make([]float64, len(series)),
		hits:    make([]float64, len(series)),
	}
	for i, p := range series {
		d.ttftP50[i], d.ttftMax[i] = p.TTFTP50ms, p.TTFTMaxms
		if p.Requests-p.Failed <= 0 || (p.TTFTP50ms == 0 && p.TTFTMaxms == 0) {
			// No first token in this second: a gap, not a TTFT of 0.
			d.ttftP50[i], d.ttftMax[i] = math.NaN(), math.NaN()
		}
		d.outTPS[i], d.inTPS[i] = p.OutputTPS, p.InputTPS
		d.hits[i] = math.NaN()
		if r, ok := p.HitRatio(); ok {
			d.hits[i], d.hasHits = 100*min(max(r, 0), 1), true
		}
	}
	if n := len(series); n > 0 {
		d.key = fmt.Sprintf("%d:%d", n, series[n-1].Second)
		d.first, d.last = series[0].Second, series[n-1].Second
	}
	return d
}

// What an empty chart says, while running and once finished.
const (
	waiting  = "waiting for the first second…"
	noSecond = "measured in under a second"
)

// drawChart draws a as a line of box characters and b (nil for none) in
// braille dots over it, in w x h cells: h-1 rows of chart and a time
// axis under it. A run shorter than the chart is wide is stretched over
// the whole width; a longer one shows its newest seconds at the right
// edge. first and last are the seconds of a[0] and a[n-1].
//
// Both strokes put a value in the same row (the row of its braille
// dot), so a larger value is never drawn below a smaller one: ntcharts'
// own box lines and braille scale the height differently.
func drawChart(s *theme.Styles, w, h int, a, b []float64, first, last int, empty string) string {
	if w < 8 || h < 2 {
		return ""
	}
	if len(a) == 0 {
		return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, s.Muted.Render(truncate(empty, w)))
	}
	if b != nil && len(b) != len(a) {
		b = nil
	}
	ch := h - 1 // the time axis takes the last row
	if ch < 2 {
		ch = h // no room for it
	}
	// A fixed range with headroom: with an automatic one the largest
	// value lands just outside the canvas.
	top := 1.0
	for i := range a {
		if !math.IsNaN(a[i]) {
			top = max(top, a[i])
		}
		if b != nil && !math.IsNaN(b[i]) {
			top = max(top, b[i])
		}
	}
	top *= 1.15
	opts := []linechart.Option{
		linechart.WithXYSteps(0, 2),
		linechart.WithStyles(s.ChartAxis, s.ChartLabel, s.SeriesA),
		linechart.WithYLabelFormatter(curve.AxisLabel),
	}
	probe := linechart.New(w, ch, 0, 1, 0, top, opts...)
	gw := max(probe.GraphWidth(), 1)
	// A longer run shows its newest seconds, one column each.
	from := first
	if len(a) > gw {
		a = a[len(a)-gw:]
		if b != nil {
			b = b[len(b)-gw:]
		}
		from = last - gw + 1
	}
	if len(a) == 1 {
		// One second: a level line over the whole width.
		a = []float64{a[0], a[0]}
		if b != nil {
			b = []float64{b[0], b[0]}
		}
	}
	n := len(a)
	lc := linechart.New(w, ch, 0, float64(max(n-1, 1)), 0, top, opts...)
	lc.DrawXYAxisAndLabel()
	g := plot{x0: lc.Origin().X + 1, gw: lc.GraphWidth(), gh: lc.GraphHeight(), n: n, top: top}
	// The two lines differ by their strokes, not only by colour: b in
	// braille dots under a drawn with box lines, as the legend shows.
	// Each second holds its value until the next one (a step line), so
	// both strokes take the same path through a column.
	if b != nil {
		dots := runes.NewPatternDotsGrid(2*g.gw, 4*g.gh)
		for _, run := range steps(b, g.dot) {
			for _, p := range run {
				dots.Set(p.X, p.Y)
			}
		}
		graph.DrawBraillePatterns(&lc.Canvas, canvas.Point{X: g.x0, Y: 0}, dots.BraillePatterns(), s.SeriesB)
	}
	for _, run := range steps(a, g.cell) {
		if len(run) == 1 {
			// A second alone between gaps: a mark where it is.
			lc.Canvas.SetCell(run[0], canvas.NewCellWithStyle('╴', s.SeriesA))
			continue
		}
		graph.DrawLinePoints(&lc.Canvas, run, runes.ArcLineStyle, s.SeriesA)
	}
	if ch == h {
		return lc.View()
	}
	return lc.View() + "\n" + timeAxis(s, w, g.x0, g.gw, from, last)
}

// steps are the paths of a step line through v's points: each second
// level from its point to the next one's x, then up or down to the next
// value, every cell (or dot) on the way in order, as at maps a point. A
// second without a value (NaN) is a gap: the line stops at its x and
// starts again after it.
func steps(v []float64, at func(i int, v float64) canvas.Point) [][]canvas.Point {
	var runs [][]canvas.Point
	var path []canvas.Point
	add := func(p canvas.Point) {
		if n := len(path); n == 0 || path[n-1] != p {
			path = append(path, p)
		}
	}
	flush := func() {
		if len(path) > 0 {
			runs = append(runs, path)
		}
		path = nil
	}
	for i := range v {
		if math.IsNaN(v[i]) {
			flush()
			continue
		}
		from := at(i, v[i])
		add(from)
		if i == len(v)-1 {
			break
		}
		// Level to the next second's x.
		to := at(i+1, v[i])
		for x := from.X; x <= to.X; x++ {
			add(canvas.Point{X: x, Y: from.Y})
		}
		if math.IsNaN(v[i+1]) {
			continue
		}
		next := at(i+1, v[i+1])
		step := 1
		if next.Y < from.Y {
			step = -1
		}
		for y := from.Y; y != next.Y+step; y += step {
			add(canvas.Point{X: next.X, Y: y})
		}
	}
	flush()
	return runs
}

// plot is the area inside the y axis: gw columns from x0 and gh rows
// from the top, n points over the width, 0 to top over the height.
type plot struct {
	x0, gw, gh, n int
	top           float64
}

// dot is the braille dot of point i with value v, from the plot's top
// left (2 x 4 dots a cell).
func (g plot) dot(i int, v float64) canvas.Point {
	w, h := 2*g.gw-1, 4*g.gh-1
	x := int(math.Round(float64(i) / float64(max(g.n-1, 1)) * float64(w)))
	y := h - int(math.Round(min(max(v/g.top, 0), 1)*float64(h)))
	return canvas.Point{X: x, Y: y}
}

// cell is the canvas cell of point i with value v: the cell of its dot.
func (g plot) cell(i int, v float64) canvas.Point {
	d := g.dot(i, v)
	return canvas.Point{X: g.x0 + d.X/2, Y: d.Y / 4}
}

// timeAxis labels the chart's first and last second under the graph
// (which starts at column x and is gw wide), and one in the middle when
// there is room: elapsed time since the first measured request.
func timeAxis(s *theme.Styles, w, x, gw, from, last int) string {
	lo := fmtSeconds(from)
	hi := fmtSeconds(last + 1)
	line := []rune(strings.Repeat(" ", w))
	put := func(at int, label string) {
		for i, r := range []rune(label) {
			if at+i >= 0 && at+i < len(line) {
				line[at+i] = r
			}
		}
	}
	put(x, lo)
	end := min(x+gw, w) - len(hi)
	put(end, hi)
	if mid := (from + last + 1) / 2; gw >= 3*(len(hi)+2) && mid > from && mid < last+1 {
		label := fmtSeconds(mid)
		put(x+gw/2-len(label)/2, label)
	}
	return s.ChartLabel.Render(strings.TrimRight(string(line), " "))
}

func fmtSeconds(sec int) string {
	if sec < 60 {
		return fmt.Sprintf("%ds", sec)
	}
	return fmtDuration(time.Duration(sec) * time.Second)
}

// drawHits draws the hit ratio per second (%) in w x h cells: a step
// line of braille dots (four steps a row, so 90 and 70 differ on a short
// chart) from 0 to 100 % with its own labels, and the time axis in the
// last row. Its seconds are the other charts' (the newest at the right
// edge of a long run, one column each).
func drawHits(s *theme.Styles, w, h int, d chartData, empty string) string {
	const lw = 3 // "100"
	x0 := lw + 1
	gw, ch := w-x0-1, h-1
	if gw < 4 || ch < 2 {
		return ""
	}
	v, from := d.hits, d.first
	if len(v) == 0 {
		return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, s.Muted.Render(truncate(empty, w)))
	}
	if len(v) > gw {
		v, from = v[len(v)-gw:], d.last-gw+1
	}
	if len(v) == 1 {
		v = []float64{v[0], v[0]}
	}
	g := plot{gw: gw, gh: ch, n: len(v), top: 100}
	dots := runes.NewPatternDotsGrid(2*gw, 4*ch)
	for _, run := range steps(v, g.dot) {
		for _, p := range run {
			dots.Set(p.X, p.Y)
		}
	}
	half := g.dot(0, 50).Y / 4 // the row 50 % is drawn in
	var b strings.Builder
	for row, cells := range dots.BraillePatterns() {
		label := ""
		switch row {
		case 0:
			label = "100"
		case ch - 1:
			label = "0"
		case half:
			label = "50"
		}
		line := strings.TrimRight(strings.ReplaceAll(string(cells), string(rune(runes.BrailleBlockOffset)), " "), " ")
		b.WriteString(s.ChartLabel.Render(fmt.Sprintf("%*s", lw, label)) + s.ChartAxis.Render("│") + s.SeriesA.Render(line) + "\n")
	}
	b.WriteString(timeAxis(s, w, x0, gw, from, d.last))
	return b.String()
}

// legend names the two lines by their strokes and colours.
func legend(s *theme.Styles, title, a, b string) string {
	return s.PanelTitle.Render(title) + " " + s.SeriesA.Render("─ "+a) + " " + s.SeriesB.Render("⠒ "+b)
}

// panel frames body in a rounded border of w x h cells, with title in
// the top border. Lines are cut or padded to fit. It draws by hand rather
// than with lipgloss's width and border rendering: a frame of the run
// screen is drawn several times a second and this is its main cost.
func panel(st lipgloss.Style, title string, body string, w, h int) string {
	padL, padR := st.GetPaddingLeft(), st.GetPaddingRight()
	inner := w - 2 - padL - padR
	innerH := h - 2
	if inner < 1 || innerH < 1 {
		return ""
	}
	b := lipgloss.RoundedBorder()
	bc := lipgloss.NewStyle().Foreground(st.GetBorderTopForeground())
	side := bc.Render(b.Left)
	left, right := side+strings.Repeat(" ", padL), strings.Repeat(" ", padR)+side

	var sb strings.Builder
	if title == "" {
		sb.WriteString(bc.Render(b.TopLeft + strings.Repeat(b.Top, w-2) + b.TopRight))
	} else {
		t := truncate(" "+title+" ", max(w-4, 0))
		fill := max(w-3-ansi.StringWidth(t), 0)
		sb.WriteString(bc.Render(b.TopLeft+b.Top) + t + bc.Render(strings.Repeat(b.Top, fill)+b.TopRight))
	}
	lines := strings.Split(body, "\n")
	for i := range innerH {
		l := ""
		if i < len(lines) {
			l = lines[i]
		}
		lw := ansi.StringWidth(l)
		if lw > inner {
			l = truncate(l, inner)
			lw = ansi.StringWidth(l)
		}
		sb.WriteByte('\n')
		sb.WriteString(left)
		sb.WriteString(l)
		sb.WriteString(strings.Repeat(" ", max(inner-lw, 0)))
		sb.WriteString(right)
	}
	sb.WriteByte('\n')
	sb.WriteString(bc.Render(b.BottomLeft + strings.Repeat(b.Bottom, w-2) + b.BottomRight))
	return sb.String()
}

// beside joins blocks of the same height line by line (each line already
// its block's full width).
func beside(blocks ...string) string {
	split := make([][]string, len(blocks))
	n := 0
	for i, b := range blocks {
		split[i] = strings.Split(b, "\n")
		n = max(n, len(split[i]))
	}
	var sb strings.Builder
	for r := range n {
		if r > 0 {
			sb.WriteByte('\n')
		}
		for _, lines := range split {
			if r < len(lines) {
				sb.WriteString(lines[r])
			}
		}
	}
	return sb.String()
}
