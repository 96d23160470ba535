package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The worked example's figures by cache state and vLLM's serving
// figures (population stdev, linear percentiles, TPOT over output-1).
func TestServingAndByCacheState(t *testing.T) {
	c := New()
	c.SetPercentiles([]float64{50, 99.9})
	for _, r := range fiveResults() {
		c.Add(r)
	}
	b := c.Final(ClientInfo{})
	// Cold: r1 (TTFT 100 ms, latency 1000 ms, 10 tokens: TPOT 100 ms).
	cold := b.ByCacheState.Cold
	if cold.Requests != 1 || !approxp(cold.TTFTms.Get(50), 100) || !approxp(cold.TPOTms.Get(50), 100) || !approxp(cold.LatencyMs.Get(99), 1000) {
		t.Errorf("cold %+v", cold)
	}
	// Unverified: r3, r6 successful, r4 failed (counted, no figures).
	if u := b.ByCacheState.Unverified; u.Requests != 3 || !approxp(u.TTFTms.Get(50), 350) || !approxp(u.TTFTms.Stdev, 50) {
		t.Errorf("unverified %+v", u)
	}
	if w := b.ByCacheState.Warmup; w.Requests != 1 || !approxp(w.TTFTms.Get(50), 50) {
		t.Errorf("warmup %+v", w)
	}
	sv := b.Serving
	// 4 successful in 4 s; (1000 + 75) tokens in 4 s.
	if !approxp(sv.RequestThroughput, 1) || !approxp(sv.TotalTokenThroughput, 268.75) {
		t.Errorf("throughputs %v %v", deref(sv.RequestThroughput), deref(sv.TotalTokenThroughput))
	}
	// TTFT 100, 200, 300, 400: mean 250, median 250, population stdev
	// sqrt(12500) = 111.8.
	if !approxp(sv.TTFTms.Mean, 250) || !approxp(sv.TTFTms.Median, 250) || math.Abs(*sv.TTFTms.Stdev-111.80339887) > 1e-6 {
		t.Errorf("ttft %+v", sv.TTFTms)
	}
	if !approxp(sv.TTFTms.Get(99.9), 399.7) {
		t.Errorf("ttft p99.9 %v, want 399.7", deref(sv.TTFTms.Get(99.9)))
	}
	if b.Errors["http_503"] != 1 || len(b.Errors) != 1 {
		t.Errorf("errors %v", b.Errors)
	}
	raw, _ := json.Marshal(sv.TTFTms)
	if !strings.HasPrefix(string(raw), `{"mean":250,"median":250,"stdev":`) || !strings.Contains(string(raw), `"p99.9":399.7`) {
		t.Errorf("serving ttft JSON %s", raw)
	}
	raw, _ = json.Marshal(b.ByCacheState.Reused.TTFTms)
	for _, k := range []string{`"p50":`, `"p90":`, `"p99":`, `"p99.9":`} {
		if !strings.Contains(string(raw), k) {
			t.Errorf("by-state ttft JSON %s lacks %s", raw, k)
		}
	}
	if sv.TTFOms.Mean != nil {
		t.Errorf("TTFO without reasoning: %v", *sv.TTFOms.Mean)
	}
}

// The O(1) median draw is the bootstrap: its draws match those of
// resampling by hand, quantile by quantile.
func TestBootMedianMatchesResampling(t *testing.T) {
	for _, n := range []int{5, 6, 40, 41} {
		rnd := rand.New(rand.NewPCG(1, 2))
		data := make([]float64, n)
		for i := range data {
			data[i] = math.Exp(rnd.NormFloat64())
		}
		slices.Sort(data)
		const draws = 40000
		fast, slow := make([]float64, draws), make([]float64, draws)
		m := newBootMedian(data, rand.New(rand.NewPCG(3, 4)))
		buf := make([]float64, n)
		for i := range draws {
			fast[i] = m.draw()
			for j := range buf {
				buf[j] = data[rnd.IntN(n)]
			}
			slices.Sort(buf)
			slow[i] = Linear(buf, 50)
		}
		slices.Sort(fast)
		slices.Sort(slow)
		for _, p := range []float64{5, 25, 50, 75, 95} {
			f, s := Linear(fast, p), Linear(slow, p)
			// Order statistics of a few values: quantiles land on the same
			// data points, or between neighbours for even n.
			if math.Abs(f-s) > 0.05*(data[n-1]-data[0]) {
				t.Errorf("n=%d p%v: fast %.4f, resampled %.4f", n, p, f, s)
			}
		}
	}
}

// The speedup: cold p50 over reused p50, measured cold first, the
// warmup's cold requests when fewer than 3 were, and an interval that
// holds the ratio; no interval with fewer than 3 on a side.
func TestSpeedup(t *testing.T) {
	cold := []float64{100, 104, 98, 101, 99, 103}
	reused := []float64{10, 11, 9, 10.5, 9.5}
	sp := speedupOf(cold, nil, reused)
	if *sp.Baseline != BaselineMeasuredCold || !approxp(sp.Ratio, 100.5/10) {
		t.Fatalf("speedup %+v", sp)
	}
	if sp.CI95 == nil || sp.CI95[0] > *sp.Ratio || sp.CI95[1] < *sp.Ratio || sp.CI95[0] < 8 || sp.CI95[1] > 12 {
		t.Fatalf("interval %v around %v", sp.CI95, *sp.Ratio)
	}
	again := speedupOf(cold, nil, reused)
	if *again.CI95 != *sp.CI95 {
		t.Errorf("the seeded interval moved: %v then %v", *sp.CI95, *again.CI95)
	}
	sp = speedupOf([]float64{100}, []float64{200, 210, 190}, reused)
	if *sp.Baseline != BaselineWarmupCold || !approxp(sp.ColdP50, 200) || sp.CI95 == nil {
		t.Errorf("warmup baseline %+v", sp)
	}
	sp = speedupOf(nil, []float64{200, 210}, reused)
	if sp.Ratio == nil || sp.CI95 != nil {
		t.Errorf("two warmups: a ratio but no interval, got %+v", sp)
	}
	if sp = speedupOf(cold, nil, nil); sp.Ratio != nil || sp.ReusedP50 != nil {
		t.Errorf("nothing reused: %+v", sp)
	}
}

// TestDistRoundTrip: a distribution read back from a summary file keeps
// every figure, its percentiles in order and whether it has a median.
func TestDistRoundTrip(t *testing.T) {
	for _, median := range []bool{false, true} {
		d := distOf([]float64{4, 1, 3, 2, 10}, []float64{50, 90, 99.9}, median)
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var back Dist
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		b2, _ := json.Marshal(back)
		if string(b2) != string(b) {
			t.Errorf("round trip: %s, want %s", b2, b)
		}
		if v := back.Get(99.9); v == nil || *v != *d.Get(99.9) {
			t.Errorf("p99.9 read back as %v", v)
		}
	}
	var empty Dist
	if err := json.Unmarshal([]byte(`{"mean":null,"stdev":null,"p50":null}`), &empty); err != nil || empty.Mean != nil || len(empty.Percentiles) != 1 || empty.Get(50) != nil {
		t.Errorf("nulls: %+v %v", empty, err)
	}
	if err := json.Unmarshal([]byte(`{"mean":"fast"}`), &empty); err == nil {
		t.Error("a string mean is accepted")
	}
}
