// Package e2e runs the built kvbench binary headless against the
// simulated engine (the in-process `builtin` one, or a simulator this test
// starts with chosen settings) and checks what the run record shows.
package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testbin"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/simtest"
)

// runResult is one finished headless run and its record.
type runResult struct {
	testbin.Result
	Summary  map[string]any
	Requests []map[string]any
}

// workload returns the summary's workload block.
func (r runResult) workload(t *testing.T) map[string]any {
	t.Helper()
	w, ok := r.Summary["workload"].(map[string]any)
	if !ok {
		t.Fatalf("no workload block in the summary:\n%s", r.Stdout)
	}
	return w
}

// byPhase returns the requests of a phase, keyed by id.
func (r runResult) byPhase(phase string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, q := range r.Requests {
		if q["phase"] == phase {
			out[q["request_id"].(string)] = q
		}
	}
	return out
}

// kvbench runs `kvbench run --no-interactive` with args in a private
// config and output directory and reads the run record back.
func kvbench(t *testing.T, args ...string) runResult {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "runs")
	env := []string{"KVBENCH_CONFIG_DIR=" + filepath.Join(dir, "config"), "KVBENCH_RUNS_DIR=" + out, "XDG_STATE_HOME=" + dir}
	full := append([]string{"run", "--no-interactive", "--output-dir", out}, args...)
	res := runResult{Result: testbin.Run(t, 90*time.Second, env, full...)}
	entries, err := os.ReadDir(out)
	if err != nil || len(entries) != 1 {
		t.Fatalf("kvbench %s: want one run folder in %s (%v, %d entries)\nstdout:\n%s\nstderr:\n%s",
			strings.Join(args, " "), out, err, len(entries), res.Stdout, res.Stderr)
	}
	folder := filepath.Join(out, entries[0].Name())
	data, err := os.ReadFile(filepath.Join(folder, "bench_summary.json"))
	if err != nil {
		t.Fatalf("no summary: %v\nstderr:\n%s", err, res.Stderr)
	}
	if err := json.Unmarshal(data, &res.Summary); err != nil {
		t.Fatalf("summary: %v", err)
	}
	f, err := os.Open(filepath.Join(folder, "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("requests.jsonl: %v", err)
		}
		res.Requests = append(res.Requests, m)
	}
	return res
}

func num(t *testing.T, m map[string]any, key string) float64 {
	t.Helper()
	v, ok := m[key].(float64)
	if !ok {
		t.Fatalf("%s is %v in %v", key, m[key], m)
	}
	return v
}

