package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/kvbench/kvbench/bench/sender"
)

var base = time.Unix(1_700_000_000, 0)

func at(s float64) time.Time { return base.Add(time.Duration(s * float64(time.Second))) }

func iptr(v int) *int                    { return &v }
func fptr(v float64) *float64            { return &v }
func sptr(v string) *string              { return &v }
func secs(t time.Time) float64           { return float64(t.UnixNano()) / 1e9 }
func approx(a, b float64) bool           { return a-b < 1e-6 && b-a < 1e-6 }
func approxp(a *float64, b float64) bool { return a != nil && approx(*a, b) }

// res builds a successful measured result submitted at sub with the given
// TTFT and latency (seconds).
func res(id string, sub, ttft, latency float64) *sender.Result {
	r := &sender.Result{
		RequestID:      id,
		Phase:          sender.PhaseMeasured,
		Successful:     true,
		Complete:       true,
		Submit:         at(sub),
		FirstToken:     at(sub + ttft),
		Finish:         at(sub + latency),
		SubmitTime:     secs(at(sub)),
		FinishTime:     secs(at(sub + latency)),
		TTFT:           fptr(ttft),
		FirstTokenTime: fptr(secs(at(sub + ttft))),
		RequestLatency: latency,
		CacheState:     sender.StateUnverified,
	}
	return r
}

func cold(r *sender.Result, prompt int) *sender.Result {
	r.PromptTokens, r.CachedTokens, r.CacheState = iptr(prompt), iptr(0), sender.StateCold
	return r
}

func failed(id string, sub, latency float64, reason string) *sender.Result {
	r := res(id, sub, 0, latency)
	r.Successful, r.Complete = false, false
	r.TTFT, r.FirstTokenTime, r.FirstToken = nil, nil, time.Time{}
	r.Error = sptr(reason)
	r.UnverifiedReason = sptr("error")
	return r
}

// fiveResults is the worked example of TestFinalResults.
func fiveResults() []*sender.Result {
	r1 := cold(res("r1", 0, 0.1, 1.0), 100)
	r1.CompletionTokens, r1.Chunks, r1.DecodeSpeed = iptr(10), 10, fptr(10)

	r2 := res("r2", 0.5, 0.2, 1.5)
	r2.PromptTokens, r2.CachedTokens, r2.CacheState = iptr(200), iptr(150), sender.StateReused
	r2.CompletionTokens, r2.Chunks, r2.DecodeSpeed = iptr(20), 20, fptr(20)

	r3 := res("r3", 1.0, 0.3, 0.5) // no usage at all: output = chunks
	r3.PromptTokens, r3.UnverifiedReason = iptr(300), sptr("details_absent")
	r3.Chunks, r3.DecodeSpeed = 5, fptr(30)

	r4 := failed("r4", 1.2, 1.8, "http_503")

	r5 := cold(res("w1", -5, 0.05, 1), 999) // warmup: excluded everywhere
	r5.Phase, r5.CompletionTokens, r5.DecodeSpeed = sender.PhaseWarmup, iptr(999), fptr(999)

	r6 := res("r6", 2.0, 0.4, 2.0)
	r6.PromptTokens, r6.CachedTokens = iptr(400), iptr(500)
	r6.UnverifiedReason = sptr("cached_gt_prompt")
	r6.CompletionTokens, r6.Chunks, r6.DecodeSpeed = iptr(40), 40, fptr(40)
	return []*sender.Result{r1, r2, r3, r4, r5, r6}
}

func TestFinalResults(t *testing.T) {
	c := New()
	for _, r := range fiveResults() {
		c.Add(r)
	}
	got := c.Final(ClientInfo{CPUSeconds: 1.5}).Results
	want := Results{
		TotalRequests: 5, SuccessfulRequests: 4, FailedRequests: 1,
		ElapsedTime: 4.0, // first submit r1 at 0, last finish r6 at 4
		MeanTTFTms:  fptr(250), MeanDecodeSpeed: fptr(25), MeanRequestLatencyMs: fptr(1250),
		InputThroughput: 250, OutputThroughput: 18.75,
		TotalInputTokens: 1000, TotalOutputTokens: 75,
		P50TTFTms: fptr(250), P90TTFTms: fptr(370), P99TTFTms: fptr(397),
		P50DecodeSpeed: fptr(25), P90DecodeSpeed: fptr(37), P99DecodeSpeed: fptr(39.7),
		P50RequestLatencyMs: fptr(1250), P90RequestLatencyMs: fptr(1850), P99RequestLatencyMs: fptr(1985),
	}
	gj, _ := json.Marshal(roundResults(got))
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) {
		t.Errorf("results\n got %s\nwant %s", gj, wj)
	}
}

