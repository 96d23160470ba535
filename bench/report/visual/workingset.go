package visual

import (
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/kvbench/kvbench/bench/record"
	bsweep "github.com/kvbench/kvbench/bench/sweep"
)

// A working-set sweep's page (spec/load.md, "Working-set sweeps"): hit
// ratio (observed and ideal) and reused TTFT p50 against the working set
// in tokens, the capacity and fast tier found marked by solid lines, the
// engine's declared tiers by dashed ones, named as the sweep screen
// names them.

func (s *Sweep) workingSet() bool { return s.Dimension == bsweep.WorkingSet }

// maxTokens bounds a working set or a capacity read from a file (10^12
// tokens is far past any cache), so a hostile figure cannot stretch an
// axis to nothing.
const maxTokens = 1e12

// tokens is v as a working-set figure: finite, positive and bounded
// (ok false otherwise).
func tokens(v *float64) (float64, bool) {
	if v == nil || math.IsNaN(*v) || *v <= 0 || *v > maxTokens {
		return 0, false
	}
	return *v, true
}

// ratio is v as a hit ratio in [0, 1] (ok false otherwise).
func ratio(v *float64) (float64, bool) {
	if v == nil || math.IsNaN(*v) || *v < 0 || *v > 1 {
		return 0, false
	}
	return *v, true
}

// ms is v as a latency in milliseconds: finite, >= 0, under a day.
func ms(v *float64) (float64, bool) {
	if v == nil || math.IsNaN(*v) || *v < 0 || *v > 86400e3 {
		return 0, false
	}
	return *v, true
}

// wsTokens is a working-set cell's x: the tokens it sent (its listed
// value for a cell without the working-set keys).
func wsTokens(c SweepCell) (float64, bool) {
	v := c.Value
	if c.WorkingSetCell != nil {
		v = c.WorkingSetTokens
	}
	return tokens(&v)
}

// wsFile is the sweep's sweep.json as the sweep runner reads it back
// (its working-set result and lines); nil when it cannot be read.
func (s *Sweep) wsFile() *bsweep.File {
	f, err := bsweep.ReadFile(s.Dir)
	if err != nil {
		return nil
	}
	return f
}

// wsMark is a vertical line at a capacity, found or declared.
type wsMark struct {
	label string
	at    float64
	style draw.LineStyle
}

// wsMarks are the found capacity and fast tier (solid) and the declared
// total and GPU tier (dashed), labelled as the sweep screen's legend.
func wsMarks(r *record.WorkingSetResult) []wsMark {
	if r == nil {
		return nil
	}
	var out []wsMark
	add := func(label string, v *float64, c look, dash []vg.Length) {
		if t, ok := tokens(v); ok {
			out = append(out, wsMark{label + " " + bsweep.Format(t), t, draw.LineStyle{Color: c.color, Width: vg.Points(1.4), Dashes: dash}})
		}
	}
	add("capacity", r.CapacityTokens, look{color: green}, solid)
	add("fast tier", r.FastTierTokens, look{color: skyBlue}, solid)
	if d := r.Declared; d != nil {
		add("declared total", d.TotalTokens, look{color: vermillion}, dashed)
		add("declared GPU", d.GPUTokens, look{color: orange}, dotted)
	}
	return out
}

// workingSetCurve: hit ratio (observed, ideal) and reused TTFT p50
// against the working set, one pair of panels for all sweeps, the first
// sweep's found and declared capacities marked.
func workingSetCurve(ss []*Sweep) (*chart, error) {
	c := newChart(ChartSweepCurve, "Hit ratio and reused TTFT against the working set")
	const xLabel = "Working set (tokens)"
	top := c.panel("", "Hit ratio (%)")
	top.Y.Min, top.Y.Max = 0, 100
	bottom := c.panel(xLabel, "Reused TTFT p50 (ms)")
	bottom.Y.Min = 0
	lo, hi, topT := math.Inf(1), 0.0, 0.0
	anyPoint := false
	var marks []wsMark
	for si, s := range ss {
		var hit, ideal, reused plotter.XYs
		for _, cell := range s.Cells {
			x, ok := wsTokens(cell)
			if !ok {
				continue
			}
			lo, hi = math.Min(lo, x), math.Max(hi, x)
			if v, ok := ratio(cell.HitRatio); ok {
				hit = append(hit, plotter.XY{X: x, Y: 100 * v})
			}
			if w := cell.WorkingSetCell; w != nil {
				if v, ok := ratio(w.IdealHitRatio); ok {
					ideal = append(ideal, plotter.XY{X: x, Y: 100 * v})
				}
				if v, ok := ms(w.ReusedTTFTP50ms); ok {
					reused = append(reused, plotter.XY{X: x, Y: v})
					topT = math.Max(topT, v)
				}
			}
		}
		sortXY(hit)
		sortXY(ideal)
		sortXY(reused)
		prefix := ""
		if len(ss) > 1 {
			prefix = s.Label() + " "
		}
		obs := runLook(si)
		obs.dash = solid
		idl := obs
		idl.dash, idl.glyph = dashed, draw.RingGlyph{}
		rt := obs
		rt.glyph = draw.SquareGlyph{}
		for _, l := range []struct {
			p     *plot.Plot
			pts   plotter.XYs
			look  look
			label string
		}{
			{top, hit, obs, "hit ratio, observed"},
			{top, ideal, idl, "hit ratio, ideal"},
			{bottom, reused, rt, "reused TTFT p50"},
		} {
			if len(l.pts) == 0 {
				continue
			}
			anyPoint = true
			ln, sc, err := line(l.p, l.pts, l.look, l.pts)
			if err != nil {
				return nil, err
			}
			c.addLegend(prefix+l.label, ln, sc)
		}
		if si == 0 {
			if f := s.wsFile(); f != nil && f.Result != nil {
				marks = wsMarks(f.Result.WorkingSetResult)
			}
		}
	}
	if !anyPoint {
		return nil, errNoData("no cell has a working set and a hit ratio or reused TTFT")
	}
	for _, m := range marks {
		lo, hi = math.Min(lo, m.at), math.Max(hi, m.at)
	}
	bottom.Y.Max = math.Max(topT*1.15, 1)
	for _, p := range []*plot.Plot{top, bottom} {
		if !logIfWide(&p.X, lo, hi) {
			p.X.Min, p.X.Max = 0, hi*1.05
		}
	}
	for _, m := range marks {
		var thumb plot.Thumbnailer
		for _, p := range []*plot.Plot{top, bottom} {
			ln, err := plotter.NewLine(plotter.XYs{{X: m.at, Y: p.Y.Min}, {X: m.at, Y: p.Y.Max}})
			if err != nil {
				return nil, err
			}
			ln.LineStyle = m.style
			p.Add(ln)
			thumb = ln
		}
		c.addLegend(m.label, thumb)
	}
	var found []string
	for _, m := range marks {
		if !strings.HasPrefix(m.label, "declared") {
			found = append(found, m.label)
		}
	}
	c.notes = append(c.notes,
		"Each cell sent its working set once, then revisited it; the hit ratio is that of the revisits, the ideal what a cache that never evicts would give the same prompts.",
		"Solid vertical lines are what the sweep found (capacity: every tier that reports hits; fast tier: reused TTFT p50 under "+fmtNum(bsweep.FastTierFactor)+"x the smallest cell's); dashed ones what the engine declared.")
	if len(marks) > 0 && len(found) == 0 {
		c.notes = append(c.notes, "No capacity was found: no cell met the hit target.")
	}
	return c, nil
}
