package visual

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// maxScatter bounds the dots of a scatter chart (all series together):
// beyond it the requests are sampled at an even stride, so a run of any
// size gives a report of bounded size.
const maxScatter = 3000

// maxCDF bounds the vertices of one CDF line.
const maxCDF = 400

// single is true when a report shows one run: its charts split the
// requests by cache state; a comparison draws one series per run.
func single(rs []*Run) bool { return len(rs) == 1 }

// ttftCDF: TTFT CDF, one line per cache state (one run) or per run.
func ttftCDF(rs []*Run) (*chart, error) {
	c := newChart(ChartTTFTCDF, "TTFT distribution (CDF)")
	type group struct {
		label string
		look  look
		vals  []float64
	}
	var groups []group
	if single(rs) {
		for i, st := range cacheStates {
			var v []float64
			for _, q := range rs[0].reqs {
				if int(q.state) == i && !math.IsNaN(float64(q.ttftMs)) {
					v = append(v, float64(q.ttftMs))
				}
			}
			groups = append(groups, group{st, stateLooks[i], v})
			if i == 0 && rs[0].warmBaseline() {
				// The cold baseline the headline used, beside the
				// measured requests.
				var w []float64
				for _, q := range rs[0].warmCold {
					w = append(w, float64(q.ttftMs))
				}
				groups = append(groups, group{warmLabel, warmLook, w})
			}
		}
	} else {
		for i, r := range rs {
			groups = append(groups, group{r.Label(), runLook(i), r.ttfts()})
		}
	}
	p := c.panel("TTFT (ms)", "Fraction of requests")
	p.Y.Min, p.Y.Max = 0, 1
	lo, hi, any := math.Inf(1), math.Inf(-1), false
	for _, g := range groups {
		if len(g.vals) > 0 {
			slices.Sort(g.vals)
			lo, hi, any = math.Min(lo, g.vals[0]), math.Max(hi, g.vals[len(g.vals)-1]), true
		}
	}
	if !any {
		return nil, errNoData("no successful request has a TTFT")
	}
	logIfWide(&p.X, lo, hi)
	for _, g := range groups {
		if len(g.vals) == 0 {
			continue
		}
		ln, sc, err := line(p, cdfPoints(g.vals), g.look, cdfMarks(g.vals))
		if err != nil {
			return nil, err
		}
		c.addLegend(fmt.Sprintf("%s (%d)", g.label, len(g.vals)), ln, sc)
	}
	c.notes = append(c.notes, "Markers sit at the p50, p90 and p99 of each line.")
	if single(rs) && rs[0].warmBaseline() {
		c.notes = append(c.notes, warmNote(rs[0]))
	}
	return c, nil
}

// warmLabel names the warmup's cold requests in legends.
const warmLabel = "warmup cold"

// warmNote says why the warmup's requests are drawn.
func warmNote(r *Run) string {
	return fmt.Sprintf("Too few measured requests were cold, so the cold baseline is the warmup's %s that found nothing cached (%s): the headline's speedup compares them with the reused requests.",
		requests(len(r.warmCold)), warmLabel)
}

// requests is "1 request", "5 requests".
func requests(n int) string {
	if n == 1 {
		return "1 request"
	}
	return fmt.Sprintf("%d requests", n)
}

// ttfts are a run's successful TTFTs in ms.
func (r *Run) ttfts() []float64 {
	var v []float64
	for _, q := range r.reqs {
		if !math.IsNaN(float64(q.ttftMs)) {
			v = append(v, float64(q.ttftMs))
		}
	}
	return v
}

// cdfPoints is the empirical CDF of sorted v as a staircase (small n) or
// as maxCDF points at even ranks (large n).
func cdfPoints(v []float64) plotter.XYs {
	n := len(v)
	if n <= maxCDF/2 {
		pts := make(plotter.XYs, 0, 2*n)
		for i, x := range v {
			pts = append(pts, plotter.XY{X: x, Y: float64(i) / float64(n)}, plotter.XY{X: x, Y: float64(i+1) / float64(n)})
		}
		return pts
	}
	pts := make(plotter.XYs, 0, maxCDF)
	for k := range maxCDF {
		i := int(math.Round(float64(k) * float64(n-1) / float64(maxCDF-1)))
		pts = append(pts, plotter.XY{X: v[i], Y: float64(i+1) / float64(n)})
	}
	return pts
}

