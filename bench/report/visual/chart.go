package visual

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/kvbench/kvbench/bench/runs"
)

// Chart names accepted by --chart (spec/report.md), plus trace-cached for
// a trace replay's expected against observed cached tokens.
const (
	ChartTTFTCDF        = "ttft-cdf"
	ChartTTFTTime       = "ttft-time"
	ChartThroughputTime = "throughput-time"
	ChartITLHist        = "itl-hist"
	ChartHitTime        = "hit-time"
	ChartSweepCurve     = "sweep-curve"
	ChartTraceCached    = "trace-cached"
)

// Charts lists every chart name in the order a report shows them.
var Charts = []string{ChartTTFTCDF, ChartTTFTTime, ChartThroughputTime, ChartITLHist, ChartHitTime, ChartTraceCached, ChartSweepCurve}

// KnownChart reports whether name is a chart name.
func KnownChart(name string) bool {
	for _, c := range Charts {
		if c == name {
			return true
		}
	}
	return false
}

// chart is one figure: one or more panels stacked vertically, sharing a
// legend drawn to their right (never over the data).
type chart struct {
	name, title string
	panels      []*plot.Plot
	legend      plot.Legend
	entries     int
	// notes are sentences shown under the chart in the HTML (how to read
	// it, what was left out).
	notes []string
}

const (
	chartWidth  = 7.6 * vg.Inch
	panelHeight = 3.1 * vg.Inch
	maxLabel    = 34 // legend labels are cut to this many runes
)

func newChart(name, title string) *chart {
	c := &chart{name: name, title: title, legend: plot.NewLegend()}
	c.legend.Top, c.legend.Left = true, true
	c.legend.TextStyle.Font.Size = vg.Points(9)
	inFont(&c.legend.TextStyle)
	c.legend.ThumbnailWidth = vg.Points(26)
	c.legend.Padding = vg.Points(3)
	return c
}

// panel adds a panel with a grid and returns it.
func (c *chart) panel(xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = nil
	if len(c.panels) == 0 {
		p.Title.Text = c.title
		p.Title.TextStyle.Font.Size = vg.Points(12)
	}
	inFont(&p.Title.TextStyle)
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(10)
		a.Tick.Label.Font.Size = vg.Points(9)
		inFont(&a.Label.TextStyle)
		inFont(&a.Tick.Label)
		a.Tick.Marker = ticks{}
	}
	p.Add(plotter.NewGrid())
	c.panels = append(c.panels, p)
	return p
}

func (c *chart) addLegend(label string, thumbs ...plot.Thumbnailer) {
	if r := []rune(label); len(r) > maxLabel {
		label = string(r[:maxLabel-1]) + "…"
	}
	c.legend.Add(label, thumbs...)
	c.entries++
}

// render draws the chart as an SVG document. inline is for embedding in
// the HTML page: no white background, and the ink (axes, text) follows
// the page's text colour so the chart reads in light and dark mode.
func (c *chart) render(inline bool) ([]byte, error) {
	h := panelHeight * vg.Length(len(c.panels))
	if len(c.panels) > 1 {
		h -= 0.35 * vg.Inch * vg.Length(len(c.panels)-1)
	}
	canvas := vgsvg.New(chartWidth, h)
	dc := draw.New(canvas)
	if !inline {
		dc.SetColor(color.White)
		dc.Fill(dc.Rectangle.Path())
	}
	area := dc
	if c.entries > 0 {
		lw := c.legend.Rectangle(dc).Size().X + vg.Points(14)
		area = draw.Crop(dc, 0, -lw, 0, 0)
		lc := draw.Crop(dc, chartWidth-lw+vg.Points(8), 0, 0, -vg.Points(26))
		c.legend.Draw(lc)
	}
	if len(c.panels) == 1 {
		c.panels[0].Draw(area)
	} else {
		grid := make([][]*plot.Plot, len(c.panels))
		for i, p := range c.panels {
			grid[i] = []*plot.Plot{p}
		}
		tiles := plot.Align(grid, draw.Tiles{Rows: len(c.panels), Cols: 1, PadY: vg.Points(6)}, area)
		for i, p := range c.panels {
			p.Draw(tiles[i][0])
		}
	}
	var buf bytes.Buffer
	if _, err := canvas.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("chart %s: %w", c.name, err)
	}
	return finishSVG(buf.Bytes(), c.title, inline), nil
}