// roundResults rounds the float fields to 1e-6 so that exact JSON
// comparison is not defeated by float noise.
func roundResults(r Results) Results {
	rd := func(v *float64) { *v = float64(int64(*v*1e6+0.5)) / 1e6 }
	for _, v := range []*float64{&r.ElapsedTime, &r.InputThroughput, &r.OutputThroughput} {
		rd(v)
	}
	for _, p := range []**float64{&r.MeanTTFTms, &r.MeanDecodeSpeed, &r.MeanRequestLatencyMs,
		&r.P50TTFTms, &r.P90TTFTms, &r.P99TTFTms, &r.P50DecodeSpeed, &r.P90DecodeSpeed,
		&r.P99DecodeSpeed, &r.P50RequestLatencyMs, &r.P90RequestLatencyMs, &r.P99RequestLatencyMs} {
		if *p != nil {
			v := **p
			rd(&v)
			*p = &v
		}
	}
	return r
}

func TestFinalCache(t *testing.T) {
	c := New()
	for _, r := range fiveResults() {
		c.Add(r)
	}
	// Invalid or missing counts stay out of the hit ratio.
	r7 := res("r7", 2.5, 0.1, 0.2)
	r7.PromptTokens, r7.UnverifiedReason = nil, sptr("usage_missing")
	c.Add(r7)
	r8 := res("r8", 2.6, 0.1, 0.2)
	r8.PromptTokens, r8.CachedTokens, r8.UnverifiedReason = iptr(50), nil, sptr("invalid_count")
	c.Add(r8)
	r9 := res("r9", 2.7, 0.1, 0.2)
	r9.CacheState = "" // a state the sender did not set counts as unverified
	c.Add(r9)

	got := c.Final(ClientInfo{}).Cache
	if got.Cold != 1 || got.Reused != 1 || got.Unverified != 6 {
		t.Errorf("states = %d/%d/%d, want 1/1/6", got.Cold, got.Reused, got.Unverified)
	}
	wantReasons := map[string]int{"details_absent": 1, "error": 1, "cached_gt_prompt": 1,
		"usage_missing": 1, "invalid_count": 1, "unknown": 1}
	if len(got.UnverifiedReasons) != len(wantReasons) {
		t.Errorf("reasons = %v, want %v", got.UnverifiedReasons, wantReasons)
	}
	for k, v := range wantReasons {
		if got.UnverifiedReasons[k] != v {
			t.Errorf("reason %s = %d, want %d", k, got.UnverifiedReasons[k], v)
		}
	}
	// Only r1 (100/0) and r2 (200/150): r6 reports more cached than prompt.
	if got.PromptTokens != 300 || got.CachedTokens != 150 || !approxp(got.HitRatio, 0.5) {
		t.Errorf("prompt/cached/ratio = %d/%d/%v, want 300/150/0.5", got.PromptTokens, got.CachedTokens, got.HitRatio)
	}
}

