package load

import (
	"sort"
	"time"

	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/stats"
)

// sustain follows what a sweep needs to tell a load that was sustained
// from one that was merely sent (spec/load.md "kvbench sweep"): when the
// measured requests finished, and their TTFT in the order they went out.
// The Tracker holds one under its lock.
type sustain struct {
	done              int       // successful measured requests
	firstEnd, lastEnd time.Time // their ends
	ttft              []sentTTFT
	anchor            time.Time // the first submit with a TTFT: ttft's submits are from it
	keepOrder         bool      // keep ttft (Tracker.KeepSentOrder)
}

// sentTTFT is 16 bytes without a pointer: a million of them are 16 MB
// the collector never scans.
type sentTTFT struct {
	submit time.Duration // since the anchor (monotonic, as time.Time.Sub)
	ms     float64
}

func (s *sustain) add(r *sender.Result) {
	if !r.Successful {
		return
	}
	end := r.Finish
	if end.IsZero() {
		end = r.Submit.Add(time.Duration(max(r.RequestLatency, 0) * float64(time.Second)))
	}
	s.done++
	if s.firstEnd.IsZero() || end.Before(s.firstEnd) {
		s.firstEnd = end
	}
	if end.After(s.lastEnd) {
		s.lastEnd = end
	}
	if r.TTFT != nil && s.keepOrder {
		if len(s.ttft) == 0 {
			s.anchor = r.Submit
		}
		s.ttft = append(s.ttft, sentTTFT{submit: r.Submit.Sub(s.anchor), ms: *r.TTFT * 1000})
	}
}

// completionRate is the successful measured requests over the span in
// which they finished, from the first end to the last: the rate the
// engine completed them at. It is measured like achieved_rate (requests
// over the span of their submits), so a load the engine keeps up with
// completes at the rate it was sent, whatever one request's latency; nil
// with fewer than two.
func (s *sustain) completionRate() *float64 {
	if s.done < 2 || !s.lastEnd.After(s.firstEnd) {
		return nil
	}
	return ptr(float64(s.done) / s.lastEnd.Sub(s.firstEnd).Seconds())
}

// minThird is the fewest requests a third may hold for its TTFT p50 to
// be compared.
const minThird = 3

// thirds are the TTFT p50 (ms) of the first and of the last third of the
// successful measured requests, in the order they were sent; nil when
// there are fewer than 3 x minThird.
func (s *sustain) thirds() (first, last *float64) {
	k := len(s.ttft) / 3
	if k < minThird {
		return nil, nil
	}
	byOrder := append([]sentTTFT(nil), s.ttft...)
	sort.SliceStable(byOrder, func(i, j int) bool { return byOrder[i].submit < byOrder[j].submit })
	p50 := func(part []sentTTFT) *float64 {
		ms := make([]float64, len(part))
		for i, x := range part {
			ms[i] = x.ms
		}
		sort.Float64s(ms)
		return ptr(stats.Linear(ms, 50))
	}
	return p50(byOrder[:k]), p50(byOrder[len(byOrder)-k:])
}

// TTFTThirds is the TTFT p50 (ms) of the first and of the last third of
// the successful measured requests in the order they were sent (nil with
// fewer than 9): a queue that grows through a run shows as a last third
// slower than the first.
func (t *Tracker) TTFTThirds() (first, last *float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sus.thirds()
}
