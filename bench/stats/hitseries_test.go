package stats

import (
	"testing"

	"github.com/kvbench/kvbench/bench/sender"
)

// The summary's series: the hit ratio of each second's finished
// requests, null in a second without token counts, warmups left out.
func TestFinalSeriesHitRatio(t *testing.T) {
	c := New()
	warm := cold(res("w", 0, 0.1, 0.2), 100)
	warm.Phase = sender.PhaseWarmup
	c.Add(warm)
	hit := func(id string, sub float64, prompt, cached int) *sender.Result {
		r := res(id, sub, 0.01, 0.1)
		r.PromptTokens, r.CachedTokens, r.CacheState = iptr(prompt), iptr(cached), sender.StateReused
		return r
	}
	c.Add(hit("a", 0.2, 100, 90))             // second 0
	c.Add(hit("b", 0.5, 100, 70))             // second 0
	c.Add(cold(res("c", 1.3, 0.1, 0.2), 200)) // second 1
	c.Add(failed("d", 2.1, 0.2, "http_500"))  // second 2: no counts
	c.Add(hit("e", 3.2, 50, 50))              // second 3
	s := c.Final(ClientInfo{}).Series
	if len(s) != 4 {
		t.Fatalf("series %+v", s)
	}
	want := []struct {
		req, failed int
		hit         *float64
	}{{2, 0, fptr(0.8)}, {1, 0, fptr(0)}, {1, 1, nil}, {1, 0, fptr(1)}}
	for i, w := range want {
		p := s[i]
		if p.Second != i || p.Requests != w.req || p.Failed != w.failed {
			t.Errorf("second %d: %+v", i, p)
		}
		if (w.hit == nil) != (p.HitRatio == nil) || w.hit != nil && !approx(*p.HitRatio, *w.hit) {
			t.Errorf("second %d: hit ratio %v, want %v", i, p.HitRatio, w.hit)
		}
	}
	if s[2].TTFTP50ms != nil || s[0].TTFTP50ms == nil || !approx(*s[0].TTFTP50ms, 10) {
		t.Errorf("TTFT p50 %v %v", s[0].TTFTP50ms, s[2].TTFTP50ms)
	}
	if got := New().Final(ClientInfo{}).Series; got == nil || len(got) != 0 {
		t.Errorf("empty run: %v", got)
	}
}