// cdfMarks are the p50, p90 and p99 points of sorted v (nearest rank).
func cdfMarks(v []float64) plotter.XYs {
	var pts plotter.XYs
	for _, q := range []float64{0.5, 0.9, 0.99} {
		i := max(int(math.Ceil(q*float64(len(v))))-1, 0)
		pts = append(pts, plotter.XY{X: v[i], Y: float64(i+1) / float64(len(v))})
	}
	return pts
}

// ttftTime: each request's TTFT at its submit time.
func ttftTime(rs []*Run) (*chart, error) {
	c := newChart(ChartTTFTTime, "TTFT over the run")
	p := c.panel("Submit time since the first request (s)", "TTFT (ms)")
	total := 0
	for _, r := range rs {
		total += len(r.reqs)
	}
	stride := max(1, (total+maxScatter-1)/maxScatter)
	type group struct {
		label string
		look  look
		pts   plotter.XYs
	}
	var groups []group
	lo, hi := math.Inf(1), math.Inf(-1)
	add := func(g *group, q request) {
		y := float64(q.ttftMs)
		g.pts = append(g.pts, plotter.XY{X: float64(q.submit), Y: y})
		lo, hi = math.Min(lo, y), math.Max(hi, y)
	}
	if single(rs) {
		gs := make([]group, len(cacheStates))
		for i, st := range cacheStates {
			gs[i] = group{label: st, look: stateLooks[i]}
		}
		for i, q := range rs[0].reqs {
			if i%stride == 0 && !math.IsNaN(float64(q.ttftMs)) {
				add(&gs[q.state], q)
			}
		}
		if rs[0].warmBaseline() {
			p.X.Label.Text = "Submit time since the first measured request (s)"
			w := group{label: warmLabel, look: warmLook}
			for _, q := range rs[0].warmCold {
				add(&w, q)
			}
			gs = append(gs[:1], append([]group{w}, gs[1:]...)...)
		}
		groups = gs
	} else {
		for ri, r := range rs {
			g := group{label: r.Label(), look: runLook(ri)}
			for i, q := range r.reqs {
				if i%stride == 0 && !math.IsNaN(float64(q.ttftMs)) {
					add(&g, q)
				}
			}
			groups = append(groups, g)
		}
	}
	if math.IsInf(lo, 1) {
		return nil, errNoData("no successful request has a TTFT")
	}
	if !logIfWide(&p.Y, lo, hi) {
		p.Y.Min, p.Y.Max = 0, hi*1.06
	}
	for _, g := range groups {
		if len(g.pts) == 0 {
			continue
		}
		sc, err := scatter(p, g.pts, g.look, vg.Points(2.2))
		if err != nil {
			return nil, err
		}
		c.addLegend(fmt.Sprintf("%s (%d)", g.label, len(g.pts)), sc)
	}
	if stride > 1 {
		c.notes = append(c.notes, fmt.Sprintf("One request in %d is drawn (%d requests in all).", stride, total))
	}
	if single(rs) && rs[0].warmBaseline() {
		c.notes = append(c.notes, "The warmup's cold requests ran before the first measured request: their times are negative.")
	}
	return c, nil
}

// niceWidth is a bin width of 1, 2 or 5 times a power of ten giving at
// most maxBins bins over span seconds (at least 0.1 s).
func niceWidth(span float64, maxBins int) float64 {
	raw := span / float64(maxBins)
	if raw <= 0.1 {
		return 0.1
	}
	e := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*e >= raw {
			return m * e
		}
	}
	return 10 * e
}

// timeline is a run's output tokens per second and mean requests in
// flight, per bin of width w seconds.
func (r *Run) timeline(w float64) (tput, inflight plotter.XYs) {
	var end float64
	for _, q := range r.reqs {
		if f := float64(q.finish); f > end {
			end = f
		}
	}
	n := int(math.Ceil(end/w)) + 1
	tok := make([]float64, n)
	busy := make([]float64, n)
	spread := func(acc []float64, a, b, amount float64, perSecond bool) {
		if b <= a {
			i := min(max(int(a/w), 0), n-1)
			if !perSecond {
				acc[i] += amount
			}
			return
		}
		rate := amount / (b - a)
		if perSecond {
			rate = 1
		}
		for i := max(int(a/w), 0); i < n && float64(i)*w < b; i++ {
			lo, hi := math.Max(a, float64(i)*w), math.Min(b, float64(i+1)*w)
			if hi > lo {
				acc[i] += rate * (hi - lo)
			}
		}
	}
	for _, q := range r.reqs {
		s, f := float64(q.submit), float64(q.finish)
		if f >= s {
			spread(busy, s, f, 0, true)
		}
		if q.outTokens > 0 {
			a := float64(q.first)
			if math.IsNaN(a) {
				a = f
			}
			spread(tok, a, f, float64(q.outTokens), false)
		}
	}
	for i := range n {
		x := (float64(i) + 0.5) * w
		tput = append(tput, plotter.XY{X: x, Y: tok[i] / w})
		inflight = append(inflight, plotter.XY{X: x, Y: busy[i] / w})
	}
	return tput, inflight
}

