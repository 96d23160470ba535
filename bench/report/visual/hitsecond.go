package visual

import (
	"math"
	"slices"

	"github.com/kvbench/kvbench/bench/stats"
)

// HitSpan is one point of a run's hit ratio over time as a chart draws
// it: the summary's `series` (spec/load.md, the hit ratio per second, so
// a working-set cell shows when eviction starts), seconds from the first
// measured submit. Ratio is nil for a span with no valid counts (a gap,
// never 0).
type HitSpan struct {
	// From and To are the span's seconds: [From, To).
	From, To int
	Ratio    *float64
}

// maxSeriesSecond is the last second a series can hold (a day; the
// collector keeps no more), so a hostile second cannot stretch an axis.
const maxSeriesSecond = 86400

// HitSpans cleans a summary's series for a chart and merges whole
// seconds into at most maxSpans spans of equal width (cached over prompt
// tokens of the seconds merged; the mean of their ratios where a second
// has no consistent counts). Everything in it came from a file: a second
// outside a day, a ratio outside [0, 1] or not finite, and a second
// listed twice are left out. Nil when no second has a hit ratio.
func HitSpans(series []stats.SecondPoint, maxSpans int) []HitSpan {
	type sec struct {
		at             int
		ratio          float64
		prompt, cached float64 // prompt 0: no consistent counts
	}
	var ok []sec
	seen := map[int]bool{}
	last := -1
	for _, p := range series {
		if p.Second < 0 || p.Second > maxSeriesSecond || seen[p.Second] {
			continue
		}
		seen[p.Second] = true
		last = max(last, p.Second)
		if p.HitRatio == nil || math.IsNaN(*p.HitRatio) || *p.HitRatio < 0 || *p.HitRatio > 1 {
			continue
		}
		s := sec{at: p.Second, ratio: *p.HitRatio}
		if p.PromptTokens > 0 && p.CachedTokens >= 0 && p.CachedTokens <= p.PromptTokens {
			s.prompt, s.cached = float64(p.PromptTokens), float64(p.CachedTokens)
		}
		ok = append(ok, s)
	}
	if len(ok) == 0 {
		return nil
	}
	slices.SortFunc(ok, func(a, b sec) int { return a.at - b.at })
	maxSpans = max(maxSpans, 1)
	width := max(1, (last+maxSpans)/maxSpans) // ceil((last+1)/maxSpans)
	out := make([]HitSpan, 0, min(last/width+1, maxSpans))
	for i := 0; i < len(ok); {
		from := ok[i].at / width * width
		var prompt, cached, sum float64
		n, counted := 0, 0
		for ; i < len(ok) && ok[i].at < from+width; i++ {
			s := ok[i]
			sum += s.ratio
			n++
			if s.prompt > 0 {
				prompt += s.prompt
				cached += s.cached
				counted++
			}
		}
		r := sum / float64(n)
		if counted == n && prompt > 0 {
			r = cached / prompt
		}
		r = math.Min(math.Max(r, 0), 1)
		// A span without a ratio between two with one is a gap.
		if k := len(out); k > 0 && out[k-1].To < from {
			out = append(out, HitSpan{From: out[k-1].To, To: from})
		}
		out = append(out, HitSpan{From: from, To: from + width, Ratio: &r})
	}
	return out
}