// TestPrefixSuffixTunerThrashesTheGPUTier sizes the prefix pool over and
// under the simulator's GPU tier (2 GB x 10000 tokens/GB): over it, pass
// 2 finds nothing cached; under it, every pass-2 request reuses its prefix.
func TestPrefixSuffixTunerThrashesTheGPUTier(t *testing.T) {
	t.Parallel()
	url := simtest.Start(t, func(c *sim.Config) { c.GPUKVGB = 2 })
	common := []string{"--engine-url", url, "--workload", "prefix-suffix-tuner",
		"--tokens-per-gb-kvcache", "10000", "--psf-context-length", "1000", "--psf-prefix-ratio", "0.8",
		// Not used for sizing: it tells the expectation the engine's cache.
		"--kv-cache-volume", "2"}

	// Over: int(2 x 1.05 x 10000 / 1000) = 21 contexts, 21000 tokens in a
	// 20000-token tier.
	over := kvbench(t, append(common, "--psf-thrash", "2")...)
	if over.Code != 0 {
		t.Fatalf("exit %d\n%s", over.Code, over.Stderr)
	}
	if n := num(t, over.workload(t), "num_prefixes"); n != 21 {
		t.Fatalf("num_prefixes %v, want 21", n)
	}
	if n := num(t, over.workload(t), "pool_tokens"); n != 21000 {
		t.Fatalf("pool_tokens %v, want 21000", n)
	}
	pass1, pass2 := over.byPhase("warmup"), over.byPhase("measured")
	// The engine warmup, then pass 1.
	if len(pass1) != 22 || len(pass2) != 21 || pass1["engine_warmup"] == nil || pass1["pass1_p0"] == nil || pass2["pass2_p20"] == nil {
		t.Fatalf("warmup has %d, pass 2 %d requests", len(pass1), len(pass2))
	}
	if !strings.Contains(over.Stderr+over.Stdout, "settle") {
		t.Errorf("the settle pause between the passes is not logged:\n%s", over.Stderr)
	}
	for id, q := range pass2 {
		if q["cache_state"] != "cold" {
			t.Errorf("pool over the tier: %s is %v with %v cached tokens, want cold", id, q["cache_state"], q["cached_tokens"])
		}
	}
	wantVerdict(t, over, "met", "every pass-2 request misses its prefix", "exceeds the KV budget (--kv-cache-volume 2 GB, 20,000 tokens)")

	// Under: int(0.5 x 1.05 x 10000 / 1000) = 5 contexts, about 5000
	// tokens in a 20000-token tier.
	under := kvbench(t, append(common, "--psf-thrash", "0.5")...)
	if under.Code != 0 {
		t.Fatalf("exit %d\n%s", under.Code, under.Stderr)
	}
	pass2 = under.byPhase("measured")
	if len(pass2) != 5 {
		t.Fatalf("pass 2 has %d requests, want 5", len(pass2))
	}
	for id, q := range pass2 {
		if q["cache_state"] != "reused" || num(t, q, "cached_tokens") < 800-16 {
			t.Errorf("pool under the tier: %s is %v with %v cached tokens, want its 800-token prefix reused", id, q["cache_state"], q["cached_tokens"])
		}
	}
	if !strings.Contains(under.Stdout, "Prefix Suffix Tuner") || !strings.Contains(under.Stdout, "Pass 2 cold / reused / unverified:") {
		t.Fatalf("text summary lacks the workload section:\n%s", under.Stdout)
	}
	wantVerdict(t, under, "met", "every pass-2 request reuses its prefix", "fits the KV budget")
	if !regexp.MustCompile(`(?s)-+ Expectation -+\nVerdict: +met\n  Expected: every pass-2 request reuses its prefix.*  Observed: pass 2: 5/5 reused their prefix`).MatchString(under.Stdout) {
		t.Errorf("text summary lacks the verdict:\n%s", under.Stdout)
	}
}

// wantVerdict checks bench_summary.json's workload.expectation.
func wantVerdict(t *testing.T, r runResult, verdict string, expected ...string) {
	t.Helper()
	e, ok := r.workload(t)["expectation"].(map[string]any)
	if !ok {
		t.Fatalf("no workload.expectation in %v", r.workload(t))
	}
	if e["verdict"] != verdict {
		t.Errorf("verdict %v, want %s: %v", e["verdict"], verdict, e)
	}
	for _, s := range expected {
		if !strings.Contains(fmt.Sprint(e["expected"]), s) {
			t.Errorf("expected %q does not say %q", e["expected"], s)
		}
	}
	if reason, _ := e["reason"].(string); reason == "" {
		t.Errorf("no reason: %v", e)
	}
}

// TestMultiRoundChatReusesHistory: every round of every session reuses
// the session so far, and the cached part grows round after round.
func TestMultiRoundChatReusesHistory(t *testing.T) {
	t.Parallel()
	// int(0.1 x 10000 / (200 + 300)) = 2 sessions; 20 requests in 1 s.
	r := kvbench(t, "--engine-url", "builtin", "--builtin-speed", "100", "--workload", "multi-round-chat",
		"--kv-cache-volume", "0.1", "--mrc-shared-prompt-length", "200", "--mrc-chat-history-length", "300",
		"--mrc-user-input-length", "10", "--mrc-output-length", "20", "--mrc-qps", "20", "--mrc-duration", "1")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	warm := r.byPhase("warmup")
	if len(warm) != 2 || warm["warmup_s0"] == nil || warm["warmup_s1"] == nil {
		t.Fatalf("warmups %v", warm)
	}
	type round struct {
		g      int
		cached float64
	}
	sessions := map[int][]round{}
	for id, q := range r.byPhase("measured") {
		var s, g int
		if _, err := fmt.Sscanf(id, "s%d_r%d", &s, &g); err != nil || g%2 != s {
			t.Fatalf("id %s is not s{g mod 2}_r{g}", id)
		}
		if q["cache_state"] != "reused" {
			t.Fatalf("%s is %v, want reused", id, q["cache_state"])
		}
		if q["scheduled_time"] == nil || q["dispatch_lag_ms"] == nil {
			t.Fatalf("%s has no scheduled time / dispatch lag", id)
		}
		sessions[s] = append(sessions[s], round{g, num(t, q, "cached_tokens")})
	}
	if len(sessions) != 2 {
		t.Fatalf("sessions %v", sessions)
	}
	for s, rounds := range sessions {
		if len(rounds) < 3 {
			t.Fatalf("session %d had %d rounds", s, len(rounds))
		}
		sort.Slice(rounds, func(a, b int) bool { return rounds[a].g < rounds[b].g })
		if rounds[0].cached < 500 {
			t.Errorf("session %d round 1 reused %v tokens: the warmed-up system prompt and history were not reused", s, rounds[0].cached)
		}
		for k := 1; k < len(rounds); k++ {
			if rounds[k].cached <= rounds[k-1].cached {
				t.Errorf("session %d: round %d cached %v, not more than round %d's %v: history not reused across rounds",
					s, k+1, rounds[k].cached, k, rounds[k-1].cached)
			}
		}
	}
	w := r.workload(t)
	if num(t, w, "num_users") != 2 || num(t, w, "dispatched") != float64(len(r.byPhase("measured"))) {
		t.Fatalf("workload block %v", w)
	}
}

