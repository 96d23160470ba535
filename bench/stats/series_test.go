package stats

import (
	"testing"
	"time"
	"unsafe"

	"github.com/kvbench/kvbench/bench/sender"
)

// withCounts sets r's prompt and cached tokens.
func withCounts(r *sender.Result, prompt, cached int) *sender.Result {
	r.PromptTokens, r.CachedTokens = iptr(prompt), iptr(cached)
	return r
}

// The live series carries each second's prompt and cached tokens, the
// same seconds and ratios as the summary's series: failed requests with
// counts count, counts that cannot be (cached over prompt, negative,
// missing) do not, and a failed request's prompt is no input rate.
func TestLiveSeriesHitCounts(t *testing.T) {
	now := at(0)
	c := NewWithClock(func() time.Time { return now })
	bad := failed("f", 1.1, 0.2, "http_500")
	c.Add(withCounts(res("a", 0.1, 0.01, 0.2), 1000, 900)) // second 0
	c.Add(withCounts(res("b", 0.3, 0.01, 0.2), 1000, 500)) // second 0
	c.Add(withCounts(bad, 400, 400))                       // second 1, failed
	c.Add(withCounts(res("c", 1.2, 0.01, 0.2), 600, 0))    // second 1
	c.Add(withCounts(res("d", 2.1, 0.01, 0.2), 100, 150))  // second 2: cached > prompt
	c.Add(withCounts(res("e", 2.2, 0.01, 0.2), 100, -1))   // second 2: negative
	c.Add(res("g", 3.1, 0.01, 0.2))                        // second 3: no counts
	c.Add(withCounts(res("h", 4.1, 0.01, 0.2), 0, 0))      // second 4: empty prompt
	now = at(5.5)
	live := c.Snapshot().Series
	want := []struct {
		prompt, cached int
		ratio          float64
		ok             bool
	}{{2000, 1400, 0.7, true}, {1000, 400, 0.4, true}, {0, 0, 0, false}, {0, 0, 0, false}, {0, 0, 0, false}}
	if len(live) != len(want) {
		t.Fatalf("%d live points, want %d: %+v", len(live), len(want), live)
	}
	final := c.Final(ClientInfo{}).Series
	for i, w := range want {
		p := live[i]
		r, ok := p.HitRatio()
		if p.PromptTokens != w.prompt || p.CachedTokens != w.cached || ok != w.ok || ok && !approx(r, w.ratio) {
			t.Errorf("second %d: %+v (hit ratio %v %v), want %+v", i, p, r, ok, w)
		}
		if f := final[i]; f.PromptTokens != p.PromptTokens || f.CachedTokens != p.CachedTokens || (f.HitRatio != nil) != ok {
			t.Errorf("second %d: live %+v, summary %+v", i, p, f)
		}
	}
	if p := live[1]; p.Failed != 1 || p.Requests != 2 || !approx(p.InputTPS, 600) {
		t.Errorf("second 1: %+v, want 2 requests, 1 failed, input 600 tok/s", p)
	}
}

// Seconds whose entries are dropped keep their counts, and a late result
// still adds its own.
func TestLiveSeriesHitCountsFrozen(t *testing.T) {
	now := at(0)
	c := NewWithClock(func() time.Time { return now })
	for sec := range 100 {
		c.Add(withCounts(res("r", float64(sec)+0.1, 0.01, 0.5), 100, sec%2*100))
	}
	now = at(100.5)
	s := c.Snapshot().Series
	if len(s) != 100 {
		t.Fatalf("%d points", len(s))
	}
	for sec, p := range s {
		if r, ok := p.HitRatio(); !ok || !approx(r, float64(sec%2)) {
			t.Fatalf("second %d: %+v", sec, p)
		}
	}
	if b := &c.series.ring[3]; !b.frozen {
		t.Fatalf("second 3 still holds its entries")
	}
	c.Add(withCounts(res("late", 3.1, 0.01, 0.5), 300, 300))
	if p := c.Snapshot().Series[3]; p.PromptTokens != 400 || p.CachedTokens != 400 || p.Requests != 2 {
		t.Errorf("late result in a frozen second: %+v", p)
	}
}

// The window's memory (seriesExact's note, docs/client-performance.md)
// holds while an entry stays 24 bytes.
func TestSeriesEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(entry{}); n != 24 {
		t.Errorf("an entry is %d bytes, want 24", n)
	}
}
