package sweep

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/workload"
	"github.com/kvbench/kvbench/config"
)

// WorkingSet is the dimension of a sweep over working-set sizes
// (spec/load.md, "Working-set sweeps: where the cache runs out").
const WorkingSet = record.DimWorkingSet

// Working-set sweep defaults (docs/cliff.md): a cell passes when its
// hit ratio is at least DefaultHitTarget of its ideal; the fast tier
// ends where reused TTFT p50 reaches FastTierFactor times the smallest
// cell's; a search runs at most DefaultWorkingSetCells cells (the
// capacity search, then the fast tier's bisection) and bisects to
// DefaultWorkingSetPrecision.
const (
	DefaultHitTarget       = 0.9
	FastTierFactor         = 2.0
	DefaultWorkingSetCells = 24
	// DefaultWorkingSetPrecision: the bounds of a working-set search
	// close to 2% (a unit's real size is a little over its nominal one,
	// so the true edge sits near the failing bound).
	DefaultWorkingSetPrecision = 0.02
)

// cellDimension is the dimension's word in cell folder names.
func cellDimension(d string) string {
	if d == WorkingSet {
		return "working-set"
	}
	return d
}

// ParseSizes reads a working-set list in tokens: `20000,40000,80000`,
// `10k:1M:x2` (k and M multiply by 1,000 and 1,000,000), and a `GB`
// suffix multiplies by tokensPerGB (an error when it is 0). Values are
// whole tokens.
func ParseSizes(flag, s string, tokensPerGB int) ([]float64, error) {
	conv := func(t string) (string, error) {
		t = strings.TrimSpace(t)
		u := strings.ToUpper(t)
		mul := 1.0
		switch {
		case strings.HasSuffix(u, "GB"):
			if tokensPerGB <= 0 {
				return "", fmt.Errorf("--%s %q: a GB size needs --tokens-per-gb-kvcache (or --lmcache-url)", flag, s)
			}
			mul, t = float64(tokensPerGB), t[:len(t)-2]
		case strings.HasSuffix(u, "K"):
			mul, t = 1e3, t[:len(t)-1]
		case strings.HasSuffix(u, "M"):
			mul, t = 1e6, t[:len(t)-1]
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return "", fmt.Errorf("--%s %q: %q is not a size (e.g. 20000, 10k, 1M, 2GB)", flag, s, strings.TrimSpace(t))
		}
		return strconv.FormatFloat(x*mul, 'f', -1, 64), nil
	}
	var parts []string
	for _, item := range strings.Split(s, ",") {
		if strings.Contains(item, ":") {
			r := strings.Split(item, ":")
			if len(r) == 3 {
				a, err := conv(r[0])
				if err != nil {
					return nil, err
				}
				b, err := conv(r[1])
				if err != nil {
					return nil, err
				}
				step := strings.TrimSpace(r[2])
				if len(step) > 1 && step[0] == '+' {
					k, err := conv(step[1:])
					if err != nil {
						return nil, err
					}
					step = "+" + k
				}
				item = a + ":" + b + ":" + step
			}
		} else if strings.TrimSpace(item) != "" {
			v, err := conv(item)
			if err != nil {
				return nil, err
			}
			item = v
		}
		parts = append(parts, item)
	}
	var vals []float64
	for _, item := range parts {
		if strings.TrimSpace(item) == "" {
			continue
		}
		v, err := ParseList(flag, item)
		if err != nil {
			return nil, fmt.Errorf("--%s %q: %v", flag, s, err)
		}
		vals = append(vals, v...)
	}
	if len(vals) == 0 || len(vals) > maxListValues {
		return nil, fmt.Errorf("--%s %q: give 1 to %d sizes", flag, s, maxListValues)
	}
	for i, v := range vals {
		vals[i] = math.Round(v)
		if vals[i] < 1 || vals[i] > 1e12 {
			return nil, fmt.Errorf("--%s: %s tokens is not a working-set size in [1, 10^12]", flag, Format(v))
		}
	}
	return vals, nil
}

// validateWorkingSet checks a working-set sweep's options.
func (o *Options) validateWorkingSet() error {
	name := o.Config.Workload()
	if _, ok := workload.WorkingSetterOf(name); !ok {
		return fmt.Errorf("--sweep-working-set sizes %s; %s has no working set to size", strings.Join(workload.WorkingSetWorkloads(), ", "), name)
	}
	if len(o.Values) == 0 {
		return fmt.Errorf("--sweep-working-set: empty list")
	}
	if !(o.HitTarget > 0 && o.HitTarget <= 1) {
		return fmt.Errorf("--hit-target must be in (0, 1] (got %v)", o.HitTarget)
	}
	if o.Search {
		if !(o.Precision > 0 && o.Precision < 1) {
			return fmt.Errorf("--search-precision must be in (0, 1) (got %v)", o.Precision)
		}
		if o.MaxCells < 1 || o.MaxCells > 1000 {
			return fmt.Errorf("--search-max-cells must be in [1, 1000] (got %d)", o.MaxCells)
		}
	}
	return nil
}

