package run

import (
	"fmt"
	"strings"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
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
	}
	for i, p := range series {
		d.ttftP50[i], d.ttftMax[i] = p.TTFTP50ms, p.TTFTMaxms
		d.outTPS[i], d.inTPS[i] = p.OutputTPS, p.InputTPS
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

// drawChart draws two lines (a over b) in w x h cells: h-1 rows of chart
// and a time axis under it. A run shorter than the chart is wide is
// stretched over the whole width; a longer one shows its newest seconds
// at the right edge. first and last are the seconds of a[0] and a[n-1].
func drawChart(s *theme.Styles, w, h int, a, b []float64, first, last int, empty string) string {
	if w < 8 || h < 2 {
		return ""
	}
	if len(a) == 0 {
		return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, s.Muted.Render(truncate(empty, w)))
	}
	ch := h - 1 // the time axis takes the last row
	if ch < 2 {
		ch = h // no room for it
	}
	// A fixed range with headroom: with an automatic one the largest
	// value lands just outside the canvas.
	top := 1.0
	for i := range a {
		top = max(top, a[i], b[i])
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
		a, b = a[len(a)-gw:], b[len(b)-gw:]
		from = last - gw + 1
	}
	if len(a) == 1 {
		// One second: a level line over the whole width.
		a, b = []float64{a[0], a[0]}, []float64{b[0], b[0]}
	}
	n := len(a)
	// The x range is the points shown, so a short run spans the width.
	lc := linechart.New(w, ch, 0, float64(max(n-1, 1)), 0, top, opts...)
	lc.DrawXYAxisAndLabel()
	pt := func(v []float64, i int) canvas.Float64Point { return canvas.Float64Point{X: float64(i), Y: v[i]} }
	// The two lines differ by their strokes, not only by colour: b in
	// braille dots under a drawn with box lines, as the legend shows.
	for i := 1; i < n; i++ {
		lc.DrawBrailleLineWithStyle(pt(b, i-1), pt(b, i), s.SeriesB)
	}
	for i := 1; i < n; i++ {
		lc.DrawLineWithStyle(pt(a, i-1), pt(a, i), runes.ArcLineStyle, s.SeriesA)
	}
	if ch == h {
		return lc.View()
	}
	return lc.View() + "\n" + timeAxis(s, w, lc.Origin().X+1, lc.GraphWidth(), from, last)
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