// TestCacheProbeQualification: on a fresh simulator the first request is
// cold and the repeats reused (exit 0); a wrong expected prompt length
// fails the qualification (exit 1) with the reasons listed.
func TestCacheProbeQualification(t *testing.T) {
	t.Parallel()
	base := []string{"--engine-url", "builtin", "--builtin-speed", "100", "--workload", "cache-probe", "--cp-tokens", "16"}
	ok := kvbench(t, append(base, "--cp-require-cold", "--cp-require-reuse", "--cp-streams", "3")...)
	if ok.Code != 0 {
		t.Fatalf("exit %d on a fresh simulator\n%s\n%s", ok.Code, ok.Stdout, ok.Stderr)
	}
	w := ok.workload(t)
	rows, _ := w["rows"].([]any)
	if w["qualified"] != true || len(rows) != 6 {
		t.Fatalf("workload block %v", w)
	}
	first := rows[0].(map[string]any)
	if first["request_id"] != "first_0" || first["cache_state"] != "cold" || first["equal_first_output"] != true {
		t.Fatalf("first row %v", first)
	}
	for _, id := range []string{"repeated_0", "repeated_1"} {
		if q := ok.byPhase("repeated")[id]; q == nil || q["cache_state"] != "reused" {
			t.Fatalf("%s: %v", id, q)
		}
	}
	if len(ok.byPhase("concurrent")) != 3 || len(ok.byPhase("first")) != 1 {
		t.Fatal("want 1 first and 3 concurrent requests")
	}

	bad := kvbench(t, append(base, "--cp-expected-prompt-tokens", "7")...)
	if bad.Code != 1 {
		t.Fatalf("exit %d with a wrong expected prompt length, want 1", bad.Code)
	}
	reasons, _ := bad.workload(t)["reasons"].([]any)
	if bad.workload(t)["qualified"] != false || len(reasons) != 5 || !strings.Contains(reasons[0].(string), "expected 7") {
		t.Fatalf("reasons %v", reasons)
	}
	if !strings.Contains(bad.Stdout, "Failed checks") || !strings.Contains(bad.Stdout, "expected 7") {
		t.Fatalf("the text summary does not list the reasons:\n%s", bad.Stdout)
	}

	// Token ids from a file go to /v1/completions: the server counts
	// exactly that many prompt tokens.
	ids := make([]string, 64)
	for i := range ids {
		ids[i] = fmt.Sprint(1000 + i)
	}
	file := filepath.Join(t.TempDir(), "ids.json")
	os.WriteFile(file, []byte("["+strings.Join(ids, ",")+"]"), 0o644)
	exact := kvbench(t, append(base, "--cp-prompt-file", file, "--cp-expected-prompt-tokens", "64", "--cp-require-cold", "--cp-require-reuse")...)
	if exact.Code != 0 {
		t.Fatalf("exit %d with an exact token-id prompt: %v", exact.Code, exact.workload(t)["reasons"])
	}
}