// size is what the cell at working-set size v sends: its config sized
// by the workload (a clone of the base), nil config on error.
func (s *sweeper) size(v float64) (*config.Config, workload.WorkingSet, error) {
	ws, _ := workload.WorkingSetterOf(s.o.Config.Workload())
	c := s.o.Config.Clone()
	got, err := ws.SizeWorkingSet(c, v, s.tokensPerGB())
	if err != nil {
		return nil, got, err
	}
	return c, got, nil
}

// tokensPerGB is the one the first cell resolved, else the config's.
func (s *sweeper) tokensPerGB() int {
	if s.tpg > 0 {
		return s.tpg
	}
	return s.o.Config.Settings().TokensPerGB
}

// gb is tokens in GB at the sweep's tokens per GB, nil when unknown.
func (s *sweeper) gb(tokens *float64) *float64 {
	t := s.tokensPerGB()
	if tokens == nil || t <= 0 {
		return nil
	}
	g := *tokens / float64(t)
	return &g
}

// workingSetFigures fills a cell's working-set keys from its run.
func (s *sweeper) workingSetFigures(c *Cell, ws workload.WorkingSet, fin bench.Finish) {
	tok := float64(ws.Tokens)
	wc := &record.WorkingSetCell{WorkingSetTokens: tok, WorkingSetGB: s.gb(&tok), Units: ws.Count, UnitTokens: ws.Unit, Unit: ws.What}
	c.WorkingSetCell = wc
	sum := fin.Summary
	if sum == nil {
		return
	}
	if n := sum.Results.SuccessfulRequests; n > 0 {
		wc.IdealHitRatio = ws.IdealHitRatio(float64(sum.Results.TotalInputTokens) / float64(n))
	}
	if b := sum.ByCacheState; b != nil && b.Reused.Requests > 0 {
		wc.ReusedTTFTP50ms = b.Reused.TTFTms.Get(50)
		if wc.ReusedTTFTP50ms == nil {
			wc.ReusedTTFTP50ms = b.Reused.TTFTms.Median
		}
	}
}

// meetsHitTarget reports whether a cell's hit ratio is at least the
// target times its ideal.
func meetsHitTarget(c Cell, target float64) bool {
	w := c.WorkingSetCell
	return w != nil && c.HitRatio != nil && w.IdealHitRatio != nil && *c.HitRatio >= target**w.IdealHitRatio
}

// JudgeWorkingSet sets a working-set cell's status: cut and interrupted
// as any cell's, else pass when its hit ratio meets target x ideal and
// no measured request failed, else fail with the figures.
func JudgeWorkingSet(c *Cell, target float64, recordErr string) {
	Judge(c, Criteria{Dimension: WorkingSet}, recordErr)
	switch c.Status {
	case record.CellCut, record.CellInterrupted:
		return
	}
	c.Reasons = []string{}
	switch {
	case c.TotalRequests == 0 || c.FailedRequests == c.TotalRequests:
		c.Status = record.CellFail
		c.Reasons = append(c.Reasons, "no measured request succeeded")
	case meetsHitTarget(*c, target):
		c.Status = record.CellPass
	default:
		c.Status = record.CellFail
		ideal := "n/a"
		if c.WorkingSetCell != nil && c.IdealHitRatio != nil {
			ideal = pct(c.IdealHitRatio) + "%"
		}
		hr := "n/a"
		if c.HitRatio != nil {
			hr = pct(c.HitRatio) + "%"
		}
		c.Reasons = append(c.Reasons, fmt.Sprintf("hit ratio %s is under %.0f%% of the ideal %s: the working set no longer fits", hr, target*100, ideal))
	}
}

// reusedBase is the reused TTFT p50 the fast tier is held to: the
// smallest cell's, or a passing cell's that is lower (a working set that
// fits is never served slower for being larger, so a lower figure is
// the fast tier's own speed without the noise of the smallest cell's
// few requests; docs/load.md).
func reusedBase(cells []Cell) *float64 {
	var best *Cell
	for i := range cells {
		c := &cells[i]
		if c.WorkingSetCell == nil || c.ReusedTTFTP50ms == nil {
			continue
		}
		if best == nil || c.WorkingSetTokens < best.WorkingSetTokens {
			best = c
		}
	}
	if best == nil {
		return nil
	}
	base := *best.ReusedTTFTP50ms
	for _, c := range cells {
		if c.WorkingSetCell != nil && c.ReusedTTFTP50ms != nil && c.Status == record.CellPass && *c.ReusedTTFTP50ms < base {
			base = *c.ReusedTTFTP50ms
		}
	}
	return &base
}

