package sweep

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/simtest"
)

// A simulator with small tiers: GPU 20,000 tokens, CPU 60,000, CPU hits
// loaded back slower than a GPU hit is served.
func smallTiers(c *sim.Config) {
	c.TokensPerGB = 10000
	c.GPUKVGB, c.CPUKVGB = 2, 6
	c.BaseLatency, c.Speed = 10*time.Millisecond, 1
	c.PrefillTPS, c.CPULoadTPS, c.DecodeTPS = 1000000, 50000, 10000
}

func ldqaConfig(t *testing.T, url string) *config.Config {
	return baseConfig(t, url, map[string]any{"workload": config.LongDocQA, "tokens_per_gb_kvcache": 10000,
		"ldqa_document_length": 1000, "ldqa_max_output_length": 1, "ldqa_query_per_document": 1, "ldqa_shuffle_policy": "tile"})
}

// The working-set search on the simulator finds the capacity of both
// tiers (80,000 tokens) within 5% or one document and the GPU tier
// (20,000) within 10%, and records the tiers the simulator declares.
func TestWorkingSetSearchFindsTiers(t *testing.T) {
	url := simtest.Start(t, smallTiers)
	f, dir, code, err := Run(context.Background(), Options{Config: ldqaConfig(t, url), Dimension: WorkingSet,
		Values: []float64{2500}, Search: true, HitTarget: DefaultHitTarget, Precision: 0.05, MaxCells: DefaultWorkingSetCells})
	if err != nil || code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	if f.Sweep.Dimension != WorkingSet || f.Result == nil || f.Result.WorkingSetResult == nil {
		t.Fatalf("sweep %+v result %+v", f.Sweep, f.Result)
	}
	r := f.Result.WorkingSetResult
	for _, c := range f.Cells {
		t.Logf("cell %v: %d docs %s hit %v ideal %v reused p50 %v", c.Value, c.Units, c.Status, ptrStr(c.HitRatio), ptrStr(c.IdealHitRatio), ptrStr(c.ReusedTTFTP50ms))
	}
	if r.CapacityTokens == nil || math.Abs(*r.CapacityTokens-80000) > math.Max(0.05*80000, 1000) {
		t.Errorf("capacity %v tokens, want 80000 within 5%% or one document", ptrStr(r.CapacityTokens))
	}
	if r.FastTierTokens == nil || math.Abs(*r.FastTierTokens-20000) > 0.1*20000 {
		t.Errorf("fast tier %v tokens, want 20000 within 10%%", ptrStr(r.FastTierTokens))
	}
	if r.CapacityGB == nil || math.Abs(*r.CapacityGB-*r.CapacityTokens/10000) > 1e-9 {
		t.Errorf("capacity %v GB", ptrStr(r.CapacityGB))
	}
	d := r.Declared
	if d == nil || d.GPUTokens == nil || *d.GPUTokens != 20000 || d.CPUTokens == nil || *d.CPUTokens != 60000 || d.TotalTokens == nil || *d.TotalTokens != 80000 {
		t.Errorf("declared %+v", d)
	}
	for _, c := range f.Cells {
		if c.WorkingSetCell == nil || c.IdealHitRatio == nil || c.HitRatio == nil {
			t.Fatalf("cell %v lacks its working-set figures: %+v", c.Value, c)
		}
		if c.Unit != "documents" || c.WorkingSetTokens != float64(c.Units*1000) {
			t.Errorf("cell %v: %d %s, %v tokens", c.Value, c.Units, c.Unit, c.WorkingSetTokens)
		}
		if pass := c.Status == record.CellPass; pass != (*c.HitRatio >= 0.9**c.IdealHitRatio) {
			t.Errorf("cell %v: %s with hit %v of ideal %v", c.Value, c.Status, *c.HitRatio, *c.IdealHitRatio)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, record.SweepFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"dimension": "working_set"`, `"working_set_tokens"`, `"ideal_hit_ratio"`, `"reused_ttft_p50_ms"`,
		`"capacity_tokens"`, `"capacity_gb"`, `"fast_tier_tokens"`, `"fast_tier_gb"`, `"declared"`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("sweep.json lacks %s", k)
		}
	}
	back, err := ReadFile(dir)
	if err != nil || back.Result == nil || back.Result.WorkingSetResult == nil || *back.Result.CapacityTokens != *r.CapacityTokens {
		t.Fatalf("read back: %v %+v", err, back)
	}
	var tb strings.Builder
	if err := WriteTable(&tb, back); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tb.String(), "capacity") || !strings.Contains(tb.String(), "declared: 80000 tokens") {
		t.Errorf("table:\n%s", tb.String())
	}
}

func ptrStr(p *float64) any {
	if p == nil {
		return "null"
	}
	return *p
}

func TestParseSizes(t *testing.T) {
	got, err := ParseSizes("sweep-working-set", "10k:80k:x2, 1M, 2GB", 5000)
	want := []float64{10000, 20000, 40000, 80000, 1e6, 10000}
	if err != nil || len(got) != len(want) {
		t.Fatalf("%v %v", got, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%v, want %v", got, want)
		}
	}
	if _, err := ParseSizes("sweep-working-set", "2GB", 0); err == nil || !strings.Contains(err.Error(), "--tokens-per-gb-kvcache") {
		t.Errorf("GB without tokens per GB: %v", err)
	}
	for _, bad := range []string{"", "abc", "0", "10k:1k:x2", "-5"} {
		if _, err := ParseSizes("sweep-working-set", bad, 1000); err == nil || !strings.Contains(err.Error(), "--sweep-working-set") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// Workloads without a working set are refused, naming the four.
func TestWorkingSetOtherWorkloads(t *testing.T) {
	cfg := baseConfig(t, "http://127.0.0.1:1", nil) // random-prefill
	o := Options{Config: cfg, Dimension: WorkingSet, Values: []float64{1000}, HitTarget: 0.9}
	err := o.Validate()
	if err == nil {
		t.Fatal("random-prefill accepted")
	}
	for _, w := range []string{config.LongDocQA, config.MultiRoundChat, config.KVTierPressure, config.PrefixSuffixTuner} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not name %s", err, w)
		}
	}
}
