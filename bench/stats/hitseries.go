package stats

import (
	"math"
	"slices"
	"time"

	"github.com/kvbench/kvbench/bench/sender"
)

// SecondPoint is one whole second of a run's measured phase in the
// summary's `series` (spec/load.md: the hit ratio per second, so a
// working-set cell shows when eviction starts): the measured requests
// that finished in it.
type SecondPoint struct {
	// Second counts from the first measured submit (0 is the first).
	Second   int `json:"second"`
	Requests int `json:"requests"`
	Failed   int `json:"failed"`
	// PromptTokens and CachedTokens total the requests with valid
	// counts; HitRatio is their quotient, null when there were none.
	PromptTokens int      `json:"prompt_tokens"`
	CachedTokens int      `json:"cached_tokens"`
	HitRatio     *float64 `json:"hit_ratio"`
	// TTFTP50ms (linear) of the successful requests with a first token,
	// null when there were none.
	TTFTP50ms *float64 `json:"ttft_p50_ms"`
}

// maxSeriesSeconds bounds the summary's series (a day of seconds); a
// longer run keeps its first day.
const maxSeriesSeconds = 86400

// hitEntry is what the whole-run series keeps of a measured result: 24
// bytes without a pointer (a million requests are 24 MB the collector
// never scans), its finish as an offset from the collector's anchor (the
// first measured submit it saw, monotonic as time.Time.Sub is). Its
// submit is not kept: the series needs only the earliest, which the
// collector keeps (hitFirst).
type hitEntry struct {
	finish         time.Duration // since the anchor
	prompt, cached int32         // -1: no valid counts
	ttftMs         float32
	failed         bool
}

// hitCounts are r's prompt and cached tokens when both are valid counts
// and cached is no more than prompt: the one rule the series, live and
// whole-run, count hits by.
func hitCounts(r *sender.Result) (prompt, cached int32, ok bool) {
	p, k := r.PromptTokens, r.CachedTokens
	if p == nil || k == nil || !validCount(*p) || !validCount(*k) || *k > *p {
		return 0, 0, false
	}
	return int32(min(*p, math.MaxInt32)), int32(min(*k, math.MaxInt32)), true
}

// hitEntryOf is r's entry, its finish from anchor.
func hitEntryOf(r *sender.Result, anchor, finish time.Time) hitEntry {
	e := hitEntry{finish: finish.Sub(anchor), prompt: -1, cached: -1, ttftMs: float32(math.NaN()), failed: !r.Successful}
	if p, k, ok := hitCounts(r); ok {
		e.prompt, e.cached = p, k
	}
	if r.Successful && r.TTFT != nil {
		e.ttftMs = float32(finite(*r.TTFT * 1000))
	}
	return e
}

// secondSeries buckets entries by the whole second of their finish
// since first, the earliest measured submit (an offset from the same
// anchor); seconds without a finish are points with no requests. Each
// second's TTFTs are sorted in one array of 4 bytes a request (counted
// into place, never grown), its median widened from there.
func secondSeries(es []hitEntry, first time.Duration) []SecondPoint {
	if len(es) == 0 {
		return []SecondPoint{}
	}
	sec := func(e hitEntry) int {
		d := e.finish - first
		if d < 0 {
			return 0
		}
		return min(int(d/time.Second), maxSeriesSeconds-1)
	}
	last := 0
	for _, e := range es {
		last = max(last, sec(e))
	}
	pts := make([]SecondPoint, last+1)
	// at[i]..at[i+1] is second i's part of ttfts.
	at := make([]int, last+2)
	for i := range pts {
		pts[i].Second = i
	}
	for _, e := range es {
		p := &pts[sec(e)]
		p.Requests++
		if e.failed {
			p.Failed++
		}
		if e.prompt >= 0 {
			p.PromptTokens = addCount(p.PromptTokens, int(e.prompt))
			p.CachedTokens = addCount(p.CachedTokens, int(e.cached))
		}
		if !math.IsNaN(float64(e.ttftMs)) {
			at[p.Second+1]++
		}
	}
	for i := 1; i < len(at); i++ {
		at[i] += at[i-1]
	}
	ttfts := make([]float32, at[len(at)-1])
	next := slices.Clone(at[:len(at)-1])
	for _, e := range es {
		if !math.IsNaN(float64(e.ttftMs)) {
			s := sec(e)
			ttfts[next[s]] = e.ttftMs
			next[s]++
		}
	}
	for i := range pts {
		if pts[i].PromptTokens > 0 {
			h := float64(pts[i].CachedTokens) / float64(pts[i].PromptTokens)
			pts[i].HitRatio = &h
		}
		if t := ttfts[at[i]:at[i+1]]; len(t) > 0 {
			slices.Sort(t)
			v := linearWidened(t, 50)
			pts[i].TTFTP50ms = &v
		}
	}
	return pts
}
