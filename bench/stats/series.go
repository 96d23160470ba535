package stats

import (
	"math"
	"sort"
	"time"

	"github.com/kvbench/kvbench/bench/sender"
)

// SeriesWindow is how many completed seconds Snapshot.Series keeps.
const SeriesWindow = 600

// seriesExact is how many completed seconds keep their results' entries,
// to be bucketed again should the origin move; older seconds keep only
// their point, so the series holds a minute of entries whatever the rate
// (an entry is 24 bytes: at 10,000 requests/s, 14 MB rather than 144 MB
// for the window). An
// origin moving after that (a request submitted before the first one
// that finished, and still running a minute later) leaves the older
// points where they were.
const seriesExact = 60

// Point is one whole second of the measured phase: the requests that
// finished in it.
type Point struct {
	// Second counts from the first measured submit (0 is the first second).
	Second int
	// Requests finished in this second, Failed of them failed.
	Requests, Failed int
	// TTFTP50ms (linear) and TTFTMaxms of the successful requests with a
	// first token that finished in this second; 0 when there were none.
	TTFTP50ms, TTFTMaxms float64
	// InputTPS and OutputTPS are the prompt and output tokens of the
	// successful requests that finished in this second (tokens per second,
	// since the bucket is one second wide).
	InputTPS, OutputTPS float64
	// PromptTokens and CachedTokens total the requests (failed ones too)
	// with valid counts, cached no more than prompt, as the summary's
	// series does; both 0 when none reported them.
	PromptTokens, CachedTokens int
}

// HitRatio is the second's cached / prompt tokens; false when no
// request that finished in it reported its counts (or every prompt was
// empty).
func (p Point) HitRatio() (float64, bool) {
	if p.PromptTokens <= 0 {
		return 0, false
	}
	return float64(p.CachedTokens) / float64(p.PromptTokens), true
}

// entry is what a bucket keeps of a measured result, in 24 bytes (the
// window's memory above): a failed request is one whose out is -1.
type entry struct {
	at     time.Duration // finish, from the series anchor
	ttftMs float32       // NaN: none
	in     int32         // prompt tokens (inputTokens)
	out    int32         // output tokens; -1: the request failed
	cached int32         // cached tokens; -1: no valid counts
}

// newEntry is r's entry without its finish, TTFT and output tokens
// (the collector sets those of a successful request).
func newEntry(r *sender.Result) entry {
	e := entry{ttftMs: float32(math.NaN()), in: int32(min(inputTokens(r), math.MaxInt32)), cached: -1}
	if !r.Successful {
		e.out = -1
	}
	if _, k, ok := hitCounts(r); ok {
		e.cached = k
	}
	return e
}

func (e entry) failed() bool { return e.out < 0 }

// hits counts e's prompt and cached tokens in p when it has them.
func (p *Point) hits(e entry) {
	if e.cached >= 0 {
		p.PromptTokens = addCount(p.PromptTokens, int(e.in))
		p.CachedTokens = addCount(p.CachedTokens, int(e.cached))
	}
}

type bucket struct {
	sec     int
	used    bool
	dirty   bool
	frozen  bool // entries dropped; pt is final but for late arrivals
	entries []entry
	pt      Point
}

// The ring holds the completed window, the second in progress and one
// more for a result stamped just past the clock's now.
const ringSize = SeriesWindow + 2

// series buckets measured results by the whole second since the first
// measured submit. Results arrive in finish order, so a request submitted
// before the first one to finish can move the origin earlier; buckets keep
// their entries' exact finish instants, so the next snapshot re-buckets them
// against the new origin.
type series struct {
	anchor   time.Time     // submit of the first measured result added
	set      bool          // anchor is set
	origin   time.Duration // earliest measured submit, from anchor (<= 0)
	rebucket bool
	ring     [ringSize]bucket
}

func (s *series) add(submit, finish time.Time, e entry) {
	if !s.set {
		s.anchor, s.set = submit, true
	}
	if o := submit.Sub(s.anchor); o < s.origin {
		s.origin, s.rebucket = o, true
	}
	e.at = finish.Sub(s.anchor)
	s.place(e)
}

func (s *series) index(at time.Duration) int {
	d := at - s.origin
	if d < 0 {
		return 0
	}
	return int(d / time.Second)
}

func (s *series) place(e entry) {
	sec := s.index(e.at)
	b := &s.ring[sec%ringSize]
	switch {
	case !b.used || b.sec < sec:
		b.sec, b.used, b.frozen, b.entries = sec, true, false, b.entries[:0]
	case b.sec > sec:
		return // older than the window
	}
	if b.frozen {
		b.pt.fold(e)
		return
	}
	b.entries = append(b.entries, e)
	b.dirty = true
}

// fold counts e in a point whose entries are gone: its TTFT counts in
// the maximum, not in the median.
func (p *Point) fold(e entry) {
	p.Requests++
	p.hits(e)
	if e.failed() {
		p.Failed++
		return
	}
	p.InputTPS += float64(e.in)
	p.OutputTPS += float64(e.out)
	if !math.IsNaN(float64(e.ttftMs)) {
		p.TTFTMaxms = max(p.TTFTMaxms, widen(e.ttftMs))
	}
}

func (s *series) rebuild() {
	var all []entry
	for i := range s.ring {
		b := &s.ring[i]
		if b.frozen {
			continue
		}
		if b.used {
			all = append(all, b.entries...)
		}
		b.used, b.dirty, b.entries = false, false, b.entries[:0]
	}
	for _, e := range all {
		s.place(e)
	}
	s.rebucket = false
}

// points returns the completed seconds at now, at most SeriesWindow.
func (s *series) points(now time.Time) []Point {
	if !s.set {
		return nil
	}
	if s.rebucket {
		s.rebuild()
	}
	cur := s.index(now.Sub(s.anchor))
	from := max(0, cur-SeriesWindow)
	out := make([]Point, 0, cur-from)
	for sec := from; sec < cur; sec++ {
		b := &s.ring[sec%ringSize]
		if !b.used || b.sec != sec {
			out = append(out, Point{Second: sec})
			continue
		}
		if b.dirty {
			b.pt = summarise(sec, b.entries)
			b.dirty = false
		}
		if !b.frozen && sec < cur-seriesExact {
			b.frozen, b.entries = true, nil
		}
		out = append(out, b.pt)
	}
	return out
}

func summarise(sec int, es []entry) Point {
	p := Point{Second: sec, Requests: len(es)}
	ttfts := make([]float64, 0, len(es))
	for _, e := range es {
		p.hits(e)
		if e.failed() {
			p.Failed++
			continue
		}
		p.InputTPS += float64(e.in)
		p.OutputTPS += float64(e.out)
		if !math.IsNaN(float64(e.ttftMs)) {
			ttfts = append(ttfts, widen(e.ttftMs))
		}
	}
	if len(ttfts) > 0 {
		sort.Float64s(ttfts)
		p.TTFTP50ms = Linear(ttfts, 50)
		p.TTFTMaxms = ttfts[len(ttfts)-1]
	}
	return p
}