// TestCacheProbeBadPromptFile: a bad --cp-prompt-file is a usage error
// (exit 2) naming the flag and the file, before anything is sent.
func TestCacheProbeBadPromptFile(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "ids.json")
	os.WriteFile(file, []byte(`[1, 2.5]`), 0o644)
	dir := t.TempDir()
	r := testbin.Run(t, 60*time.Second, []string{"KVBENCH_CONFIG_DIR=" + dir}, "run", "--no-interactive", "--output-dir", dir,
		"--engine-url", "builtin", "--workload", "cache-probe", "--cp-prompt-file", file)
	if r.Code != 2 || !strings.Contains(r.Stderr, "--cp-prompt-file "+file) {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// TestPrefixSuffixTunerShortSuffix: a split leaving under 100 suffix
// tokens is refused with exit 2.
func TestPrefixSuffixTunerShortSuffix(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := testbin.Run(t, 60*time.Second, []string{"KVBENCH_CONFIG_DIR=" + dir}, "run", "--no-interactive", "--output-dir", dir,
		"--engine-url", "builtin", "--workload", "prefix-suffix-tuner", "--psf-context-length", "200", "--psf-prefix-ratio", "0.95")
	if r.Code != 2 || !strings.Contains(r.Stderr, "suffix_tokens=-22 is below minimum 100; reduce prefix_ratio or increase context_length") {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// TestConcurrentExactness: the deterministic simulator gives every prompt
// the same reply alone and under concurrency (exit 0); made
// non-deterministic, differences are found and reported (exit 1).
func TestConcurrentExactness(t *testing.T) {
	t.Parallel()
	args := []string{"--workload", "concurrent-exactness", "--ce-alone", "--ce-tokens", "16", "--ce-levels", "1,4,8,16"}
	same := kvbench(t, append([]string{"--engine-url", "builtin", "--builtin-speed", "100"}, args...)...)
	if same.Code != 0 {
		t.Fatalf("exit %d on the deterministic simulator: %v", same.Code, same.workload(t)["differences"])
	}
	w := same.workload(t)
	if num(t, w, "different") != 0 || len(same.byPhase("reference")) != 16 || len(same.byPhase("measured")) != 29 {
		t.Fatalf("deterministic: %v different, %d references, %d measured", w["different"], len(same.byPhase("reference")), len(same.byPhase("measured")))
	}
	cells := w["cells"].([]any)
	c16 := cells[3].(map[string]any)
	vs := c16["output_vs"].(map[string]any)["alone"].(map[string]any)
	if num(t, c16, "requests") != 16 || num(t, vs, "equal") != 16 {
		t.Fatalf("level 16 cell %v", c16)
	}

	url := simtest.Start(t, func(c *sim.Config) { c.NondeterministicRate = 0.5; c.FaultSeed = 7 })
	diff := kvbench(t, append([]string{"--engine-url", url}, args...)...)
	if diff.Code != 1 {
		t.Fatalf("exit %d on a non-deterministic simulator, want 1", diff.Code)
	}
	w = diff.workload(t)
	if num(t, w, "different") == 0 || w["exact"] != false {
		t.Fatalf("no differences found: %v", w)
	}
	if !strings.Contains(diff.Stdout, "Failed checks") || !strings.Contains(diff.Stdout, "differ from alone") {
		t.Fatalf("the text summary does not list the differences:\n%s", diff.Stdout)
	}
}

// TestLongDocQAVerdictOnTheBuiltinEngine: the built-in engine's own cache
// is what long-doc-qa's expectation counts on, whatever budget sizes the
// documents: 5 documents fit it and every question reuses its document;
// 60 overflow it and the expectation turns to "some miss".
func TestLongDocQAVerdictOnTheBuiltinEngine(t *testing.T) {
	t.Parallel()
	common := []string{"--engine-url", "builtin", "--builtin-speed", "100", "--workload", "long-doc-qa",
		"--ldqa-document-length", "2000", "--ldqa-shuffle-policy", "tile"}
	fits := kvbench(t, append(common, "--kv-cache-volume", "1")...)
	if fits.Code != 0 {
		t.Fatalf("exit %d\n%s", fits.Code, fits.Stderr)
	}
	wantVerdict(t, fits, "met", "every question reuses its document", "the 5 documents (10,000 tokens) fit the built-in engine's GPU cache (8 GB, 80,000 tokens)")
	over := kvbench(t, append(common, "--kv-cache-volume", "12")...)
	if over.Code != 0 {
		t.Fatalf("exit %d\n%s", over.Code, over.Stderr)
	}
	wantVerdict(t, over, "met", "some questions miss their document", "the 60 documents (120,000 tokens) exceed the built-in engine's GPU cache")
}
