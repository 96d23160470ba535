package run

import (
	"fmt"
	"strings"

	"github.com/NimbleMarkets/ntcharts/canvas/runes"
	"github.com/NimbleMarkets/ntcharts/linechart"
	"github.com/NimbleMarkets/ntcharts/linechart/streamlinechart"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench/stats"
	"github.com/kvbench/kvbench/theme"
)

// chartData is the per-second series split into the two lines of each
// chart.
type chartData struct {
	ttftP50, ttftMax []float64
	outTPS, inTPS    []float64
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
	}
	return d
}

// compact formats an axis label in at most five cells.
func compact(_ int, v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// What an empty chart says, while running and once finished.
const (
	waiting  = "waiting for the first second…"
	noSecond = "measured in under a second"
)

// drawChart draws two lines (a over b) in w x h cells; the newest second
// is at the right edge.
func drawChart(s *theme.Styles, w, h int, a, b []float64, empty string) string {
	if w < 8 || h < 2 {
		return ""
	}
	if len(a) == 0 {
		return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, s.Muted.Render(truncate(empty, w)))
	}
	// A fixed range with headroom: with an automatic one the largest
	// value lands just outside the canvas.
	top := 1.0
	for i := range a {
		top = max(top, a[i], b[i])
	}
	top *= 1.15
	lc := linechart.New(w, h, 0, 1, 0, top,
		linechart.WithXYSteps(0, 2),
		linechart.WithStyles(s.ChartAxis, s.ChartLabel, s.SeriesA),
		linechart.WithYLabelFormatter(compact))
	c := streamlinechart.New(w, h, streamlinechart.WithLineChart(&lc))
	c.SetDataSetStyles("a", runes.ArcLineStyle, s.SeriesA)
	c.SetDataSetStyles("b", runes.ThinLineStyle, s.SeriesB)
	for i := range a {
		c.PushDataSet("b", b[i])
		c.PushDataSet("a", a[i])
	}
	// b first, so a is drawn on top where they meet.
	c.DrawDataSets([]string{"b", "a"})
	return c.View()
}

// legend names the two lines in their colours.
func legend(s *theme.Styles, title, a, b string) string {
	return s.PanelTitle.Render(title) + " " + s.SeriesA.Render("━ "+a) + " " + s.SeriesB.Render("─ "+b)
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