func (r *Run) span() float64 {
	var end float64
	for _, q := range r.reqs {
		end = math.Max(end, float64(q.finish))
	}
	return end
}

// throughputTime: output throughput and requests in flight over time,
// two panels sharing the time axis.
func throughputTime(rs []*Run) (*chart, error) {
	c := newChart(ChartThroughputTime, "Output throughput and requests in flight")
	var span float64
	for _, r := range rs {
		span = math.Max(span, r.span())
	}
	if span <= 0 {
		return nil, errNoData("no measured request")
	}
	w := niceWidth(span, 120)
	top := c.panel("", "Output (tok/s)")
	bottom := c.panel("Time since the first request (s)", "Requests in flight")
	top.Y.Min, bottom.Y.Min = 0, 0
	top.X.Min, bottom.X.Min = 0, 0
	top.X.Max, bottom.X.Max = span, span
	var maxT, maxI float64
	for i, r := range rs {
		l := runLook(i)
		tput, inflight := r.timeline(w)
		for k := range tput {
			maxT, maxI = math.Max(maxT, tput[k].Y), math.Max(maxI, inflight[k].Y)
		}
		ln, _, err := line(top, tput, l, nil)
		if err != nil {
			return nil, err
		}
		if _, _, err := line(bottom, inflight, l, nil); err != nil {
			return nil, err
		}
		if !single(rs) {
			c.addLegend(r.Label(), ln)
		}
	}
	top.Y.Max, bottom.Y.Max = math.Max(maxT*1.06, 1), math.Max(maxI*1.06, 1)
	c.notes = append(c.notes, fmt.Sprintf("Per %s s: output tokens spread over each request's decode, and the mean number of requests between submit and finish.", fmtNum(w)))
	return c, nil
}

