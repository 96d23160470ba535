package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/simtest"
)

// A long-doc-qa run leads with what reuse changed: the warmup's cold
// TTFT against the reused questions', a speedup with its interval, the
// same in the summary's headline and the text's closing KV cache
// section; --percentiles adds its keys to serving and by_cache_state.
func TestHeadlineOfALongDocQARun(t *testing.T) {
	url := simtest.Start(t, func(c *sim.Config) { c.Speed = 1 })
	cfg := config.Default()
	for k, v := range map[string]any{"workload": config.LongDocQA, "model": "kvbench-sim", "output_dir": t.TempDir(),
		"no_csv": true, "ldqa_document_length": 2000, "kv_cache_volume": 1.0, "tokens_per_gb_kvcache": 10000,
		"ldqa_max_output_length": 8, "percentiles": "50,90,95,99,99.9"} {
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	r, err := New(context.Background(), &Prepared{Config: cfg, EngineURL: url + "/v1", TokensPerGB: 10000})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for range r.Events() {
		}
	}()
	fin := r.Run(context.Background())
	h := fin.Summary.Headline
	if h == nil || h.Verdict == nil || *h.Verdict != record.VerdictMet {
		t.Fatalf("headline %+v", h)
	}
	// What the engine's cache is worth is the simulator's business; the
	// headline's is to say it: reused faster than the cold warmup.
	if h.Baseline == nil || *h.Baseline != "warmup_cold" || h.Speedup == nil || *h.Speedup <= 1 {
		t.Fatalf("speedup: baseline %v, %v", h.Baseline, h.Speedup)
	}
	if ci := h.SpeedupCI95; ci == nil || ci[0] > *h.Speedup || ci[1] < *h.Speedup {
		t.Fatalf("interval %v does not hold %v", ci, *h.Speedup)
	}
	if got := *h.ColdTTFTP50ms / *h.ReusedTTFTP50ms; got != *h.Speedup {
		t.Errorf("speedup %v is not cold/reused %v", *h.Speedup, got)
	}

	raw, err := os.ReadFile(filepath.Join(r.Dir(), record.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if hj, ok := doc["headline"].(map[string]any); !ok || hj["speedup"] != *h.Speedup {
		t.Errorf("bench_summary.json headline %v", doc["headline"])
	}
	serving := doc["serving"].(map[string]any)
	for _, k := range []string{"p50", "p90", "p95", "p99", "p99.9", "median", "stdev"} {
		if _, ok := serving["ttft_ms"].(map[string]any)[k]; !ok {
			t.Errorf("serving.ttft_ms has no %s", k)
		}
	}
	reused := doc["by_cache_state"].(map[string]any)["reused"].(map[string]any)
	if _, ok := reused["ttft_ms"].(map[string]any)["p99.9"]; !ok || reused["requests"].(float64) == 0 {
		t.Errorf("by_cache_state.reused %v", reused)
	}

	var text bytes.Buffer
	if err := report.Text(&text, fin.Summary); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(text.String(), "\n"), "\n")
	kv := -1
	for i, l := range lines {
		if strings.Contains(l, " KV cache ") {
			kv = i
		}
	}
	if kv < 0 || !strings.HasPrefix(lines[len(lines)-1], "=====") || !strings.Contains(strings.Join(lines[kv:], "\n"), "Speedup (cold / reused)") {
		t.Errorf("the KV cache section does not close the summary:\n%s", text.String())
	}
	if line := report.HeadlineLine(h); !strings.HasPrefix(line, "expectation met · hit ") || !strings.Contains(line, "x faster (95% CI ") {
		t.Errorf("headline line %q", line)
	}
}