// fast reports whether a passing cell's reused requests are served at
// the smallest cell's speed (under FastTierFactor times its TTFT p50).
func fast(c Cell, base *float64) bool {
	return c.Status == record.CellPass && base != nil && c.WorkingSetCell != nil && c.ReusedTTFTP50ms != nil &&
		*c.ReusedTTFTP50ms < FastTierFactor**base
}

// wsBounds are the largest working set with ok and the smallest above
// it without (0 when none), over cells with working-set figures.
func wsBounds(cells []Cell, ok func(Cell) bool) (lo, hi float64) {
	for _, c := range cells {
		if c.WorkingSetCell != nil && ok(c) && c.WorkingSetTokens > lo {
			lo = c.WorkingSetTokens
		}
	}
	for _, c := range cells {
		if c.WorkingSetCell != nil && !ok(c) && c.WorkingSetTokens > lo && (hi == 0 || c.WorkingSetTokens < hi) {
			hi = c.WorkingSetTokens
		}
	}
	return lo, hi
}

// workingSetPlan is the search: from the first value, double while
// cells pass, then bisect between the largest pass and the smallest
// fail (the capacity); then bisect between the largest fast cell and
// the smallest slower one (the fast tier). Each step ends when its
// bounds are within the precision or the next size sends the same
// whole units as a cell already run (one document apart).
func (s *sweeper) workingSetPlan() func(i int) (float64, bool) {
	pass := func(c Cell) bool { return c.Status == record.CellPass }
	return func(i int) (float64, bool) {
		if i == 0 {
			return s.o.Values[0], true
		}
		if i >= s.o.MaxCells {
			return 0, false
		}
		if v, ok := s.bisect(pass, true); ok {
			return v, true
		}
		base := reusedBase(s.f.Cells)
		if base == nil {
			return 0, false
		}
		return s.bisect(func(c Cell) bool { return fast(c, base) }, false)
	}
}

// bisect is the next size between the bounds of ok, doubling when
// nothing failed yet (grow), false when the bounds are close enough.
func (s *sweeper) bisect(ok func(Cell) bool, grow bool) (float64, bool) {
	lo, hi := wsBounds(s.f.Cells, ok)
	var v float64
	switch {
	case hi == 0 && !grow:
		return 0, false
	case hi == 0:
		v = 2 * lo
	case lo > 0 && hi-lo <= s.o.Precision*hi:
		return 0, false
	default:
		v = math.Round((lo + hi) / 2)
	}
	if v < 1 || v > 1e12 {
		return 0, false
	}
	_, ws, err := s.size(v)
	if err != nil {
		return 0, false
	}
	for _, c := range s.f.Cells {
		if c.WorkingSetCell != nil && c.WorkingSetTokens == float64(ws.Tokens) {
			return 0, false // one unit apart: as close as sizes go
		}
	}
	return v, true
}

// workingSetResult is what the cells found: the capacity and the fast
// tier, in tokens and GB, beside what the engine declared.
func (s *sweeper) workingSetResult() *Result {
	r := &Result{UndeliveredAbove: []record.Undelivered{}, WorkingSetResult: &record.WorkingSetResult{Declared: s.declared}}
	w := r.WorkingSetResult
	base := reusedBase(s.f.Cells)
	for _, c := range s.f.Cells {
		if c.WorkingSetCell == nil || c.Status != record.CellPass {
			continue
		}
		t := c.WorkingSetTokens
		if w.CapacityTokens == nil || t > *w.CapacityTokens {
			w.CapacityTokens = &t
			v := c.Value
			r.MaxValue = &v
		}
		if fast(c, base) && (w.FastTierTokens == nil || t > *w.FastTierTokens) {
			w.FastTierTokens = &t
		}
	}
	w.CapacityGB, w.FastTierGB = s.gb(w.CapacityTokens), s.gb(w.FastTierTokens)
	return r
}

// WorkingSetCSVHeader are the columns a working-set sweep's sweep.csv
// adds after CSVHeader.
var WorkingSetCSVHeader = []string{"working_set_tokens", "working_set_gb", "ideal_hit_ratio", "reused_ttft_p50_ms", "units", "unit_tokens", "unit"}

// workingSetRow is a cell's working-set columns (empty when it has none).
func workingSetRow(c Cell, f func(*float64) string) []string {
	w := c.WorkingSetCell
	if w == nil {
		return make([]string, len(WorkingSetCSVHeader))
	}
	t := w.WorkingSetTokens
	return []string{f(&t), f(w.WorkingSetGB), f(w.IdealHitRatio), f(w.ReusedTTFTP50ms), strconv.Itoa(w.Units), strconv.Itoa(w.UnitTokens), w.Unit}
}

