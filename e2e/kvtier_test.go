package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testbin"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/simtest"
)

// TestKVTierPressure: against the built-in engine (which gets a 4 GB CPU
// tier, its L1), the pool is derived from /status, every measured request
// carries docs-per-request documents named on its line, and the prompt is
// exactly the system prompt plus the documents (one-token words).
func TestKVTierPressure(t *testing.T) {
	t.Parallel()
	r := kvbench(t, "--engine-url", "builtin", "--builtin-speed", "20", "--workload", "kv-tier-pressure",
		"--ktp-context-length", "256", "--ktp-docs-per-request", "4", "--ktp-num-requests", "12",
		"--ktp-system-prompt-length", "64", "--ktp-access-skew", "1.0",
		// No salt line, so the prompt is exactly the system prompt and the documents.
		"--prompt-salt", "none")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	w := r.workload(t)
	// ceil(2 x 4 GB x 10000 tokens/GB / 256) = 313.
	if num(t, w, "pool_size") != 313 || num(t, w, "working_set_tokens") != 313*256 || num(t, w, "warmup_sweep_requests") != 79 {
		t.Fatalf("workload block %v", w)
	}
	// The simulator's chat template: 4 tokens per message and 3 per request.
	want := 64.0 + 4*256 + 2*4 + 3
	if num(t, w, "tokens_per_request") != want {
		t.Fatalf("tokens_per_request %v, want %v", w["tokens_per_request"], want)
	}
	measured := r.byPhase("measured")
	if len(measured) != 12 || len(r.byPhase("warmup")) != 79 {
		t.Fatalf("%d measured, %d warmup requests", len(measured), len(r.byPhase("warmup")))
	}
	for id, q := range measured {
		docs, ok := q["documents"].([]any)
		if !ok || len(docs) != 4 {
			t.Fatalf("%s: documents %v, want 4", id, q["documents"])
		}
		if num(t, q, "prompt_tokens") != want {
			t.Fatalf("%s: prompt_tokens %v, want %v", id, q["prompt_tokens"], want)
		}
	}
	if r.Summary["config"].(map[string]any)["warmup_policy"] != "run" {
		t.Errorf("warmup_policy %v", r.Summary["config"])
	}
	if !strings.Contains(r.Stdout, "KV Tier Pressure") || !strings.Contains(r.Stdout, "Working set (tokens):") {
		t.Errorf("text summary lacks the workload section:\n%s", r.Stdout)
	}

	// --no-warmup: no sweep, the same measured requests.
	nw := kvbench(t, "--engine-url", "builtin", "--builtin-speed", "20", "--workload", "kv-tier-pressure",
		"--ktp-context-length", "256", "--ktp-docs-per-request", "4", "--ktp-num-requests", "12", "--no-warmup")
	if nw.Code != 0 || len(nw.byPhase("warmup")) != 0 || len(nw.byPhase("measured")) != 12 {
		t.Fatalf("--no-warmup: exit %d, %d warmups, %d measured", nw.Code, len(nw.byPhase("warmup")), len(nw.byPhase("measured")))
	}
	if nw.Summary["config"].(map[string]any)["warmup_policy"] != "skip" {
		t.Errorf("warmup_policy %v, want skip", nw.Summary["config"])
	}
}

// TestKVTierPressureBlendCheck: an LMCache server whose lookups are
// prefix-chained (the simulator's CPU tier) stops the run after the
// warmup sweep, before any measured request, with exit 1.
func TestKVTierPressureBlendCheck(t *testing.T) {
	t.Parallel()
	url := simtest.Start(t, func(c *sim.Config) { c.CPUKVGB = 1; c.GPUKVGB = 0.5 })
	r := kvbench(t, "--engine-url", url, "--lmcache-url", url, "--workload", "kv-tier-pressure",
		"--ktp-context-length", "128", "--ktp-docs-per-request", "4", "--ktp-num-requests", "5")
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.Code, r.Stderr)
	}
	msg := "the LMCache server is not blending: its lookups are prefix-chained, which cannot reuse documents sent in random order; use --ktp-docs-per-request 1 or a blending setup"
	if !strings.Contains(r.Stderr+r.Stdout, msg) {
		t.Fatalf("the blend check's message is missing:\nstdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	}
	if n := len(r.byPhase("measured")); n != 0 || len(r.byPhase("warmup")) == 0 {
		t.Fatalf("%d measured requests were sent after the blend check failed", n)
	}
	// One document per request needs no blending: the run goes on.
	ok := kvbench(t, "--engine-url", url, "--lmcache-url", url, "--workload", "kv-tier-pressure",
		"--ktp-context-length", "128", "--ktp-docs-per-request", "1", "--ktp-num-requests", "5")
	if ok.Code != 0 || len(ok.byPhase("measured")) != 5 {
		t.Fatalf("docs-per-request 1: exit %d\n%s", ok.Code, ok.Stderr)
	}
}

// TestKVTierPressureNeedsATokenizer: an engine without /tokenize stops the
// run before anything is sent (exit 3), with no run folder.
func TestKVTierPressureNeedsATokenizer(t *testing.T) {
	t.Parallel()
	eng := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"object":"list","data":[{"id":"m"}]}`))
			return
		}
		http.NotFound(w, r)
	}))
	defer eng.Close()
	dir := t.TempDir()
	res := testbin.Run(t, 60*time.Second, []string{"KVBENCH_CONFIG_DIR=" + dir}, "run", "--no-interactive", "--output-dir", dir+"/runs",
		"--engine-url", eng.URL, "--workload", "kv-tier-pressure", "--tokens-per-gb-kvcache", "1000", "--ktp-pool-size", "8", "--ktp-docs-per-request", "2")
	if res.Code != 3 || !strings.Contains(res.Stderr, "/tokenize") {
		t.Fatalf("exit %d, stderr %q; want 3 naming /tokenize", res.Code, res.Stderr)
	}
	if _, err := os.Stat(dir + "/runs"); !os.IsNotExist(err) {
		entries, _ := os.ReadDir(dir + "/runs")
		if len(entries) > 0 {
			t.Fatalf("a run folder was created: %v", entries)
		}
	}
}
