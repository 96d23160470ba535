package load

import (
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/kvbench/kvbench/bench/sender"
)

func res(ok bool, ttft, latency float64, tokens int) *sender.Result {
	r := &sender.Result{Successful: ok, RequestLatency: latency, CompletionTokens: &tokens, Phase: sender.PhaseMeasured}
	if ttft >= 0 {
		r.TTFT = &ttft
	}
	return r
}

func TestSLOMet(t *testing.T) {
	slo := &SLO{TTFT: 500 * time.Millisecond, TPOT: 50 * time.Millisecond, E2E: 2 * time.Second}
	cases := []struct {
		name string
		r    *sender.Result
		want bool
	}{
		{"all within", res(true, 0.4, 1.4, 21), true}, // tpot (1.4-0.4)/20 = 50 ms: at the limit passes
		{"ttft over", res(true, 0.6, 1.0, 5), false},
		{"tpot over", res(true, 0.1, 1.2, 21), false}, // 55 ms
		{"e2e over", res(true, 0.1, 2.1, 200), false},
		{"one token: tpot passes", res(true, 0.2, 1.9, 1), true},
		{"failed", res(false, 0.1, 0.2, 5), false},
		{"no first token", res(true, -1, 0.2, 5), false},
	}
	for _, c := range cases {
		if got := slo.Met(c.r); got == nil || *got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Output in one read has no measured TPOT: judged as one token is,
	// and left out of the mean TPOT.
	oneRead := res(true, 0.1, 1.2, 21)
	oneRead.DecodeUnmeasured = new(string)
	*oneRead.DecodeUnmeasured = sender.DecodeOneRead
	if got := slo.Met(oneRead); got == nil || !*got {
		t.Errorf("one read: %v, want true", got)
	}
	tr := NewTracker(Settings{})
	for _, r := range []*sender.Result{res(true, 0.1, 0.5, 21), oneRead} {
		tr.Begin()
		tr.Finish(r, NotHeld)
	}
	if m := tr.MeanTPOTms(); m == nil || *m != 20 {
		t.Errorf("mean TPOT %v, want 20 (the one-read request left out)", m)
	}
	if (*SLO)(nil).Met(res(true, 0, 0, 1)) != nil {
		t.Error("no SLO: slo_met must be null")
	}
	// Only the named figures count.
	if got := (&SLO{E2E: time.Second}).Met(res(true, 0.9, 0.95, 2)); !*got {
		t.Error("an e2e-only SLO judged TTFT")
	}
}

// feed adds n measured results submitted gap apart, each lag ms after
// its scheduled time, held as given.
func feed(tr *Tracker, n int, gap time.Duration, lag float64, hold Hold, slo *SLO) {
	feedSlipping(tr, n, gap, lag, 0, hold, slo)
}

// feedSlipping adds requests whose lag grows by step ms each.
func feedSlipping(tr *Tracker, n int, gap time.Duration, lag, step float64, hold Hold, slo *SLO) {
	t0 := time.Unix(5000, 0)
	for i := 0; i < n; i++ {
		r := res(true, 0.1, 0.2, 10)
		r.Submit = t0.Add(time.Duration(i) * gap)
		l := lag + float64(i)*step
		r.DispatchLagMs = &l
		r.SLOMet = slo.Met(r)
		tr.Begin()
		tr.Finish(r, hold)
	}
}

func TestTrackerDelivered(t *testing.T) {
	s := Settings{Rate: 100, Arrival: Poisson, Burstiness: 1}
	tr := NewTracker(s)
	feed(tr, 100, 10*time.Millisecond, 0.5, NotHeld, nil)
	b, g := tr.Final(1.2, nil, nil)
	if !b.Delivered || len(b.DegradedReasons) != 0 || g != nil {
		t.Fatalf("on-time run: %+v goodput %v", b, g)
	}
	if b.AchievedRate == nil || *b.AchievedRate < 100 || *b.AchievedRate > 102 {
		t.Fatalf("achieved %v, want 100/0.99 s", b.AchievedRate)
	}
	if b.TargetRate == nil || *b.TargetRate != 100 || *b.ScheduleLagP99ms != 0.5 || b.ObservedMaxConcurrency != 1 {
		t.Fatalf("figures %+v", b)
	}
	if m := *b.MeanConcurrency; m < 16.6 || m > 16.7 {
		t.Fatalf("mean concurrency %v, want 100*0.2/1.2", m)
	}
}

// TestOneLateRequestDelivers: at 1000 req/s, one request 40 ms late (a
// GC pause) among 1000 on time leaves the p99 schedule lag, and the
// verdict, where they were: delivery is judged on the p99, never on one
// request; 2% late is not delivered.
func TestOneLateRequestDelivers(t *testing.T) {
	s := Settings{Rate: 1000, Arrival: Constant}
	tr := NewTracker(s)
	feed(tr, 999, time.Millisecond, 0.3, NotHeld, nil)
	feedAt(tr, time.Unix(5000, 0).Add(999*time.Millisecond), 40, NotHeld)
	b, _ := tr.Final(1, nil, nil)
	if !b.Delivered || len(b.DegradedReasons) != 0 || *b.ScheduleLagMaxms != 40 || *b.ScheduleLagP99ms > 0.31 {
		t.Fatalf("one late request: delivered %v %q, lag p99 %v max %v", b.Delivered, b.DegradedReasons, *b.ScheduleLagP99ms, *b.ScheduleLagMaxms)
	}
	tr = NewTracker(s)
	feed(tr, 980, time.Millisecond, 0.3, NotHeld, nil)
	for i := range 20 {
		feedAt(tr, time.Unix(5000, 0).Add(time.Duration(980+i)*time.Millisecond), 40, NotHeld)
	}
	if b, _ := tr.Final(1, nil, nil); b.Delivered || !strings.Contains(b.DegradedReasons[0], "p99 schedule lag 40.0 ms is over the 10.0 ms allowed") {
		t.Fatalf("2%% late: delivered %v %q", b.Delivered, b.DegradedReasons)
	}
}

// feedAt adds one measured result submitted at t, lag ms late.
func feedAt(tr *Tracker, at time.Time, lag float64, hold Hold) {
	r := res(true, 0.1, 0.2, 10)
	r.Submit = at
	r.DispatchLagMs = &lag
	tr.Begin()
	tr.Finish(r, hold)
}

// TestTrackerReasons: the verdict says what slipped and tells apart the
// workload's design, the cap and the client.
func TestTrackerReasons(t *testing.T) {
	s := Settings{Rate: 4, Arrival: Constant, MaxConcurrency: 2}
	hb := &HoldBack{What: "a busy chat session (1 session(s))", Fix: "give it more sessions through a larger --kv-cache-volume"}
	cases := []struct {
		hold Hold
		want []string
	}{
		{HeldByWorkload, []string{"held back by the workload's design", "busy chat session", "--kv-cache-volume"}},
		{HeldByCap, []string{"--max-concurrency 2", "raise --max-concurrency"}},
		{NotHeld, []string{"client cannot keep up", "lower --request-rate"}},
	}
	for _, c := range cases {
		tr := NewTracker(s)
		// Scheduled 250 ms apart, sent 2 s apart: 0.5 req/s delivered of 4.
		feedSlipping(tr, 60, 2*time.Second, 4200, 1750, c.hold, nil)
		b, _ := tr.Final(120, hb, nil)
		all := strings.Join(b.DegradedReasons, " | ")
		if b.Delivered || !strings.Contains(all, "achieved 0.51 req/s") || !strings.Contains(all, "p99 schedule lag") {
			t.Fatalf("hold %d: %v", c.hold, all)
		}
		for _, w := range c.want {
			if !strings.Contains(all, w) {
				t.Errorf("hold %d: %q missing from %q", c.hold, w, all)
			}
		}
		if live := tr.Live(); !live.Slipping {
			t.Errorf("hold %d: the live verdict must say the schedule slips", c.hold)
		}
	}
	tr := NewTracker(s)
	feed(tr, 10, 250*time.Millisecond, 1, NotHeld, nil)
	b, _ := tr.Final(3, nil, []string{"scheduler p99 latency 9 ms"})
	if b.Delivered || !strings.Contains(b.DegradedReasons[0], "client overloaded: scheduler p99 latency 9 ms") {
		t.Fatalf("overload: %+v", b)
	}
}

func TestGoodput(t *testing.T) {
	slo := &SLO{TTFT: 150 * time.Millisecond}
	tr := NewTracker(Settings{Rate: inf(), SLO: slo})
	feed(tr, 3, time.Second, 0, NotHeld, slo) // good: ttft 100 ms, 10 tokens each
	bad := res(true, 0.3, 0.4, 7)             // too slow
	bad.SLOMet = slo.Met(bad)
	failed := res(false, 0.1, 0.1, 0)
	failed.SLOMet = slo.Met(failed)
	for _, r := range []*sender.Result{bad, failed} {
		tr.Begin()
		tr.Finish(r, NotHeld)
	}
	_, g := tr.Final(2, nil, nil)
	if g == nil || g.GoodRequests != 3 || *g.GoodFraction != 0.6 || *g.GoodputRPS != 1.5 || *g.GoodputOutputTPS != 15 {
		t.Fatalf("goodput %+v", g)
	}
	if *g.SLO.TTFTms != 150 || g.SLO.TPOTms != nil || g.SLO.E2Ems != nil {
		t.Fatalf("slo %+v", g.SLO)
	}
	if l := tr.Live(); l.GoodFraction == nil || *l.GoodFraction != 0.6 {
		t.Fatalf("live good fraction %v", l.GoodFraction)
	}
}

// KeptBytes counts the schedule lag and the sent-order TTFT (asked for)
// the tracker keeps per measured request.
func TestTrackerKeptBytes(t *testing.T) {
	tr := NewTracker(Settings{})
	tr.KeepSentOrder()
	if got := tr.KeptBytes(); got != 0 {
		t.Fatalf("empty tracker keeps %d bytes, want 0", got)
	}
	const n = 1000
	for range n {
		r := res(true, 0.1, 0.5, 21)
		lag := 0.5
		r.DispatchLagMs = &lag
		tr.Begin()
		tr.Finish(r, NotHeld)
	}
	if got, want := tr.KeptBytes(), uint64(n*(8+unsafe.Sizeof(sentTTFT{}))); got < want {
		t.Errorf("%d requests keep %d bytes, want at least %d", n, got, want)
	}
}

// A tracker given its lags (LagsFrom, as a run's and a merge's are)
// and not asked for the sent order keeps nothing per request: its
// block is the one a tracker keeping its own lags makes from the same
// requests, and TTFTThirds has none.
func TestTrackerLagsFromKeepsNothing(t *testing.T) {
	s := Settings{Rate: 100, Arrival: Constant}
	own, given := NewTracker(s), NewTracker(s)
	own.KeepSentOrder()
	var lags []float64
	given.LagsFrom(func() []float64 { return lags })
	for i := range 200 {
		r := res(true, 0.1, 0.5, 21)
		r.Submit = time.Unix(1000, 0).Add(time.Duration(i) * 10 * time.Millisecond)
		lag := float64((i*37)%50) * 0.1
		r.DispatchLagMs = &lag
		lags = append(lags, lag)
		for _, tr := range []*Tracker{own, given} {
			tr.Begin()
			tr.Finish(r, NotHeld)
		}
	}
	if got := given.KeptBytes(); got != 0 {
		t.Errorf("a tracker given its lags keeps %d bytes, want 0", got)
	}
	sort.Float64s(lags)
	ob, _ := own.Final(2, nil, nil)
	gb, _ := given.Final(2, nil, nil)
	if !reflect.DeepEqual(ob, gb) {
		t.Fatalf("block from given lags %+v, from its own %+v", gb, ob)
	}
	if f, l := given.TTFTThirds(); f != nil || l != nil {
		t.Errorf("TTFTThirds without the sent order: %v %v, want none", f, l)
	}
	if f, _ := own.TTFTThirds(); f == nil {
		t.Error("TTFTThirds with the sent order kept: nil")
	}
}