// writeWorkingSetTable prints a working-set sweep: one row per cell,
// why each failing cell failed, then what was found beside what the
// engine declared.
func writeWorkingSetTable(w io.Writer, f *File) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "WORKING SET TOKENS\tGB\tUNITS\tOK/FAIL\tHIT %%\tIDEAL %%\tREUSED P50 TTFT MS\tP50 TTFT MS\tP99 TTFT MS\tSTATUS\t\n")
	for _, c := range f.Cells {
		ws, gb, units, ideal, reused := Format(c.Value), "n/a", "n/a", "n/a", "n/a"
		if x := c.WorkingSetCell; x != nil {
			ws, gb, units, ideal, reused = Format(x.WorkingSetTokens), num(x.WorkingSetGB), fmt.Sprintf("%d %s", x.Units, unitWord(x.Units, x.Unit)), pct(x.IdealHitRatio), num(x.ReusedTTFTP50ms)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", ws, gb, units,
			c.TotalRequests-c.FailedRequests, c.FailedRequests, pct(c.HitRatio), ideal, reused, num(c.P50TTFTms), num(c.P99TTFTms), c.Verdict(nil))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range f.Cells {
		if st := c.Verdict(nil); len(c.Reasons) > 0 && st != record.CellPass && st != record.CellDone {
			fmt.Fprintf(w, "working set %s %s: %s\n", Format(wsTokens(c)), st, strings.Join(c.Reasons, "; "))
		}
	}
	if f.Sweep.Interrupted {
		fmt.Fprintln(w, "interrupted: the cells above ran")
	}
	if c := Cut(f); c != nil {
		fmt.Fprintf(w, "stopped at working set %s: its run record could not be written completely, so no further cell ran\n", Format(c.Value))
	}
	for _, l := range WorkingSetLines(f) {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}

// WorkingSetLines say what a working-set sweep found, each figure
// beside what the engine declared: capacity (every tier that reports
// hits), the fast tier, and the declaration's source.
func WorkingSetLines(f *File) []string {
	var r *record.WorkingSetResult
	if f.Result != nil {
		r = f.Result.WorkingSetResult
	}
	if r == nil {
		return []string{"found: nothing (no cell met the hit target)"}
	}
	how := "search"
	if !f.Sweep.Search {
		how = "list (the largest listed size that passed, not a search)"
	}
	target := DefaultHitTarget
	if f.Sweep.HitTarget != nil {
		target = *f.Sweep.HitTarget
	}
	d := r.Declared
	var dTotal, dGPU *float64
	if d != nil {
		dTotal, dGPU = d.TotalTokens, d.GPUTokens
	}
	capText := tokGB(r.CapacityTokens, r.CapacityGB)
	if r.CapacityTokens != nil && !failedAbove(f.Cells, *r.CapacityTokens) {
		capText = "at least " + capText + " (no larger cell failed)"
	}
	lines := []string{
		fmt.Sprintf("capacity (hit ratio >= %.0f%% of ideal, %s): %s   declared: %s", target*100, how, capText, declTok(dTotal, d)),
		fmt.Sprintf("fast tier (reused TTFT p50 under %gx the smallest cell's): %s   declared GPU: %s", FastTierFactor, tokGB(r.FastTierTokens, r.FastTierGB), declTok(dGPU, d)),
	}
	if d != nil {
		lines = append(lines, fmt.Sprintf("declared by: %s (GPU %s, CPU %s)", d.Source, optTok(d.GPUTokens), optTok(d.CPUTokens)))
	} else {
		lines = append(lines, "declared: the engine says nothing of its cache size (no simulator tiers, vllm:cache_config_info or LMCache /status)")
	}
	return lines
}

func tokGB(t, gb *float64) string {
	if t == nil {
		return "n/a"
	}
	if gb == nil {
		return Format(*t) + " tokens"
	}
	return fmt.Sprintf("%s tokens (%.3g GB)", Format(*t), *gb)
}

func declTok(t *float64, d *record.Declared) string {
	if d == nil || t == nil {
		return "n/a"
	}
	return Format(math.Round(*t)) + " tokens"
}

func optTok(t *float64) string {
	if t == nil {
		return "n/a"
	}
	return Format(math.Round(*t))
}

// failedAbove reports whether a cell larger than t failed.
func failedAbove(cells []Cell, t float64) bool {
	for _, c := range cells {
		if c.WorkingSetCell != nil && c.WorkingSetTokens > t && c.Status == record.CellFail {
			return true
		}
	}
	return false
}

// unitWord is "document" for one of "documents".
func unitWord(n int, unit string) string {
	if n == 1 {
		return strings.TrimSuffix(unit, "s")
	}
	return unit
}

// wsTokens is the working set a cell sent (the size asked when it has
// no working-set figures).
func wsTokens(c Cell) float64 {
	if c.WorkingSetCell != nil {
		return c.WorkingSetTokens
	}
	return c.Value
}
