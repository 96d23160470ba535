package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testbin"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/simtest"
)

const mooncakeTrace = "../bench/trace/testdata/mooncake_synthetic_head300.jsonl"

// traceInputs reads the trace's input lengths by request id.
func traceInputs(t *testing.T, path string) map[string]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for i := 0; sc.Scan(); i++ {
		var l struct {
			In float64 `json:"input_length"`
		}
		if json.Unmarshal(sc.Bytes(), &l) == nil {
			out[fmt.Sprintf("trace_%d", i)] = l.In
		}
	}
	return out
}

// The binary, one request at a time against a GPU tier larger than the
// trace: every prompt has the trace's length, every hit the trace's
// expectation, and the summary says so. 60 lines: the fixture's first
// shared prefix is on line 49.
func TestTraceReplayExactAgainstSimulator(t *testing.T) {
	url := simtest.Start(t, func(c *sim.Config) { c.ZeroLatency = true; c.GPUKVGB = 1000; c.MaxModelLen = 200000 })
	res := kvbench(t, "--engine-url", url, "--workload", "trace-replay", "--tr-file", mooncakeTrace,
		"--tr-limit", "60", "--max-concurrency", "1", "--tokens-per-gb-kvcache", "10000", "--kv-cache-volume", "1000", "--format", "json")
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
	}
	inputs := traceInputs(t, mooncakeTrace)
	if len(res.Requests) != 60 {
		t.Fatalf("%d requests", len(res.Requests))
	}
	hits := 0
	for _, q := range res.Requests {
		id := q["request_id"].(string)
		if num(t, q, "prompt_tokens") != inputs[id] || num(t, q, "cached_tokens") != num(t, q, "expected_cached_tokens") ||
			num(t, q, "expected_cached_tokens_lru") != num(t, q, "expected_cached_tokens") {
			t.Errorf("%s: prompt %v (input %v) cached %v expected %v lru %v", id, q["prompt_tokens"], inputs[id],
				q["cached_tokens"], q["expected_cached_tokens"], q["expected_cached_tokens_lru"])
		}
		if num(t, q, "cached_tokens") > 0 {
			hits++
		}
	}
	if hits == 0 {
		t.Error("no request reused a prefix: the check proves nothing")
	}
	w := res.workload(t)
	if w["prompt_mode"] != "tokens" || w["prompt_exactness"] != "exact" || num(t, w, "below_expected") != 0 ||
		w["expected_hit_ratio"] != w["observed_hit_ratio"] || w["expected_hit_ratio_lru"] != w["observed_hit_ratio"] {
		t.Errorf("workload block: %v", w)
	}
}

func TestTraceReplayBadTraceExit2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(path, []byte(`{"timestamp": 0, "input_length": 20, "output_length": 1, "hash_ids": [1]}`+"\n"+`{"timestamp": 1, "input_length": 20}`+"\n"), 0o644)
	r := testbin.Run(t, time.Minute, []string{"KVBENCH_RUNS_DIR=" + t.TempDir()}, "run", "--no-interactive", "--engine-url", "builtin",
		"--workload", "trace-replay", "--tr-file", path)
	if r.Code != 2 || !strings.Contains(r.Stderr, "trace "+path+" line 2: missing field \"output_length\"") || strings.Contains(r.Stderr, "goroutine") {
		t.Errorf("exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
}
