package visual

import (
	"bytes"
	"regexp"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
)

// gonumDefault is gonum's own default typeface (plot.DefaultFont as
// gonum ships it).
var gonumDefault = font.Font{Typeface: "Liberation", Variant: "Serif"}

var svgFont = regexp.MustCompile(`font-family:([^;"]+);`)

// Every text of every chart is set in Liberation Sans (Arial's metrics),
// while gonum's package defaults stay gonum's: importing and using this
// package changes no global state.
func TestChartsSetTheirFontAndLeaveGonumsDefaults(t *testing.T) {
	check := func(when string) {
		t.Helper()
		if plot.DefaultFont != gonumDefault || plotter.DefaultFont != gonumDefault {
			t.Errorf("%s: gonum's default fonts are %+v and %+v, want gonum's own %+v", when, plot.DefaultFont, plotter.DefaultFont, gonumDefault)
		}
	}
	check("on import")

	dir := t.TempDir()
	writeRun(t, dir, fixture{name: "all", n: 120, coldTTFT: 400, reusedEvery: 3, itlMs: 15, metrics: true, trace: true, seed: 1})
	rep, err := Open(dir, []string{"20260301-120000-long-doc-qa-all"})
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := rep.HTML(&page); err != nil {
		t.Fatal(err)
	}
	svgs := [][]byte{page.Bytes()}
	for _, name := range []string{ChartTTFTCDF, ChartTTFTTime, ChartThroughputTime, ChartITLHist, ChartHitTime, ChartTraceCached} {
		var buf bytes.Buffer
		if err := rep.SVG(&buf, name); err != nil {
			t.Fatal(err)
		}
		svgs = append(svgs, buf.Bytes())
	}
	texts := 0
	for _, b := range svgs {
		for _, m := range svgFont.FindAllSubmatch(b, -1) {
			texts++
			if string(m[1]) != "'Liberation Sans',Arial,Helvetica,sans-serif" {
				t.Errorf("a chart text in font %q, want Liberation Sans", m[1])
			}
		}
	}
	if texts < 50 {
		t.Errorf("%d chart texts with a font: too few for seven charts", texts)
	}
	check("after drawing")
}
