package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/simtest"
)

// loadRun runs random-prefill against a simulator with the given
// settings and returns the summary and the measured request lines.
func loadRun(t *testing.T, url string, set map[string]any) (*record.Summary, []map[string]any) {
	t.Helper()
	cfg := config.Default()
	for k, v := range map[string]any{"workload": config.RandomPrefill, "model": "kvbench-sim", "output_dir": t.TempDir(),
		"no_csv": true, "rp_request_length": 40, "rp_num_requests": 60, "tokens_per_gb_kvcache": 1000} {
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range set {
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	p := &Prepared{Config: cfg, EngineURL: url + "/v1", TokensPerGB: 1000}
	r, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for range r.Events() {
		}
	}()
	fin := r.Run(context.Background())
	sum, code := fin.Summary, fin.ExitCode
	if code != 0 && code != 1 { // 1: a fault-injecting engine failed some
		t.Fatalf("exit %d", code)
	}
	f, err := os.Open(filepath.Join(r.Dir(), "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, m)
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i]["submit_time"].(float64) < lines[j]["submit_time"].(float64) })
	return sum, lines
}

// TestMaxConcurrencyNeverExceeded: a closed loop of 3 never has more than
// 3 requests between submit and finish, the summary agrees, and the
// release time is recorded as scheduled_time.
func TestMaxConcurrencyNeverExceeded(t *testing.T) {
	url := simtest.Start(t, func(c *sim.Config) { c.Speed = 20 })
	sum, lines := loadRun(t, url, map[string]any{"max_concurrency": 3})
	type ev struct {
		at    float64
		delta int
	}
	var evs []ev
	for _, l := range lines {
		if l["scheduled_time"] == nil {
			t.Fatalf("request %v has no scheduled_time", l["request_id"])
		}
		evs = append(evs, ev{l["submit_time"].(float64), 1}, ev{l["finish_time"].(float64), -1})
	}
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].at != evs[j].at {
			return evs[i].at < evs[j].at
		}
		return evs[i].delta < evs[j].delta
	})
	n, peak := 0, 0
	for _, e := range evs {
		n += e.delta
		peak = max(peak, n)
	}
	if peak > 3 || sum.Load.ObservedMaxConcurrency > 3 || sum.Load.ObservedMaxConcurrency < 1 {
		t.Fatalf("in flight: %d from the record, %d in the summary; cap 3", peak, sum.Load.ObservedMaxConcurrency)
	}
	if sum.Load.MaxConcurrency == nil || *sum.Load.MaxConcurrency != 3 || sum.Load.TargetRate != nil {
		t.Fatalf("load block %+v", sum.Load)
	}
}

// TestSLOAgreesWithRequests: every request's slo_met is the SLO applied
// to its own figures, and the goodput block counts them.
func TestSLOAgreesWithRequests(t *testing.T) {
	// A third of the requests fail: they never meet the SLO, the others
	// meet its generous limits.
	url := simtest.Start(t, func(c *sim.Config) { c.Speed = 20; c.FaultHTTP500 = 0.3; c.FaultSeed = 3 })
	sum, lines := loadRun(t, url, map[string]any{"slo": "ttft=10s,e2e=20s"})
	good, measured := 0, 0
	for _, l := range lines {
		met, ok := l["slo_met"].(bool)
		if !ok {
			t.Fatalf("slo_met %v", l["slo_met"])
		}
		ttft, _ := l["ttft_s"].(float64)
		want := l["successful"] == true && l["ttft_s"] != nil && ttft <= 10 && l["request_latency_s"].(float64) <= 20
		if met != want {
			t.Fatalf("%v: slo_met %v, figures say %v (ttft %v)", l["request_id"], met, want, ttft)
		}
		measured++
		if met {
			good++
		}
	}
	g := sum.Goodput
	if g == nil || g.GoodRequests != good || *g.GoodFraction != float64(good)/float64(measured) {
		t.Fatalf("goodput %+v; requests say %d of %d", g, good, measured)
	}
	if good == 0 || good == measured {
		t.Fatalf("%d of %d good: the test needs both outcomes", good, measured)
	}
	if *g.SLO.TTFTms != 10000 || *g.SLO.E2Ems != 20000 || g.SLO.TPOTms != nil {
		t.Fatalf("slo %+v", g.SLO)
	}
	if want := float64(good) / sum.Results.ElapsedTime; *g.GoodputRPS != want {
		t.Fatalf("goodput_rps %v, want %v", *g.GoodputRPS, want)
	}
}

// TestSameSeedSameSchedule: two runs with one seed release at the same
// offsets (scheduled_time relative to the first), another seed not.
func TestSameSeedSameSchedule(t *testing.T) {
	url := simtest.Start(t, func(c *sim.Config) { c.ZeroLatency = true })
	offsets := func(seed int) []float64 {
		_, lines := loadRun(t, url, map[string]any{"request_rate": "2000", "arrival": "gamma", "burstiness": 0.5, "seed": seed})
		var s []float64
		for _, l := range lines {
			s = append(s, l["scheduled_time"].(float64))
		}
		sort.Float64s(s)
		for i := len(s) - 1; i >= 0; i-- {
			s[i] -= s[0]
		}
		return s
	}
	a, b, c := offsets(7), offsets(7), offsets(8)
	differs := false
	for i := range a {
		if d := a[i] - b[i]; d > 1e-6 || d < -1e-6 {
			t.Fatalf("seed 7: release %d at %.6f and %.6f", i, a[i], b[i])
		}
		differs = differs || a[i] != c[i]
	}
	if !differs {
		t.Fatal("seeds 7 and 8 gave the same schedule")
	}
}
