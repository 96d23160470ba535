package sweep

import (
	"fmt"
	"strings"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/charmbracelet/lipgloss"

	"github.com/kvbench/kvbench/bench/record"
	bsweep "github.com/kvbench/kvbench/bench/sweep"
	"github.com/kvbench/kvbench/screens/curve"
)

// A working-set sweep's screen (spec/load.md, "Working-set sweeps"):
// hit ratio and reused TTFT p50 against the working-set size, the
// capacity and fast tier found marked solid, the engine's declared
// tiers dashed in the warning colour.

func (m *Model) workingSet() bool { return m.info.Dimension == bsweep.WorkingSet }

// wsX is a working-set cell's x: the tokens it sent.
func wsX(c bsweep.Cell) float64 {
	if c.WorkingSetCell != nil {
		return c.WorkingSetTokens
	}
	return c.Value
}

// wsFound are the capacity and fast tier: the result's once the sweep
// ended, else the cells' so far (nil when none).
func (m *Model) wsFound() (capacity, fastTier *float64, declared *record.Declared) {
	if r := m.result; r != nil && r.WorkingSetResult != nil {
		return r.CapacityTokens, r.FastTierTokens, r.Declared
	}
	var best *float64
	for _, c := range m.cells {
		if c.Status == record.CellPass && (best == nil || wsX(c) > *best) {
			x := wsX(c)
			best = &x
		}
	}
	return best, nil, nil
}

// workingSetCharts draws the hit ratio (%) and its ideal, and the
// reused TTFT p50, against the working set, side by side when wide
// enough, with the found and declared capacities marked.
func (m *Model) workingSetCharts(h int) string {
	st := m.c.Styles
	if len(m.cells) == 0 {
		return lipgloss.NewStyle().Width(m.w).Height(h).Render("the curve draws as cells finish")
	}
	var hit, ideal, reused []canvas.Float64Point
	maxX, maxT := 0.0, 1.0
	for _, c := range m.cells {
		x := wsX(c)
		maxX = max(maxX, x)
		if c.HitRatio != nil {
			hit = append(hit, canvas.Float64Point{X: x, Y: *c.HitRatio * 100})
		}
		if w := c.WorkingSetCell; w != nil && w.IdealHitRatio != nil {
			ideal = append(ideal, canvas.Float64Point{X: x, Y: *w.IdealHitRatio * 100})
		}
		if w := c.WorkingSetCell; w != nil && w.ReusedTTFTP50ms != nil {
			reused = append(reused, canvas.Float64Point{X: x, Y: *w.ReusedTTFTP50ms})
			maxT = max(maxT, *w.ReusedTTFTP50ms)
		}
	}
	capTok, fastTok, decl := m.wsFound()
	var marks []curve.Guide
	if capTok != nil {
		marks = append(marks, curve.Guide{At: *capTok, Style: st.OK})
	}
	if fastTok != nil {
		marks = append(marks, curve.Guide{At: *fastTok, Style: st.SeriesB})
	}
	if decl != nil {
		for _, t := range []*float64{decl.TotalTokens, decl.GPUTokens} {
			if t != nil {
				marks = append(marks, curve.Guide{At: *t, Style: st.Warn})
				maxX = max(maxX, *t)
			}
		}
	}
	legend := m.wsLegend(capTok, fastTok, decl)
	if legend != "" {
		h--
	}
	n := 1
	if m.w/2 >= minChartW {
		n = 2
	}
	w := m.w / n
	maxX = maxX*1.05 + 1e-9
	pl := st.PanelTitle
	hitChart := curve.Draw(st, w-1, h-1, curve.Chart{MaxX: maxX, MaxY: 100, XUnit: "tokens", Marks: marks,
		Series: []curve.Series{
			{Points: curve.Ordered(hit), Stroke: curve.Box, Mark: '●', Style: st.SeriesA},
			{Points: curve.Ordered(ideal), Stroke: curve.Braille, Mark: '○', Style: st.SeriesB},
		}})
	hitTitle := pick(w-1,
		[]part{{"hit ratio (%)", pl}, {"  ", pl}, {"●─ observed", st.SeriesA}, {"  ", pl}, {"○⠒ ideal", st.SeriesB}},
		[]part{{"hit %", pl}, {" ", pl}, {"●obs", st.SeriesA}, {" ", pl}, {"○ideal", st.SeriesB}})
	ttft := curve.Draw(st, w-1, h-1, curve.Chart{MaxX: maxX, MaxY: maxT * 1.15, XUnit: "tokens", Marks: marks,
		Series: []curve.Series{{Points: curve.Ordered(reused), Stroke: curve.Box, Mark: '◆', Style: st.SeriesA}}})
	ttftTitle := pick(w-1, []part{{"reused TTFT p50 (ms)", pl}}, []part{{"reused p50 ms", pl}})
	cols := []string{lipgloss.NewStyle().Width(w).Render(hitTitle + "\n" + hitChart)}
	if n == 2 {
		cols = append(cols, lipgloss.NewStyle().Width(w).Render(ttftTitle+"\n"+ttft))
	}
	out := lipgloss.JoinHorizontal(lipgloss.Top, cols...)
	if legend != "" {
		out += "\n" + legend
	}
	return out
}