func TestEmptyBlocks(t *testing.T) {
	b := New().Final(ClientInfo{})
	j, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"results":{"total_requests":0,"successful_requests":0,"failed_requests":0,"elapsed_time":0,"mean_ttft_ms":null,"mean_decode_speed":null,"mean_request_latency_ms":null,"input_throughput":0,"output_throughput":0,"total_input_tokens":0,"total_output_tokens":0,"p50_ttft_ms":null,"p90_ttft_ms":null,"p99_ttft_ms":null,"p50_decode_speed":null,"p90_decode_speed":null,"p99_decode_speed":null,"p50_request_latency_ms":null,"p90_request_latency_ms":null,"p99_request_latency_ms":null},` +
		`"cache":{"cold":0,"reused":0,"unverified":0,"unverified_reasons":{},"prompt_tokens":0,"cached_tokens":0,"hit_ratio":null},` +
		`"latency":{"itl_ms":{"mean":null,"p50":null,"p95":null},"round_gap_ms":{"mean":null,"p50":null,"p95":null},"tokens_per_chunk_mean":null,"prefill_tps":{"mean":null,"p50":null},"aggregate_prefill_tps":null,"decode_unmeasured":0},` +
		`"client":{"cpu_seconds":0,"max_dispatch_lag_ms":null,"p99_dispatch_lag_ms":null,"retries":0,"timing_error_p99_ms":null,"timing_error_max_ms":null,"sched_latency_p99_ms":null,"machine_cpu_busy_max":null,"overloaded":false,"overload_reasons":[]}}`
	if string(j) != want {
		t.Errorf("empty blocks\n got %s\nwant %s", j, want)
	}
}

func TestPooledITL(t *testing.T) {
	c := New()
	a := cold(res("a", 0, 0.5, 1), 1000)
	a.RoundGapsMs, a.Chunks, a.CompletionTokens = []float64{10, 20, 30}, 4, iptr(10) // 6 zeros
	a.TokensPerChunk, a.PrefillTPS = fptr(2.5), fptr(2000)
	b := cold(res("b", 0.1, 0.9, 1), 1000)
	b.RoundGapsMs, b.Chunks, b.CompletionTokens = []float64{5}, 2, iptr(2) // no zeros
	b.TokensPerChunk, b.PrefillTPS = fptr(1), fptr(1000)
	w := res("w", 0, 0.1, 0.2) // warmup gaps never pool
	w.Phase, w.RoundGapsMs, w.Chunks, w.CompletionTokens = sender.PhaseWarmup, []float64{1000}, 2, iptr(2)
	f := failed("f", 0.2, 0.3, "timeout")
	for _, r := range []*sender.Result{a, b, w, f} {
		c.Add(r)
	}
	l := c.Final(ClientInfo{}).Latency
	// Pool: 6 zeros + [5 10 20 30], n = 10.
	if !approxp(l.ITLms.Mean, 6.5) || !approxp(l.ITLms.P50, 0) || !approxp(l.ITLms.P95, 30) {
		t.Errorf("itl = %v/%v/%v, want 6.5/0/30", deref(l.ITLms.Mean), deref(l.ITLms.P50), deref(l.ITLms.P95))
	}
	if !approxp(l.RoundGapMs.Mean, 16.25) || !approxp(l.RoundGapMs.P50, 10) || !approxp(l.RoundGapMs.P95, 30) {
		t.Errorf("round gap = %v/%v/%v, want 16.25/10/30", deref(l.RoundGapMs.Mean), deref(l.RoundGapMs.P50), deref(l.RoundGapMs.P95))
	}
	if !approxp(l.TokensPerChunkMean, 1.75) {
		t.Errorf("tokens per chunk = %v, want 1.75", deref(l.TokensPerChunkMean))
	}
	if !approxp(l.PrefillTPS.Mean, 1500) || !approxp(l.PrefillTPS.P50, 1000) {
		t.Errorf("prefill = %v/%v, want 1500/1000", deref(l.PrefillTPS.Mean), deref(l.PrefillTPS.P50))
	}
	// The failed request is not cold, so no aggregate prefill.
	if l.AggregatePrefillTPS != nil {
		t.Errorf("aggregate prefill = %v, want null with a failure", *l.AggregatePrefillTPS)
	}
}

func TestPooledITLMoreGapsThanZeros(t *testing.T) {
	c := New()
	r := res("a", 0, 0.1, 1)
	r.RoundGapsMs, r.Chunks, r.CompletionTokens = []float64{4, 1, 3, 2}, 5, iptr(6) // 1 zero
	c.Add(r)
	l := c.Final(ClientInfo{}).Latency
	// Pool [0 1 2 3 4]: mean 2, p50 rank 3 -> 2, p95 rank 5 -> 4.
	if !approxp(l.ITLms.Mean, 2) || !approxp(l.ITLms.P50, 2) || !approxp(l.ITLms.P95, 4) {
		t.Errorf("itl = %v/%v/%v, want 2/2/4", deref(l.ITLms.Mean), deref(l.ITLms.P50), deref(l.ITLms.P95))
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestAggregatePrefill(t *testing.T) {
	a := cold(res("a", 0, 1, 1.5), 1000)
	b := cold(res("b", 0.01, 2, 2.5), 3000) // last first token at 2.01
	got := AggregatePrefill([]*sender.Result{a, b})
	if !approxp(got, 4000/2.01) {
		t.Errorf("aggregate = %v, want %v", deref(got), 4000/2.01)
	}
	// From the record's floats alone (results read back from disk).
	a2, b2 := *a, *b
	a2.Submit, a2.FirstToken, a2.Finish = time.Time{}, time.Time{}, time.Time{}
	b2.Submit, b2.FirstToken, b2.Finish = time.Time{}, time.Time{}, time.Time{}
	if got := AggregatePrefill([]*sender.Result{&a2, &b2}); got == nil || *got < 4000/2.01-0.01 || *got > 4000/2.01+0.01 {
		t.Errorf("aggregate from floats = %v, want %v", deref(got), 4000/2.01)
	}
	r := res("c", 0, 1, 1.5)
	r.PromptTokens, r.CachedTokens, r.CacheState = iptr(10), iptr(5), sender.StateReused
	if got := AggregatePrefill([]*sender.Result{a, b, r}); got != nil {
		t.Errorf("aggregate with a reused request = %v, want nil", *got)
	}
	if got := AggregatePrefill(nil); got != nil {
		t.Errorf("aggregate of nothing = %v, want nil", *got)
	}

	c := New()
	c.Add(a)
	c.Add(b)
	if l := c.Final(ClientInfo{}).Latency; !approxp(l.AggregatePrefillTPS, 4000/2.01) {
		t.Errorf("final aggregate = %v", deref(l.AggregatePrefillTPS))
	}
}

func TestClientBlock(t *testing.T) {
	c := New()
	for i := 1; i <= 100; i++ {
		r := res("r", float64(i), 0.1, 0.2)
		r.DispatchLagMs = fptr(float64(i))
		c.Add(r)
	}
	c.Add(res("asap", 0, 0.1, 0.2)) // no schedule, no lag
	// Retries count in every phase, failures and warmups included.
	retried := res("retried", 0, 0.1, 0.2)
	retried.Retries = 1
	c.Add(retried)
	warm := res("warm", 0, 0.1, 0.2)
	warm.Phase, warm.Retries, warm.Successful = sender.PhaseWarmup, 1, false
	c.Add(warm)
	cl := c.Final(ClientInfo{CPUSeconds: 2.25}).Client
	if cl.Retries != 2 {
		t.Errorf("client retries = %d, want 2", cl.Retries)
	}
	if cl.CPUSeconds != 2.25 || !approxp(cl.MaxDispatchLagMs, 100) || !approxp(cl.P99DispatchLagMs, 99.01) {
		t.Errorf("client = %v/%v/%v, want 2.25/100/99.01", cl.CPUSeconds, deref(cl.MaxDispatchLagMs), deref(cl.P99DispatchLagMs))
	}
	if s := c.Snapshot(); s.MaxDispatchLagMs != 100 {
		t.Errorf("snapshot max lag = %v, want 100", s.MaxDispatchLagMs)
	}
}

func TestSnapshotTotals(t *testing.T) {
	c := NewWithClock(func() time.Time { return at(10) })
	for _, r := range fiveResults() {
		c.Add(r)
	}
	ref := res("ref", 0, 0.1, 0.2)
	ref.Phase = sender.PhaseReference
	c.Add(ref)
	s := c.Snapshot()
	if s.Done != 5 || s.Failed != 1 || s.Warmup != 1 || s.Reference != 1 {
		t.Errorf("counts = %d/%d/%d/%d, want 5/1/1/1", s.Done, s.Failed, s.Warmup, s.Reference)
	}
	if !approx(s.MeanTTFTms, 250) || !approx(s.P99TTFTms, 397) {
		t.Errorf("ttft mean/p99 = %v/%v, want 250/397", s.MeanTTFTms, s.P99TTFTms)
	}
	if s.Cold != 1 || s.Reused != 1 || s.Unverified != 2 || !approxp(s.HitRatio, 0.5) {
		t.Errorf("cache = %d/%d/%d/%v", s.Cold, s.Reused, s.Unverified, deref(s.HitRatio))
	}
	if s.InputTokens != 1000 || s.OutputTokens != 75 || !approx(s.ElapsedS, 4) ||
		!approx(s.InputTPS, 250) || !approx(s.OutputTPS, 18.75) {
		t.Errorf("tokens = %d/%d in %vs: %v/%v tok/s", s.InputTokens, s.OutputTokens, s.ElapsedS, s.InputTPS, s.OutputTPS)
	}
	// The cached p99 follows new TTFTs.
	c.Add(res("slow", 3, 10, 11))
	if s := c.Snapshot(); s.P99TTFTms < 9000 {
		t.Errorf("p99 after a 10 s TTFT = %v", s.P99TTFTms)
	}
}

func TestSnapshotSeries(t *testing.T) {
	now := at(0)
	c := NewWithClock(func() time.Time { return now })

	// b finishes first, so the origin is first its submit (0.5) ...
	b := res("b", 0.5, 0.3, 0.8) // finishes at 1.3
	b.PromptTokens, b.CompletionTokens = iptr(100), iptr(10)
	c.Add(b)
	now = at(0.5 + 1.9)
	if s := c.Snapshot(); len(s.Series) != 1 || s.Series[0].Requests != 1 {
		t.Fatalf("series before the origin moves = %+v", s.Series)
	}
	// ... until a, submitted at 0.2, finishes: the origin moves to 0.2 and
	// b (finish 1.3) now belongs to second 1.
	a := res("a", 0.2, 0.1, 0.7) // finishes at 0.9: second 0
	a.PromptTokens, a.CompletionTokens = iptr(50), iptr(5)
	c.Add(a)
	c.Add(failed("f", 0.3, 1.0, "timeout")) // finishes at 1.3: second 1
	d := res("d", 0.4, 0.5, 0.9)            // finishes at 1.3: second 1
	d.PromptTokens, d.CompletionTokens = iptr(200), iptr(30)
	c.Add(d)
	e := res("e", 1.0, 0.2, 2.5) // finishes at 3.5: second 3, incomplete
	c.Add(e)

	now = at(0.2 + 3.5) // seconds 0, 1 and 2 are complete
	s := c.Snapshot()
	want := []Point{
		{Second: 0, Requests: 1, TTFTP50ms: 100, TTFTMaxms: 100, InputTPS: 50, OutputTPS: 5},
		{Second: 1, Requests: 3, Failed: 1, TTFTP50ms: 400, TTFTMaxms: 500, InputTPS: 300, OutputTPS: 40},
		{Second: 2},
	}
	if len(s.Series) != len(want) {
		t.Fatalf("series = %+v, want %+v", s.Series, want)
	}
	for i := range want {
		g := s.Series[i]
		g.TTFTP50ms, g.TTFTMaxms = float64(int64(g.TTFTP50ms*1000+0.5))/1000, float64(int64(g.TTFTMaxms*1000+0.5))/1000
		if g != want[i] {
			t.Errorf("point %d = %+v, want %+v", i, s.Series[i], want[i])
		}
	}

	// A late result for a completed second updates its point.
	g := res("g", 0.2, 0.9, 1.5) // finishes at 1.7: second 1
	c.Add(g)
	if s := c.Snapshot(); s.Series[1].Requests != 4 || s.Series[1].TTFTMaxms < 899 {
		t.Errorf("late result not in its second: %+v", s.Series[1])
	}

	// The window keeps the last SeriesWindow completed seconds.
	now = at(0.2 + 1000.5)
	s = c.Snapshot()
	if len(s.Series) != SeriesWindow || s.Series[0].Second != 400 || s.Series[SeriesWindow-1].Second != 999 {
		t.Errorf("window = %d points from %d to %d", len(s.Series), s.Series[0].Second, s.Series[len(s.Series)-1].Second)
	}
	late := res("late", 999.5, 0.1, 0.5) // finishes 999.8 after the origin: second 999
	c.Add(late)
	now = at(0.2 + 1001)
	s = c.Snapshot()
	if last := s.Series[len(s.Series)-1]; last.Second != 1000 || last.Requests != 0 {
		t.Errorf("last point = %+v, want an empty second 1000", last)
	}
	if p := s.Series[len(s.Series)-2]; p.Second != 999 || p.Requests != 1 {
		t.Errorf("second 999 = %+v, want one request", p)
	}
}

func TestSnapshotNoMeasured(t *testing.T) {
	c := New()
	w := res("w", 0, 0.1, 0.2)
	w.Phase = sender.PhaseWarmup
	c.Add(w)
	s := c.Snapshot()
	if s.Done != 0 || s.Warmup != 1 || s.Series != nil || s.HitRatio != nil || s.P99TTFTms != 0 {
		t.Errorf("snapshot with warmups only = %+v", s)
	}
}

func TestConcurrentAddSnapshot(t *testing.T) {
	c := New()
	const workers, each = 8, 500
	var wg sync.WaitGroup
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				_ = c.Snapshot()
			}
		}
	}()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				r := res("r", float64(w)+float64(i)/1000, 0.1, 0.5)
				r.RoundGapsMs, r.Chunks, r.CompletionTokens = []float64{1, 2}, 3, iptr(4)
				r.DispatchLagMs = fptr(float64(i))
				if i%10 == 0 {
					r.Successful = false
				}
				c.Add(r)
				if i%100 == 0 {
					_ = c.Final(ClientInfo{})
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-done
	s := c.Snapshot()
	if s.Done != workers*each || s.Failed != workers*each/10 {
		t.Errorf("done/failed = %d/%d, want %d/%d", s.Done, s.Failed, workers*each, workers*each/10)
	}
	if b := c.Final(ClientInfo{}); b.Results.SuccessfulRequests != workers*each*9/10 {
		t.Errorf("successful = %d", b.Results.SuccessfulRequests)
	}
}

func TestProcessCPU(t *testing.T) {
	// Burn a little CPU so the figure cannot be zero on a supported OS.
	start := ProcessCPU()
	x := 0
	for i := range 20_000_000 {
		x ^= i
	}
	_ = x
	end := ProcessCPU()
	if end < start || (runtime.GOOS == "linux" && end == 0) {
		t.Errorf("process CPU = %v then %v", start, end)
	}
}

func BenchmarkAdd(b *testing.B) {
	c := New()
	r := res("r", 0, 0.1, 0.5)
	r.PromptTokens, r.CachedTokens, r.CacheState = iptr(1000), iptr(900), sender.StateReused
	r.RoundGapsMs, r.Chunks, r.CompletionTokens = make([]float64, 31), 32, iptr(64)
	r.DispatchLagMs = fptr(0.1)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.Finish = at(float64(i) / 1000)
		c.Add(r)
	}
}

// A run where every request failed has no TTFT or latency, and a run of
// one-token replies (random-prefill's max_tokens 1) no decode speed: the
// results block says null, not 0.
func TestUndefinedResultsAreNull(t *testing.T) {
	c := New()
	for i := range 3 {
		r := res("f", float64(i), 0.1, 0.2)
		r.Successful, r.TTFT = false, nil
		c.Add(r)
	}
	got := c.Final(ClientInfo{}).Results
	for name, p := range map[string]*float64{"mean TTFT": got.MeanTTFTms, "p99 TTFT": got.P99TTFTms,
		"mean latency": got.MeanRequestLatencyMs, "mean decode": got.MeanDecodeSpeed} {
		if p != nil {
			t.Errorf("all failed: %s = %v, want null", name, *p)
		}
	}
	if got.FailedRequests != 3 {
		t.Errorf("failed %d", got.FailedRequests)
	}

	c = New()
	for i := range 3 {
		r := res("one", float64(i), 0.1, 0.2) // DecodeSpeed nil: one output token
		r.DecodeSpeed = nil
		c.Add(r)
	}
	got = c.Final(ClientInfo{}).Results
	if got.MeanDecodeSpeed != nil || got.P50DecodeSpeed != nil || got.P99DecodeSpeed != nil {
		t.Errorf("one-token replies: decode %v, want null", got.MeanDecodeSpeed)
	}
	if got.MeanTTFTms == nil || *got.MeanTTFTms != 100 {
		t.Errorf("one-token replies: mean TTFT %v, want 100", got.MeanTTFTms)
	}
}

// Live progress counts a failed request as failed, not as an unverified
// receipt; the final cache block keeps it among unverified (reason
// "error"), as spec/record.md has it.
func TestSnapshotFailedAreNotUnverified(t *testing.T) {
	c := New()
	for _, r := range fiveResults() {
		c.Add(r)
	}
	s := c.Snapshot()
	// r3 and r6 are successful and unverified; r4 failed.
	if s.Failed != 1 || s.Unverified != 2 || s.Cold != 1 || s.Reused != 1 {
		t.Fatalf("snapshot failed %d, cold/reused/unverified %d/%d/%d; want 1, 1/1/2", s.Failed, s.Cold, s.Reused, s.Unverified)
	}
	if got := c.Final(ClientInfo{}).Cache; got.Unverified != 3 || got.UnverifiedReasons["error"] != 1 {
		t.Fatalf("cache block unverified %d reasons %v; want 3 with one error", got.Unverified, got.UnverifiedReasons)
	}
}

// Counts near 2^62 (a line edited by hand, or an engine's, had the sender
// kept it) never reach a sum: totals, throughputs and the hit ratio stay
// what the valid requests make them.
func TestCountsNeverOverflow(t *testing.T) {
	c := New()
	for i, p := range []int{1 << 62, 1 << 62, 100, math.MaxInt, -5} {
		r := cold(res(fmt.Sprint("r", i), float64(i)/10, 0.05, 1), p)
		r.CachedTokens = iptr(p)
		if p == 100 {
			r.CachedTokens = iptr(40)
		}
		r.CompletionTokens, r.Chunks = iptr(p), 10
		c.Add(r)
	}
	res := c.Final(ClientInfo{})
	// The valid request: 100 in, 100 out; the others count their 10
	// chunks as output (LMCache's rule without a completion count).
	if res.Results.TotalInputTokens != 100 || res.Results.TotalOutputTokens != 140 {
		t.Errorf("totals %d in, %d out", res.Results.TotalInputTokens, res.Results.TotalOutputTokens)
	}
	if res.Results.InputThroughput <= 0 || res.Results.OutputThroughput <= 0 || res.Results.OutputThroughput > 1000 {
		t.Errorf("throughputs %v in, %v out", res.Results.InputThroughput, res.Results.OutputThroughput)
	}
	if res.Cache.PromptTokens != 100 || res.Cache.CachedTokens != 40 || !approxp(res.Cache.HitRatio, 0.4) {
		t.Errorf("cache %d/%d ratio %v", res.Cache.PromptTokens, res.Cache.CachedTokens, deref(res.Cache.HitRatio))
	}
	s := c.Snapshot()
	if s.InputTokens != 100 || s.OutputTokens != 140 || !approxp(s.HitRatio, 0.4) {
		t.Errorf("snapshot %d in, %d out, ratio %v", s.InputTokens, s.OutputTokens, deref(s.HitRatio))
	}
	// Sums saturate instead of wrapping.
	if got := addCount(math.MaxInt-5, sender.MaxCount); got != math.MaxInt {
		t.Errorf("addCount saturates at %d", got)
	}
	if got := addCount(3, 4); got != 7 {
		t.Errorf("addCount(3, 4) = %d", got)
	}
}

// Requests whose output arrived in one read are counted, and left out of
// the decode figures (the sender left their decode speed null).
func TestDecodeUnmeasuredCounted(t *testing.T) {
	c := New()
	for i, dec := range []float64{90, 100, 110} {
		r := res(fmt.Sprint("m", i), 0, 0.1, 1)
		r.DecodeSpeed = fptr(dec)
		c.Add(r)
	}
	for i := range 2 {
		r := res(fmt.Sprint("o", i), 0, 0.1, 0.1)
		r.DecodeUnmeasured = sptr(sender.DecodeOneRead)
		c.Add(r)
	}
	w := res("w", 0, 0.1, 0.1) // warmups are not counted
	w.Phase, w.DecodeUnmeasured = sender.PhaseWarmup, sptr(sender.DecodeOneRead)
	c.Add(w)
	b := c.Final(ClientInfo{})
	if b.Latency.DecodeUnmeasured != 2 {
		t.Errorf("decode_unmeasured = %d, want 2", b.Latency.DecodeUnmeasured)
	}
	if !approxp(b.Results.MeanDecodeSpeed, 100) || !approxp(b.Results.P50DecodeSpeed, 100) {
		t.Errorf("decode mean %v p50 %v, want 100", deref(b.Results.MeanDecodeSpeed), deref(b.Results.P50DecodeSpeed))
	}
}

// A stream too long for exact gaps brings a histogram; the pooled figures
// then come from one histogram of every gap, within 1/128 of the exact
// ones, and the means stay exact.
func TestPooledITLWithHistogram(t *testing.T) {
	c := New()
	a := res("a", 0, 0.5, 1)
	a.RoundGapsMs, a.Chunks, a.CompletionTokens = []float64{10, 20, 30}, 4, iptr(10) // 6 zeros
	c.Add(a)
	h := new(sender.GapHistogram)
	var exact []float64
	for k := range 1000 {
		g := float64(1 + k%50) // ms
		h.Add(time.Duration(g * float64(time.Millisecond)))
		exact = append(exact, g)
	}
	b := res("b", 0, 0.5, 1)
	b.RoundGapHist, b.Chunks, b.CompletionTokens = h, 1001, iptr(1501) // 500 zeros
	c.Add(b)
	l := c.Final(ClientInfo{}).Latency

	exact = append(exact, 10, 20, 30)
	sort.Float64s(exact)
	zeros := 506
	sum := 0.0
	for _, g := range exact {
		sum += g
	}
	near := func(name string, got *float64, want float64) {
		t.Helper()
		if got == nil || *got < want*(1-1.0/128) || *got > want*(1+1.0/128) {
			t.Errorf("%s = %v, want %v (within 1/128)", name, deref(got), want)
		}
	}
	if !approxp(l.ITLms.Mean, sum/float64(len(exact)+zeros)) || !approxp(l.RoundGapMs.Mean, sum/float64(len(exact))) {
		t.Errorf("means %v %v, want %v %v", deref(l.ITLms.Mean), deref(l.RoundGapMs.Mean), sum/float64(len(exact)+zeros), sum/float64(len(exact)))
	}
	near("itl p95", l.ITLms.P95, NearestRankZeros(exact, zeros, 95))
	near("round gap p50", l.RoundGapMs.P50, NearestRank(exact, 50))
	near("round gap p95", l.RoundGapMs.P95, NearestRank(exact, 95))
	if want := NearestRankZeros(exact, zeros, 50); want == 0 {
		if l.ITLms.P50 == nil || *l.ITLms.P50 != 0 {
			t.Errorf("itl p50 = %v, want 0", deref(l.ITLms.P50))
		}
	} else {
		near("itl p50", l.ITLms.P50, want)
	}
	// Final can be called again with the same figures.
	if l2 := c.Final(ClientInfo{}).Latency; !approxp(l2.RoundGapMs.P95, *l.RoundGapMs.P95) {
		t.Errorf("second Final: %v, first %v", deref(l2.RoundGapMs.P95), *l.RoundGapMs.P95)
	}
}

// KeptBytes counts what the collector keeps per measured request for
// the final figures (its series entry, TTFT and latency at least), and
// nothing for a request it keeps nothing of.
func TestKeptBytesGrowsWithTheRequests(t *testing.T) {
	c := New()
	if got := c.KeptBytes(); got != 0 {
		t.Fatalf("empty collector keeps %d bytes, want 0", got)
	}
	const n = 1000
	for i := range n {
		c.Add(res(fmt.Sprint("r", i), float64(i)*0.001, 0.01, 0.02))
	}
	per := uint64(unsafe.Sizeof(hitEntry{})) + 8 + 8 // series entry, TTFT, latency
	if got := c.KeptBytes(); got < n*per {
		t.Errorf("%d requests keep %d bytes, want at least %d", n, got, n*per)
	}
	w := New()
	for i := range n {
		r := res(fmt.Sprint("w", i), 0, 0.01, 0.02)
		r.Phase = sender.PhaseReference
		w.Add(r)
	}
	if got := w.KeptBytes(); got != 0 {
		t.Errorf("%d reference requests keep %d bytes, want 0", n, got)
	}
}