// itlHist: the distribution of per-request mean inter-token latency.
func itlHist(rs []*Run) (*chart, error) {
	c := newChart(ChartITLHist, "Inter-token latency (per-request mean)")
	p := c.panel("Mean ITL of a request (ms)", "Fraction of requests")
	lo, hi := math.Inf(1), math.Inf(-1)
	counts := make([]int, len(rs))
	for i, r := range rs {
		for _, q := range r.reqs {
			if v := float64(q.itlMs); !math.IsNaN(v) {
				counts[i]++
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 1) {
		return nil, errNoData("no request has an ITL (every reply had fewer than two chunks)")
	}
	if hi == lo {
		hi = lo + 1
	}
	const bins = 30
	p.Y.Min = 0
	for i, r := range rs {
		if counts[i] == 0 {
			continue
		}
		// Every run's histogram has the same bins, over the common
		// extremes; each request weighs one over the run's requests.
		h := &plotter.Histogram{Bins: histBins(r.reqs, lo, hi, bins, 1/float64(counts[i])), Width: (hi - lo) / bins}
		l := runLook(i)
		h.LineStyle = l.lineStyle()
		h.LineStyle.Width = vg.Points(1.2)
		if single(rs) {
			h.FillColor = color.NRGBA{R: l.color.R, G: l.color.G, B: l.color.B, A: 110}
		} else {
			h.FillColor = nil
		}
		p.Add(h)
		if !single(rs) {
			c.addLegend(fmt.Sprintf("%s (%d)", rs[i].Label(), counts[i]), h)
		}
	}
	return c, nil
}

// histBins bins the requests' mean ITLs over [lo, hi] in n bins as
// gonum's plotter.NewHistogram bins points (the same arithmetic, in the
// same order), without a point per request.
func histBins(reqs []request, lo, hi float64, n int, weight float64) []plotter.HistogramBin {
	bins := make([]plotter.HistogramBin, n)
	w := (hi - lo) / float64(n)
	for i := range bins {
		bins[i].Min = lo + float64(i)*w
		bins[i].Max = lo + float64(i+1)*w
	}
	for _, q := range reqs {
		x := float64(q.itlMs)
		if math.IsNaN(x) {
			continue
		}
		bin := min(int((x-lo)/w), n-1)
		if x == hi {
			bin = n - 1
		}
		bins[bin].Weight += weight
	}
	return bins
}

// hitTime: the engine's prefix-cache hit rate per scrape interval (from
// metrics.jsonl), and the hit ratio the receipts report second by second
// (the summary's series; per submit-time bin for a summary written
// before it had one), over time: a working-set cell past the cliff shows
// from which second eviction starts.
func hitTime(rs []*Run) (*chart, error) {
	c := newChart(ChartHitTime, "Prefix-cache hit rate over the run")
	p := c.panel("Time since the first request (s)", "Hit rate (%)")
	p.Y.Min, p.Y.Max = 0, 100
	any := false
	for i, r := range rs {
		if len(r.hits) == 0 {
			continue
		}
		any = true
		var pts plotter.XYs
		for _, h := range r.hits {
			pts = append(pts, plotter.XY{X: h.t, Y: 100 * h.rate})
		}
		l := runLook(i)
		if single(rs) {
			l = stateLooks[0]
		}
		ln, sc, err := line(p, pts, l, sparse(pts, 12))
		if err != nil {
			return nil, err
		}
		label := "engine (metrics.jsonl)"
		if !single(rs) {
			label = r.Label() + " engine"
		}
		c.addLegend(label, ln, sc)
	}
	for _, r := range rs {
		if len(r.hits) > 0 && r.hits[0].t < 0 {
			c.notes = append(c.notes, "Negative times are before the first measured request (warmup).")
			break
		}
	}
	perSecond := false
	for i, r := range rs {
		spans := r.hitSpans()
		if len(spans) == 0 {
			continue
		}
		any, perSecond = true, true
		l := stateLooks[1]
		if !single(rs) {
			l = runLook(i)
			l.dash = dashed
		}
		label := hitSeriesLabel
		if !single(rs) {
			label = r.Label() + " receipts"
		}
		if err := steps(p, spans, l, label, c); err != nil {
			return nil, err
		}
	}
	if perSecond {
		w := 1
		for _, r := range rs {
			if s := r.hitSpans(); len(s) > 0 {
				w = max(w, s[0].To-s[0].From)
			}
		}
		unit := "second"
		if w > 1 {
			unit = fmt.Sprintf("%d seconds", w)
		}
		c.notes = append(c.notes, fmt.Sprintf("Receipts: cached over prompt tokens of the measured requests that finished in each %s (the summary's series); a gap is a %s with no valid counts. Where the line falls while the workload revisits what it sent, the cache has started to evict.", unit, unit))
	} else if single(rs) && any {
		// A summary without a series: the receipts beside the engine's
		// rate, per submit-time bin.
		r := rs[0]
		w := niceWidth(r.span(), 40)
		if pts := r.receiptHits(w); len(pts) > 0 {
			any = true
			ln, sc, err := line(p, pts, stateLooks[1], sparse(pts, 12))
			if err != nil {
				return nil, err
			}
			c.addLegend("receipts (cached / prompt)", ln, sc)
			c.notes = append(c.notes, fmt.Sprintf("Receipts: cached over prompt tokens of the requests submitted in each %s s.", fmtNum(w)))
		}
	}
	if !any {
		return nil, errNoData("no metrics.jsonl with prefix-cache counters (run with --metrics-url) and no hit ratio per second in the summary")
	}
	return c, nil
}

// hitSeriesLabel names the summary's hit ratio per second in legends.
const hitSeriesLabel = "receipts, per second"

// maxHitSpans bounds the points of one run's hit ratio line.
const maxHitSpans = 600

// hitSpans is the run's hit ratio over time from its summary's series
// (nil without one).
func (r *Run) hitSpans() []HitSpan {
	if r.detail == nil || r.detail.Summary == nil {
		return nil
	}
	return HitSpans(r.detail.Summary.Series, maxHitSpans)
}

// steps draws spans as a step line in look l (each span level over its
// seconds, a gap where a span has no ratio), with a marker at each
// span's middle when there are few, and names it in the legend.
func steps(p *plot.Plot, spans []HitSpan, l look, label string, c *chart) error {
	var run, mids plotter.XYs
	var first plot.Thumbnailer
	flush := func() error {
		if len(run) == 0 {
			return nil
		}
		ln, err := plotter.NewLine(run)
		if err != nil {
			return err
		}
		ln.LineStyle = l.lineStyle()
		p.Add(ln)
		if first == nil {
			first = ln
		}
		run = nil
		return nil
	}
	for _, s := range spans {
		if s.Ratio == nil {
			if err := flush(); err != nil {
				return err
			}
			continue
		}
		y := 100 * *s.Ratio
		run = append(run, plotter.XY{X: float64(s.From), Y: y}, plotter.XY{X: float64(s.To), Y: y})
		mids = append(mids, plotter.XY{X: float64(s.From+s.To) / 2, Y: y})
	}
	if err := flush(); err != nil {
		return err
	}
	sc, err := plotter.NewScatter(sparse(mids, 12))
	if err != nil {
		return err
	}
	sc.GlyphStyle = l.glyphStyle(vg.Points(3))
	p.Add(sc)
	c.addLegend(label, first, sc)
	return nil
}

// receiptHits is cached over prompt tokens of the requests with valid
// counts, per submit-time bin of w seconds.
func (r *Run) receiptHits(w float64) plotter.XYs {
	type acc struct{ prompt, cached float64 }
	m := map[int]*acc{}
	maxBin := 0
	for _, q := range r.reqs {
		if q.prompt <= 0 || q.cached < 0 || q.cached > q.prompt {
			continue
		}
		i := int(float64(q.submit) / w)
		if m[i] == nil {
			m[i] = &acc{}
		}
		m[i].prompt += float64(q.prompt)
		m[i].cached += float64(q.cached)
		maxBin = max(maxBin, i)
	}
	var pts plotter.XYs
	for i := 0; i <= maxBin; i++ {
		if a := m[i]; a != nil && a.prompt > 0 {
			pts = append(pts, plotter.XY{X: (float64(i) + 0.5) * w, Y: 100 * a.cached / a.prompt})
		}
	}
	return pts
}

// sparse picks at most n points of pts, evenly, for markers.
func sparse(pts plotter.XYs, n int) plotter.XYs {
	if len(pts) <= n {
		return pts
	}
	out := make(plotter.XYs, 0, n)
	for k := range n {
		out = append(out, pts[k*(len(pts)-1)/(n-1)])
	}
	return out
}

// traceCached: a trace replay's expected cached tokens against the cached
// tokens the engine reported, per request.
func traceCached(rs []*Run) (*chart, error) {
	c := newChart(ChartTraceCached, "Trace replay: expected vs observed cached tokens")
	p := c.panel("Expected cached tokens (trace prediction)", "Observed cached tokens (receipt)")
	p.X.Min, p.Y.Min = 0, 0
	total := 0
	for _, r := range rs {
		total += len(r.reqs)
	}
	stride := max(1, (total+maxScatter-1)/maxScatter)
	hi := 1.0
	any := false
	for ri, r := range rs {
		var unb, lru plotter.XYs
		for i, q := range r.reqs {
			if i%stride != 0 || q.cached < 0 {
				continue
			}
			y := float64(q.cached)
			if q.expected >= 0 {
				unb = append(unb, plotter.XY{X: float64(q.expected), Y: y})
				hi = math.Max(hi, math.Max(float64(q.expected), y))
			}
			if q.expectedLRU >= 0 {
				lru = append(lru, plotter.XY{X: float64(q.expectedLRU), Y: y})
				hi = math.Max(hi, float64(q.expectedLRU))
			}
		}
		la, lb := stateLooks[0], stateLooks[1]
		prefix := ""
		if !single(rs) {
			la, lb = runLook(ri), runLook(ri)
			lb.glyph = stateLooks[2].glyph
			prefix = r.Label() + ": "
		}
		if len(unb) > 0 {
			any = true
			sc, err := scatter(p, unb, la, vg.Points(2.2))
			if err != nil {
				return nil, err
			}
			c.addLegend(prefix+"unbounded cache", sc)
		}
		if len(lru) > 0 {
			sc, err := scatter(p, lru, lb, vg.Points(2.2))
			if err != nil {
				return nil, err
			}
			c.addLegend(prefix+"LRU of the KV budget", sc)
		}
	}
	if !any {
		return nil, errNoData("not a trace replay (no expected_cached_tokens in requests.jsonl)")
	}
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: hi, Y: hi}})
	if err != nil {
		return nil, err
	}
	diag.LineStyle = guide()
	p.Add(diag)
	c.addLegend("observed = expected", diag)
	c.notes = append(c.notes, "Points under the diagonal are requests the engine served from cache less than the trace predicts.")
	if stride > 1 {
		c.notes = append(c.notes, fmt.Sprintf("One request in %d is drawn.", stride))
	}
	return c, nil
}