// wsLegend names the marks: found capacity and fast tier, declared
// total and GPU, in the longest wording that fits.
func (m *Model) wsLegend(capTok, fastTok *float64, decl *record.Declared) string {
	st := m.c.Styles
	tok := func(p *float64) string { return bsweep.Format(*p) }
	var found, declared [2]string
	if capTok != nil {
		word := "capacity"
		if m.result == nil {
			word = "passing so far"
		}
		found[0], found[1] = "┆ "+word+" "+tok(capTok), "┆ "+tok(capTok)
	}
	if fastTok != nil {
		found[0] += ", fast tier " + tok(fastTok)
		found[1] += "/" + tok(fastTok)
	}
	if decl != nil {
		var long, short []string
		if decl.TotalTokens != nil {
			long, short = append(long, "total "+tok(decl.TotalTokens)), append(short, tok(decl.TotalTokens))
		}
		if decl.GPUTokens != nil {
			long, short = append(long, "GPU "+tok(decl.GPUTokens)), append(short, tok(decl.GPUTokens))
		}
		declared[0], declared[1] = "┆ declared "+strings.Join(long, ", "), "┆ decl "+strings.Join(short, "/")
	}
	if found[0] == "" && declared[0] == "" {
		return ""
	}
	variants := make([][]part, 2)
	for i := range variants {
		if found[i] != "" {
			variants[i] = append(variants[i], part{found[i], st.OK})
		}
		if found[i] != "" && declared[i] != "" {
			variants[i] = append(variants[i], part{"   ", lipgloss.NewStyle()})
		}
		if declared[i] != "" {
			variants[i] = append(variants[i], part{declared[i], st.Warn})
		}
	}
	return pick(m.w, variants...)
}

// wsTableHead and wsCellRow are a working-set sweep's table.
func wsTableHead() string {
	return fmt.Sprintf("%11s %7s %7s %12s %10s %13s", "WORKING SET", "HIT %", "IDEAL %", "REUSED P50", "P99 TTFT", "STATUS")
}

func wsCellRow(c bsweep.Cell) string {
	ideal, reused := "n/a", "n/a"
	if w := c.WorkingSetCell; w != nil {
		ideal, reused = pct(w.IdealHitRatio), num(w.ReusedTTFTP50ms)
	}
	return fmt.Sprintf("%11s %7s %7s %12s %10s %13s", bsweep.Format(wsX(c)), pct(c.HitRatio), ideal, reused, num(c.P99TTFTms), c.Verdict(nil))
}

// wsResultWords say what the ended working-set sweep found beside what
// the engine declared.
func (m *Model) wsResultWords() string {
	capTok, fastTok, decl := m.wsFound()
	opt := func(p *float64) string {
		if p == nil {
			return "n/a"
		}
		return bsweep.Format(*p)
	}
	s := "capacity " + opt(capTok) + " tokens, fast tier " + opt(fastTok)
	if decl != nil {
		s += "; declared " + opt(decl.TotalTokens) + " (GPU " + opt(decl.GPUTokens) + ")"
	} else {
		s += "; nothing declared"
	}
	return s
}
