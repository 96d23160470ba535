package visual

import (
	"image/color"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// chartFont is the charts' typeface. Liberation Sans has Arial's
// metrics, so the text gonum lays out with it fits where a browser
// without it substitutes Arial. Each chart sets it on its own text
// (inFont): gonum's package defaults are left as they are, so importing
// this package changes nothing for anyone else.
var chartFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// inFont sets a text style in the chart font, keeping its size.
func inFont(s *text.Style) {
	size := s.Font.Size
	s.Font = chartFont
	s.Font.Size = size
}

// look is how one series is told apart: a colour, and for readers
// without colour a dash pattern and a marker of its own.
type look struct {
	color color.RGBA
	dash  []vg.Length
	glyph draw.GlyphDrawer
	name  string // the marker in words, for the HTML's legend notes
}

func rgb(hex uint32) color.RGBA {
	return color.RGBA{R: uint8(hex >> 16), G: uint8(hex >> 8), B: uint8(hex), A: 255}
}

// The Okabe-Ito palette: distinguishable with the common colour vision
// deficiencies, and mid-toned so it reads on light and dark pages.
var (
	blue       = rgb(0x0072B2)
	vermillion = rgb(0xD55E00)
	green      = rgb(0x009E73)
	purple     = rgb(0xCC79A7)
	orange     = rgb(0xE69F00)
	skyBlue    = rgb(0x56B4E9)
	grey       = rgb(0x8C8C8C)
	olive      = rgb(0x8F8F00)
)

var (
	solid  []vg.Length
	dashed = []vg.Length{vg.Points(6), vg.Points(3)}
	dotted = []vg.Length{vg.Points(1.5), vg.Points(2.5)}
	dashDt = []vg.Length{vg.Points(7), vg.Points(2.5), vg.Points(1.5), vg.Points(2.5)}
	longDs = []vg.Length{vg.Points(12), vg.Points(4)}
)

// stateLooks are the cache states' looks, in cacheStates order: cold,
// reused, unverified, in the terminal's colours (blue, green, amber).
var stateLooks = [3]look{
	{blue, solid, draw.CircleGlyph{}, "circle"},
	{green, dashed, draw.TriangleGlyph{}, "triangle"},
	{orange, dotted, draw.CrossGlyph{}, "cross"},
}

// warmLook is the warmup's cold requests when they are the cold
// baseline: the cold colour's lighter tone, its own dash and marker.
var warmLook = look{skyBlue, dashDt, draw.SquareGlyph{}, "square"}

// runLooks are the looks of the runs of a comparison, in argument order;
// more runs than looks reuse them with the next dash pattern.
var runLooks = []look{
	{blue, solid, draw.CircleGlyph{}, "circle"},
	{vermillion, dashed, draw.TriangleGlyph{}, "triangle"},
	{green, dotted, draw.SquareGlyph{}, "square"},
	{purple, dashDt, draw.CrossGlyph{}, "cross"},
	{orange, longDs, draw.PlusGlyph{}, "plus"},
	{skyBlue, dashed, draw.RingGlyph{}, "ring"},
	{grey, dotted, draw.PyramidGlyph{}, "pyramid"},
	{olive, dashDt, draw.BoxGlyph{}, "box"},
}

func runLook(i int) look { return runLooks[i%len(runLooks)] }

func (l look) lineStyle() draw.LineStyle {
	return draw.LineStyle{Color: l.color, Width: vg.Points(1.6), Dashes: l.dash}
}

func (l look) glyphStyle(radius vg.Length) draw.GlyphStyle {
	return draw.GlyphStyle{Color: l.color, Radius: radius, Shape: l.glyph}
}