var (
	fontFamily = regexp.MustCompile(`font-family:([^;"]+);`)
	svgProlog  = regexp.MustCompile(`(?s)^<\?xml[^>]*\?>\s*(<!--.*?-->\s*)?`)
)

// finishSVG gives the canvas's text a font fallback (Arial shares
// Liberation Sans's metrics) and an accessible name; inline, it drops the
// XML prolog and turns black strokes into the page's text colour (text
// and black fills carry no fill of their own and inherit it from CSS).
func finishSVG(b []byte, title string, inline bool) []byte {
	b = fontFamily.ReplaceAll(b, []byte(`font-family:'$1',Arial,Helvetica,sans-serif;`))
	label := []byte(`<svg role="img" aria-label="` + htmlAttr(title) + `" `)
	b = bytes.Replace(b, []byte("<svg "), label, 1)
	if inline {
		b = svgProlog.ReplaceAll(b, nil)
		b = bytes.ReplaceAll(b, []byte("stroke:#000000"), []byte("stroke:currentColor"))
	}
	return b
}

func htmlAttr(s string) string {
	r := strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;", `"`, "&quot;", `'`, "&#39;")
	return r.Replace(s)
}

// line adds a line in look l to p, with markers at marks (nil: none).
func line(p *plot.Plot, pts plotter.XYs, l look, marks plotter.XYs) (plot.Thumbnailer, plot.Thumbnailer, error) {
	ln, err := plotter.NewLine(pts)
	if err != nil {
		return nil, nil, err
	}
	ln.LineStyle = l.lineStyle()
	p.Add(ln)
	sc, err := plotter.NewScatter(marks)
	if err != nil {
		// No marks: the legend still shows the marker.
		sc = &plotter.Scatter{}
	} else {
		p.Add(sc)
	}
	sc.GlyphStyle = l.glyphStyle(vg.Points(3))
	return ln, sc, nil
}

// scatter adds points in look l to p.
func scatter(p *plot.Plot, pts plotter.XYs, l look, radius vg.Length) (plot.Thumbnailer, error) {
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle = l.glyphStyle(radius)
	p.Add(sc)
	return sc, nil
}

// logIfWide puts an axis on a log scale when its positive values span
// more than 30x, with its range set so every value shows.
func logIfWide(a *plot.Axis, lo, hi float64) bool {
	if lo <= 0 || hi/lo <= 30 {
		return false
	}
	a.Scale = plot.LogScale{}
	a.Tick.Marker = plot.LogTicks{Prec: -1}
	a.Min, a.Max = lo*0.9, hi*1.1
	return true
}

// fmtNum prints a number briefly: integers without decimals, others with
// up to 3 significant decimals.
func fmtNum(v float64) string { return runs.FormatNum(v) }

// ticks are gonum's default ticks labelled with as few decimals as the
// major ticks need to be exact ("2.5", "0.05", "250"), so two labels
// never read the same.
type ticks struct{}

func (ticks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	prec := 0
	for ; prec < 6; prec++ {
		exact := true
		scale := math.Pow(10, float64(prec))
		for _, t := range ts {
			if t.Label != "" {
				if v := t.Value * scale; math.Abs(v-math.Round(v)) > 1e-6*math.Max(1, math.Abs(v)) {
					exact = false
					break
				}
			}
		}
		if exact {
			break
		}
	}
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', prec, 64)
		}
	}
	return ts
}
