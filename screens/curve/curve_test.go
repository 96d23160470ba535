package curve

import (
	"slices"
	"strings"
	"testing"

	"github.com/NimbleMarkets/ntcharts/canvas"

	"github.com/kvbench/kvbench/screens/screentest"
	"github.com/kvbench/kvbench/theme"
)

func styles() *theme.Styles {
	screentest.PinColors()
	return theme.New(theme.Default)
}

func pt(x, y float64) canvas.Float64Point { return canvas.Float64Point{X: x, Y: y} }

// A capacity search's cells, in the order it ran them.
var searchOrder = []canvas.Float64Point{pt(4, 100), pt(8, 200), pt(16, 900), pt(12, 400), pt(10, 300)}

func TestOrdered(t *testing.T) {
	got := Ordered(searchOrder)
	var xs []float64
	for _, p := range got {
		xs = append(xs, p.X)
	}
	if !slices.Equal(xs, []float64{4, 8, 10, 12, 16}) {
		t.Errorf("ordered x = %v", xs)
	}
	if searchOrder[2].X != 16 {
		t.Error("Ordered changed its argument")
	}
}

// plot is the chart's rows above the x axis, without the y labels.
func plot(t *testing.T, view string) []string {
	t.Helper()
	lines := strings.Split(view, "\n")
	var out []string
	for _, l := range lines[:len(lines)-2] {
		_, after, ok := strings.Cut(l, "│")
		if !ok {
			t.Fatalf("no y axis in %q", l)
		}
		out = append(out, after)
	}
	return out
}

// A series is one curve through its points in load order: drawn from
// search order it is the same picture as from load order, every column
// between its first and last point carries a stroke, and no stroke
// drops below its lowest point (a spike to the axis would).
func TestDrawJoinsInLoadOrder(t *testing.T) {
	st := styles()
	for _, stroke := range []Stroke{Box, Braille} {
		chart := func(pts []canvas.Float64Point) string {
			return Draw(st, 60, 16, Chart{MaxX: 18, MaxY: 1000, Series: []Series{{Points: pts, Stroke: stroke, Mark: '●', Style: st.SeriesA}}})
		}
		v := chart(searchOrder)
		if sorted := chart(Ordered(searchOrder)); v != sorted {
			t.Errorf("stroke %d: search order draws\n%s\nload order draws\n%s", stroke, v, sorted)
		}
		rows := plot(t, v)
		first, last, lowest := -1, -1, -1
		for y, r := range rows {
			for x, c := range []rune(r) {
				if c == '●' {
					if first < 0 || x < first {
						first = x
					}
					last = max(last, x)
					lowest = max(lowest, y)
				}
			}
		}
		if n := strings.Count(v, "●"); n != len(searchOrder) {
			t.Errorf("stroke %d: %d marks for %d points:\n%s", stroke, n, len(searchOrder), v)
		}
		for x := first; x <= last; x++ {
			drawn := false
			for _, r := range rows {
				if rr := []rune(r); x < len(rr) && rr[x] != ' ' {
					drawn = true
				}
			}
			if !drawn {
				t.Errorf("stroke %d: column %d between the first and the last point is empty:\n%s", stroke, x, v)
			}
		}
		for y := lowest + 1; y < len(rows); y++ {
			if strings.TrimSpace(rows[y]) != "" {
				t.Errorf("stroke %d: row %d under the lowest point is drawn (a spike):\n%s", stroke, y, v)
			}
		}
	}
}

// Levels and marks are dashed lines where no curve runs; the x axis
// carries its unit.
func TestGuides(t *testing.T) {
	st := styles()
	v := Draw(st, 60, 16, Chart{MaxX: 20, MaxY: 1000, XUnit: "req/s",
		Series: []Series{{Points: []canvas.Float64Point{pt(2, 100), pt(18, 900)}, Stroke: Box, Mark: '●', Style: st.SeriesA}},
		Levels: []Guide{{At: 500, Style: st.Warn, Label: "SLO"}}, Marks: []Guide{{At: 10, Style: st.OK}}})
	rows := plot(t, v)
	level := -1
	for y, r := range rows {
		if strings.Count(r, string(LevelRune)) > 40 {
			level = y
		}
	}
	if level < 0 {
		t.Fatalf("no level line:\n%s", v)
	}
	if want := len(rows) - 1 - 7; level < want-1 || level > want+1 {
		t.Errorf("the level 500 of 1000 is on row %d of %d:\n%s", level, len(rows), v)
	}
	if l := strings.Split(v, "\n")[level]; !strings.HasPrefix(l, " SLO│┄") {
		t.Errorf("the level's row is labelled %q", l)
	}
	if n := strings.Count(v, string(MarkRune)); n < len(rows)-3 {
		t.Errorf("%d mark runes for %d rows:\n%s", n, len(rows), v)
	}
	axis := strings.Split(v, "\n")
	if x := axis[len(axis)-1]; !strings.HasSuffix(x, "req/s") || !strings.Contains(x, "10") {
		t.Errorf("x axis %q", x)
	}
	// Round y labels.
	for _, want := range []string{"1.0k│", " 600│", " 200│", "   0│"} {
		if !strings.Contains(v, want) {
			t.Errorf("y label %q missing:\n%s", want, v)
		}
	}
}

func TestTooSmall(t *testing.T) {
	st := styles()
	c := Chart{MaxX: 1, MaxY: 1, Series: []Series{{Points: []canvas.Float64Point{pt(0.5, 0.5)}, Mark: '●'}}}
	if v := Draw(st, 7, 10, c); v != "" {
		t.Errorf("7 columns: %q", v)
	}
	if v := Draw(st, 8, 3, c); !strings.Contains(v, "●") {
		t.Errorf("8x3: %q", v)
	}
}
