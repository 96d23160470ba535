//go:build unix

package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testbin"
)

func runKV(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testbin.Path(t), args...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, so.String(), se.String()
}

// --sweep-working-set refuses a workload without a working set (exit 2,
// one line naming the four that have one) and a bad list.
func TestSweepWorkingSetUsage(t *testing.T) {
	code, _, se := runKV(t, "sweep", "--engine-url", "builtin", "--workload", "random-prefill", "--sweep-working-set", "10k", "--no-interactive")
	if code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, se)
	}
	for _, w := range []string{"--sweep-working-set", "long-doc-qa", "multi-round-chat", "kv-tier-pressure", "prefix-suffix-tuner"} {
		if !strings.Contains(se, w) {
			t.Errorf("stderr lacks %s: %s", w, se)
		}
	}
	code, _, se = runKV(t, "sweep", "--engine-url", "builtin", "--workload", "long-doc-qa", "--sweep-working-set", "10q", "--no-interactive")
	if code != 2 || !strings.Contains(se, "--sweep-working-set") || strings.Count(strings.TrimSpace(se), "\n") > 1 {
		t.Errorf("bad list: exit %d: %s", code, se)
	}
	code, _, se = runKV(t, "sweep", "--engine-url", "builtin", "--workload", "long-doc-qa", "--sweep-working-set", "10k", "--sweep-rate", "1", "--no-interactive")
	if code != 2 || !strings.Contains(se, "one of") {
		t.Errorf("two dimensions: exit %d: %s", code, se)
	}
}

// A working-set list on the built-in engine: sweep.json has the
// dimension, each cell its working-set keys, and each cell's summary
// its per-second series with the hit ratio.
func TestSweepWorkingSetList(t *testing.T) {
	out := t.TempDir()
	code, so, se := runKV(t, "sweep", "--engine-url", "builtin", "--builtin-speed", "100", "--workload", "long-doc-qa",
		"--ldqa-document-length", "500", "--ldqa-max-output-length", "1", "--sweep-working-set", "1k,2k", "--output-dir", out,
		"--no-interactive", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, so, se)
	}
	var f struct {
		Sweep  struct{ Dimension string } `json:"sweep"`
		Cells  []map[string]any           `json:"cells"`
		Result map[string]any             `json:"result"`
	}
	if err := json.Unmarshal([]byte(so), &f); err != nil {
		t.Fatalf("%v\n%s", err, so)
	}
	if f.Sweep.Dimension != "working_set" || len(f.Cells) != 2 {
		t.Fatalf("%+v", f)
	}
	for i, want := range []float64{1000, 2000} {
		c := f.Cells[i]
		if c["working_set_tokens"] != want || c["ideal_hit_ratio"] == nil || c["hit_ratio"] == nil {
			t.Errorf("cell %d: %v", i, c)
		}
		if _, ok := c["reused_ttft_p50_ms"]; !ok {
			t.Errorf("cell %d lacks reused_ttft_p50_ms", i)
		}
	}
	decl, ok := f.Result["declared"].(map[string]any)
	if !ok || decl["gpu_tokens"] != 80000.0 {
		t.Errorf("declared %v", f.Result["declared"])
	}
	sums, _ := filepath.Glob(filepath.Join(out, "*-sweep-long-doc-qa", "cells", "*", "bench_summary.json"))
	if len(sums) != 2 {
		t.Fatalf("summaries %v", sums)
	}
	b, err := os.ReadFile(sums[0])
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Series []struct {
			Second   int      `json:"second"`
			Requests int      `json:"requests"`
			HitRatio *float64 `json:"hit_ratio"`
		} `json:"series"`
	}
	if err := json.Unmarshal(b, &s); err != nil || len(s.Series) == 0 {
		t.Fatalf("series %v: %s", err, b)
	}
	n, hit := 0, false
	for _, p := range s.Series {
		n += p.Requests
		hit = hit || p.HitRatio != nil && *p.HitRatio > 0.5
	}
	if n != 4 || !hit {
		t.Errorf("series %+v: %d requests", s.Series, n)
	}
}