// guide is the style of reference lines (the diagonal, a target).
func guide() draw.LineStyle {
	return draw.LineStyle{Color: grey, Width: vg.Points(1), Dashes: dashed}
}

// sweepCurve: TTFT p50/p99 and the good fraction against achieved load,
// one pair of lines per sweep.
func sweepCurve(ss []*Sweep) (*chart, error) {
	if ss[0].workingSet() {
		return workingSetCurve(ss)
	}
	c := newChart(ChartSweepCurve, "Latency and goodput against achieved load")
	xLabel := ss[0].loadAxisLabel()
	anyGood := false
	for _, s := range ss {
		for _, cell := range s.Cells {
			if cell.GoodFraction != nil {
				anyGood = true
			}
		}
	}
	top := c.panel(xLabel, "TTFT (ms)")
	if anyGood {
		top.X.Label.Text = ""
	}
	var bottom *plot.Plot
	if anyGood {
		bottom = c.panel(xLabel, "Good fraction (SLO met)")
		bottom.Y.Min, bottom.Y.Max = 0, 1
	}
	top.Y.Min = 0
	anyPoint := false
	var notDelivered plotter.XYs
	for si, s := range ss {
		var p50, p99, good plotter.XYs
		for _, cell := range s.Cells {
			x := s.loadAxis(cell)
			if x == nil {
				continue
			}
			if cell.P50TTFTms != nil {
				p50 = append(p50, plotter.XY{X: *x, Y: *cell.P50TTFTms})
			}
			if cell.P99TTFTms != nil {
				p99 = append(p99, plotter.XY{X: *x, Y: *cell.P99TTFTms})
				if cell.Delivered != nil && !*cell.Delivered {
					notDelivered = append(notDelivered, plotter.XY{X: *x, Y: *cell.P99TTFTms})
				}
			}
			if cell.GoodFraction != nil {
				good = append(good, plotter.XY{X: *x, Y: *cell.GoodFraction})
			}
		}
		sortXY(p50)
		sortXY(p99)
		sortXY(good)
		prefix := ""
		if len(ss) > 1 {
			prefix = s.Label() + " "
		}
		l50 := runLook(si)
		l50.dash = solid
		l99 := l50
		l99.dash, l99.glyph = dashed, stateLooks[1].glyph
		if len(p50) > 0 {
			anyPoint = true
			ln, sc, err := line(top, p50, l50, p50)
			if err != nil {
				return nil, err
			}
			c.addLegend(prefix+"TTFT p50", ln, sc)
		}
		if len(p99) > 0 {
			anyPoint = true
			ln, sc, err := line(top, p99, l99, p99)
			if err != nil {
				return nil, err
			}
			c.addLegend(prefix+"TTFT p99", ln, sc)
		}
		if bottom != nil && len(good) > 0 {
			lg := l50
			lg.dash, lg.glyph = dotted, runLook(2).glyph
			ln, sc, err := line(bottom, good, lg, good)
			if err != nil {
				return nil, err
			}
			c.addLegend(prefix+"good fraction", ln, sc)
		}
		if bottom != nil && s.GoodputTarget != nil && si == 0 {
			t := *s.GoodputTarget
			fn := plotter.NewFunction(func(float64) float64 { return t })
			fn.LineStyle = guide()
			bottom.Add(fn)
			c.addLegend(fmt.Sprintf("goodput target %s", fmtNum(t)), fn)
		}
	}
	if !anyPoint {
		return nil, errNoData("no cell has an achieved load and a TTFT")
	}
	if len(notDelivered) > 0 {
		ring := look{color: vermillion, glyph: draw.RingGlyph{}, name: "ring"}
		sc, err := scatter(top, notDelivered, ring, vg.Points(6))
		if err != nil {
			return nil, err
		}
		c.addLegend("load not delivered", sc)
		c.notes = append(c.notes, "A large ring marks a cell whose load was not delivered (spec: load.delivered false): its figures understate the load it claims.")
	}
	return c, nil
}

func sortXY(pts plotter.XYs) {
	slices.SortStableFunc(pts, func(a, b plotter.XY) int {
		switch {
		case a.X < b.X:
			return -1
		case a.X > b.X:
			return 1
		}
		return 0
	})
}

// errNoData is why a chart is not drawn for these runs.
type errNoData string

func (e errNoData) Error() string { return string(e) }
