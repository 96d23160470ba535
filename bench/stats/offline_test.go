package stats

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/kvbench/kvbench/bench/sender"
)

// mixedResults are n results of every cache state, failures among them,
// finishing out of submit order, the earliest submit not the first
// added: what a merge or a run hands the collector.
func mixedResults(n int) []*sender.Result {
	var out []*sender.Result
	for i := range n {
		sub := float64((i*7919)%n) * 0.01
		r := res(fmt.Sprint("r", i), sub, 0.01+float64(i%13)*0.003, 0.05+float64(i%29)*0.011)
		lag := float64(i%17) * 0.1
		r.DispatchLagMs = &lag
		dec := 20 + float64(i%11)
		r.DecodeSpeed = &dec
		out1 := 2 + i%5
		r.CompletionTokens = &out1
		switch i % 4 {
		case 0:
			cold(r, 100)
		case 1:
			r.PromptTokens, r.CachedTokens, r.CacheState = iptr(100), iptr(80), sender.StateReused
		case 2:
			r.UnverifiedReason = sptr("no_usage")
		}
		if i%31 == 0 {
			r = failed(r.RequestID, sub, 0.02, "http_500")
		}
		out = append(out, r)
	}
	return out
}

// An offline collector (a merge's) gives the same final blocks, byte for
// byte, as a live one fed the same results, while keeping no live series
// and growing no sample by copying.
func TestOfflineCollectorSameFinal(t *testing.T) {
	rs := mixedResults(3000)
	live, off := New(), New()
	off.Offline(len(rs))
	for _, r := range rs {
		live.Add(r)
		off.Add(r)
	}
	if s := off.Snapshot(); len(s.Series) != 0 {
		t.Errorf("offline Snapshot has %d series points, want none", len(s.Series))
	}
	if cap(off.hits) != len(rs) || cap(off.lags) != len(rs) {
		t.Errorf("offline samples: hits cap %d, lags cap %d, want %d each (sized once)", cap(off.hits), cap(off.lags), len(rs))
	}
	a, _ := json.Marshal(live.Final(ClientInfo{}))
	b, _ := json.Marshal(off.Final(ClientInfo{}))
	if string(a) != string(b) {
		t.Fatalf("offline final differs from live:\n%s\n%s", b, a)
	}
	if lags := off.SortedLags(); len(lags) == 0 || !slices.IsSorted(lags) {
		t.Errorf("SortedLags: %d lags, sorted %v", len(lags), slices.IsSorted(lags))
	}
}

// The summary's series counts seconds from the earliest measured submit
// even when that request was not the first added.
func TestSecondSeriesFromTheEarliestSubmit(t *testing.T) {
	c := New()
	c.Add(res("late", 5, 0.1, 0.2))  // finishes at 5.2
	c.Add(res("early", 0, 0.1, 2.5)) // the earliest submit: second 0 is [0, 1)
	pts := c.Final(ClientInfo{}).Series
	if len(pts) != 6 || pts[2].Requests != 1 || pts[5].Requests != 1 {
		t.Fatalf("series %+v: want 6 seconds, one request finishing in second 2 and one in second 5", pts)
	}
	if p := pts[5].TTFTP50ms; p == nil || *p != 100 {
		t.Errorf("second 5 TTFT p50 %v, want 100", deref(p))
	}
}

// Pooling the cache states' sorted samples gives what sorting them all
// together gives, and the buffer is reused rather than grown per figure.
func TestPooledStates(t *testing.T) {
	var f figures
	f.states[0].ttft = []float64{1, 4, 9}
	f.states[1].ttft = []float64{2, 3, 10, 11}
	f.states[2].ttft = []float64{0, 4}
	f.states[1].e2 = []float64{5, 6}
	p := &pooled{f: &f}
	got := slices.Clone(p.of(ttftOf))
	want := []float64{0, 1, 2, 3, 4, 4, 9, 10, 11}
	if !slices.Equal(got, want) {
		t.Fatalf("pooled TTFT %v, want %v", got, want)
	}
	buf := p.buf
	if e2 := p.of(e2Of); !slices.Equal(e2, []float64{5, 6}) || &e2[0] != &f.states[1].e2[0] {
		t.Errorf("one state's samples: %v, want its own slice", e2)
	}
	f.states[0].e2 = []float64{7}
	p.of(e2Of)
	if &p.buf[:1][0] != &buf[:1][0] {
		t.Error("the pooling buffer was reallocated for a smaller figure")
	}
	if got := mergeSorted(nil, [][]float64{{}, {1, 2}, {}}); !slices.Equal(got, []float64{1, 2}) {
		t.Errorf("mergeSorted with empty parts: %v", got)
	}
}

// linearWidened reads as Linear of the widened values.
func TestLinearWidened(t *testing.T) {
	vs := []float32{0.1, 0.25, 1.3, 7.7, 12.345679}
	wide := make([]float64, len(vs))
	for i, v := range vs {
		wide[i] = widen(v)
	}
	for _, p := range []float64{0, 10, 50, 90, 99, 100} {
		for n := 1; n <= len(vs); n++ {
			if got, want := linearWidened(vs[:n], p), Linear(wide[:n], p); got != want {
				t.Errorf("p%g of %d: %v, want %v", p, n, got, want)
			}
		}
	}
}
