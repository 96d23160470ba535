package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
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

// realEngine starts llama.cpp's server built by real-engine/setup.sh on a
// loopback port, or skips when it has not been built on this machine.
func realEngine(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KVBENCH_REAL_ENGINE_DIR")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Skip("no cache directory to find the real engine in")
		}
		dir = filepath.Join(cache, "kvbench", "real-engine")
	}
	server := filepath.Join(dir, "llama.cpp", "build", "bin", "llama-server")
	model := filepath.Join(dir, "models", "vocab-random-64.gguf")
	for _, p := range []string{server, model} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("real engine not built (%s missing): run real-engine/setup.sh", p)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	cmd := exec.CommandContext(ctx, server, "-m", model, "--host", "127.0.0.1", "--port", fmt.Sprint(port),
		"-a", "tiny-llama", "-c", "32768", "-np", "4", "-t", "1", "--metrics", "--no-webui")
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	for {
		resp, err := http.Get(url + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal("llama-server did not become healthy")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Against llama.cpp's server, token-id prompts have exactly the trace's
// lengths, and the server never reports more reuse than the trace allows
// (it keeps one prefix per slot, so usually less).
func TestTraceReplayRealEngineExactLengths(t *testing.T) {
	url := realEngine(t)
	path := filepath.Join(t.TempDir(), "chat.jsonl")
	var b strings.Builder
	// Two conversations of four turns over a shared 64-token system block.
	for turn := 0; turn < 4; turn++ {
		for c := 0; c < 2; c++ {
			ids := []int{1, 2, 3, 4}
			for k := 0; k <= turn; k++ {
				ids = append(ids, 100*(c+1)+k*4, 100*(c+1)+k*4+1, 100*(c+1)+k*4+2, 100*(c+1)+k*4+3)
			}
			in := len(ids)*16 - 5
			fmt.Fprintf(&b, `{"chat_id": %d, "parent_chat_id": -1, "timestamp": %d.%d, "input_length": %d, "output_length": 4, "type": "text", "turn": %d, "hash_ids": %s}`+"\n",
				turn*2+c+1, turn, c, in, turn+1, strings.ReplaceAll(fmt.Sprint(ids), " ", ", "))
		}
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
	res := kvbench(t, "--engine-url", url, "--workload", "trace-replay", "--tr-file", path, "--tr-speedup", "10",
		"--tr-prompt-mode", "tokens", "--max-concurrency", "1", "--format", "json")
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
	}
	inputs := traceInputs(t, path)
	if len(res.Requests) != 8 {
		t.Fatalf("%d requests", len(res.Requests))
	}
	for _, q := range res.Requests {
		id := q["request_id"].(string)
		if num(t, q, "prompt_tokens") != inputs[id] {
			t.Errorf("%s: prompt_tokens %v, input_length %v", id, q["prompt_tokens"], inputs[id])
		}
		if c, ok := q["cached_tokens"].(float64); ok && c > num(t, q, "prompt_tokens")-1 {
			t.Errorf("%s: cached %v of %v", id, c, q["prompt_tokens"])
		}
	}
	if w := res.workload(t); w["prompt_mode"] != "tokens" || w["prompt_exactness"] != "exact" {
		t.Errorf("workload block: %v", w)
	}
}
