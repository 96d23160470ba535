// Package real runs the built kvbench binary against a real engine:
// llama.cpp's llama-server with a tiny random model (built by
// ../shared/real-engine/setup.sh), started by TestMain on a loopback port,
// or any engine given in KVBENCH_E2E_ENGINE_URL (docs/real-engine.md).
//
// Environment:
//
//	KVBENCH_E2E_ENGINE_URL  an engine to test instead of starting one
//	KVBENCH_E2E_MODEL       its model (default: the first it lists)
//	KVBENCH_LLAMA_SERVER    the llama-server binary to start
//	KVBENCH_LLAMA_MODEL     the GGUF model it serves
//
// With none of them the suite is skipped, except under CI=true, where a
// missing engine is a failure: the suite is never silently skipped there.
package real

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testbin"
)

// engine is the engine under test.
var engine struct {
	url      string // base URL, without /v1
	model    string
	llama    bool   // a llama-server this suite started (slots, cache_n)
	server   string // llama-server binary, to start a second one
	gguf     string
	skipNote string
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	defer testbin.Cleanup()
	switch {
	case os.Getenv("KVBENCH_E2E_ENGINE_URL") != "":
		engine.url = strings.TrimSuffix(strings.TrimRight(os.Getenv("KVBENCH_E2E_ENGINE_URL"), "/"), "/v1")
		engine.model = os.Getenv("KVBENCH_E2E_MODEL")
	case os.Getenv("KVBENCH_LLAMA_SERVER") != "" && os.Getenv("KVBENCH_LLAMA_MODEL") != "":
		engine.server, engine.gguf = os.Getenv("KVBENCH_LLAMA_SERVER"), os.Getenv("KVBENCH_LLAMA_MODEL")
		srv, err := startLlama("")
		if err != nil {
			fmt.Fprintf(os.Stderr, "real-engine e2e: %v\n", err)
			return 1
		}
		defer srv.stop()
		engine.url, engine.llama, engine.model = srv.url, true, "tiny-llama"
	default:
		msg := "real-engine e2e: no engine: set KVBENCH_LLAMA_SERVER and KVBENCH_LLAMA_MODEL " +
			"(bash ../shared/real-engine/setup.sh prints them) or KVBENCH_E2E_ENGINE_URL"
		if os.Getenv("CI") == "true" {
			fmt.Fprintln(os.Stderr, msg+"; under CI a missing engine fails the suite")
			return 1
		}
		engine.skipNote = msg
	}
	return m.Run()
}

func need(t *testing.T) {
	t.Helper()
	if engine.skipNote != "" {
		t.Skip(engine.skipNote)
	}
}

// llamaServer is one llama-server process on a loopback port.
type llamaServer struct {
	url string
	cmd *exec.Cmd
	log *os.File
}

// startLlama starts llama-server (with --slot-save-path when slotDir is
// set) and waits, at most 120 s, until /health answers 200.
func startLlama(slotDir string) (*llamaServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	args := []string{"-m", engine.gguf, "--host", "127.0.0.1", "--port", fmt.Sprint(port), "-a", "tiny-llama",
		"-c", "16384", "-np", "4", "-t", "1", "--metrics", "--no-webui"}
	if slotDir != "" {
		// Slot erase clears the slots only: llama.cpp's host-memory prompt
		// cache (--cache-ram, on by default) keeps prompts and restores
		// them, so the reset test turns it off (docs/real-engine.md).
		args = append(args, "--slot-save-path", slotDir, "--cache-ram", "0")
	}
	log, err := os.CreateTemp("", "llama-server-*.log")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(engine.server, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", engine.server, err)
	}
	s := &llamaServer{url: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, log: log}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(120 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		select {
		case err := <-exited:
			out, _ := os.ReadFile(log.Name())
			return nil, fmt.Errorf("llama-server exited (%v):\n%s", err, tail(out))
		case <-deadline:
			s.stop()
			return nil, fmt.Errorf("llama-server not healthy within 120 s")
		case <-tick.C:
			resp, err := hc.Get(s.url + "/health")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return s, nil
				}
			}
		}
	}
}

func (s *llamaServer) stop() {
	s.cmd.Process.Kill()
	s.log.Close()
	os.Remove(s.log.Name())
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// record is one finished run and its record.
type record struct {
	testbin.Result
	Dir      string
	Summary  map[string]any
	Requests []map[string]any
}

// kvbench runs `kvbench run --no-interactive` against the engine.
func kvbench(t *testing.T, args ...string) record {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "runs")
	env := []string{"KVBENCH_CONFIG_DIR=" + filepath.Join(dir, "config"), "KVBENCH_RUNS_DIR=" + out}
	full := append([]string{"run", "--no-interactive", "--output-dir", out, "--engine-url", engine.url}, args...)
	if engine.model != "" {
		full = append(full, "--model", engine.model)
	}
	r := record{Result: testbin.Run(t, 150*time.Second, env, full...)}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 {
		return r
	}
	r.Dir = filepath.Join(out, entries[0].Name())
	if data, err := os.ReadFile(filepath.Join(r.Dir, "bench_summary.json")); err == nil {
		json.Unmarshal(data, &r.Summary)
	}
	f, err := os.Open(filepath.Join(r.Dir, "requests.jsonl"))
	if err != nil {
		return r
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("requests.jsonl: %v", err)
		}
		r.Requests = append(r.Requests, m)
	}
	return r
}

// check asserts what every run against a real engine must show: a
// summary, no failed request (warmups included), receipts that agree
// with llama.cpp's own timings.cache_n, and retries recorded on every
// line and summed in the client block. It returns the retries.
func (r record) check(t *testing.T, what string) int {
	t.Helper()
	if r.Summary == nil {
		t.Fatalf("%s: no summary (exit %d)\nstderr:\n%s", what, r.Code, r.Stderr)
	}
	res := r.Summary["results"].(map[string]any)
	if n := res["failed_requests"].(float64); n != 0 {
		t.Errorf("%s: %v failed requests\nstderr:\n%s", what, n, r.Stderr)
	}
	retries := 0
	for _, q := range r.Requests {
		if q["successful"] != true {
			t.Errorf("%s: request %v (%v) failed: %v %v", what, q["request_id"], q["phase"], q["error"], q["error_detail"])
		}
		rt, ok := q["retries"].(float64)
		if !ok || rt < 0 || rt > 1 {
			t.Errorf("%s: request %v has retries %v", what, q["request_id"], q["retries"])
		}
		retries += int(rt)
		if cn, ok := q["cache_n"].(float64); ok && engine.llama {
			if ct, _ := q["cached_tokens"].(float64); ct != cn {
				t.Errorf("%s: request %v reports cached_tokens %v but timings.cache_n %v", what, q["request_id"], q["cached_tokens"], cn)
			}
		} else if engine.llama && q["successful"] == true {
			t.Errorf("%s: request %v has no cache_n from llama-server", what, q["request_id"])
		}
	}
	if got := r.Summary["client"].(map[string]any)["retries"]; got != float64(retries) {
		t.Errorf("%s: summary client.retries %v, lines sum to %d", what, got, retries)
	}
	return retries
}

func TestDoctor(t *testing.T) {
	need(t)
	args := []string{"doctor", "--engine-url", engine.url, "--format", "json"}
	if engine.model != "" {
		args = append(args, "--model", engine.model)
	}
	r := testbin.Run(t, 120*time.Second, nil, args...)
	var rep struct {
		Checks []struct{ ID, Status, Message string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("doctor output: %v\n%s\n%s", err, r.Stdout, r.Stderr)
	}
	for _, c := range rep.Checks {
		t.Logf("doctor %-13s %-4s %s", c.ID, c.Status, c.Message)
		switch c.ID {
		case "models", "stream", "usage", "prefix_cache":
			if c.Status != "pass" {
				t.Errorf("doctor %s: %s %s", c.ID, c.Status, c.Message)
			}
		}
	}
	if r.Code != 0 {
		t.Errorf("doctor exit %d", r.Code)
	}
}

func TestCacheProbe(t *testing.T) {
	need(t)
	r := kvbench(t, "--workload", "cache-probe", "--cp-tokens", "8", "--cp-repeats", "2", "--cp-streams", "2", "--cp-require-reuse")
	r.check(t, "cache-probe")
	for _, q := range r.Requests {
		if q["phase"] == "repeated" && q["cache_state"] != "reused" {
			t.Errorf("cache-probe: repeated row %v is %v", q["request_id"], q["cache_state"])
		}
	}
}

// long-doc-qa, the workload that lost a request or two to llama.cpp's
// closed keep-alive connections in every run, several times in a row.
func TestLongDocQARepeated(t *testing.T) {
	need(t)
	total := 0
	for i := range 3 {
		r := kvbench(t, "--workload", "long-doc-qa", "--kv-cache-volume", "1", "--tokens-per-gb-kvcache", "3000",
			"--ldqa-document-length", "1000", "--ldqa-max-output-length", "8")
		total += r.check(t, fmt.Sprintf("long-doc-qa run %d", i+1))
		if r.Code != 0 {
			t.Errorf("long-doc-qa run %d: exit %d\n%s", i+1, r.Code, r.Stderr)
		}
		if len(r.Requests) != 9 {
			t.Errorf("long-doc-qa run %d: %d requests, want 3 warmups + 6", i+1, len(r.Requests))
		}
		reused := 0
		for _, q := range r.Requests {
			if q["phase"] == "measured" && q["cache_state"] == "reused" {
				reused++
			}
		}
		if reused == 0 {
			t.Errorf("long-doc-qa run %d: no measured request reused its document", i+1)
		}
	}
	t.Logf("long-doc-qa: %d retries on fresh connections over 3 runs", total)
}

// verdict is the workload's judgement of its own expectation.
func verdict(r record) any {
	w, _ := r.Summary["workload"].(map[string]any)
	e, _ := w["expectation"].(map[string]any)
	return e["verdict"]
}

func hitRatio(r record) float64 {
	h, _ := r.Summary["cache"].(map[string]any)["hit_ratio"].(float64)
	return h
}

// random-prefill reruns: the second run of LMCache's exact prompts
// (--prompt-salt none) is served from the cache; with the default salt
// nothing of an earlier run is. llama.cpp reuses a slot's previous prompt
// token by token, so a salted request still shares the first tokens every
// prompt starts with: the chat template's opening (about 10 tokens here)
// or, on /v1/completions, the BOS and word-start tokens. Those are all a
// salted rerun may report cached: under one 16-token block, never the
// earlier run's 400-token prompts (docs/real-engine.md).
func TestRandomPrefillReruns(t *testing.T) {
	need(t)
	rp := []string{"--workload", "random-prefill", "--tokens-per-gb-kvcache", "1000",
		"--rp-num-requests", "4", "--rp-request-length", "400"}
	none := append(append([]string{}, rp...), "--prompt-salt", "none")
	kvbench(t, none...).check(t, "random-prefill none 1")
	second := kvbench(t, none...)
	second.check(t, "random-prefill none 2")
	if h := hitRatio(second); h < 0.9 {
		t.Errorf("second --prompt-salt none run: hit ratio %.3f, want >= 0.9 (all reused)", h)
	}
	for _, q := range second.Requests {
		if q["cache_state"] != "reused" {
			t.Errorf("second --prompt-salt none run: %v is %v", q["request_id"], q["cache_state"])
		}
	}
	if v := verdict(second); v != "not_met" {
		t.Errorf("second --prompt-salt none run: expectation verdict %q, want not_met (every prompt was served from the cache)", v)
	}
	for i, endpoint := range []string{"chat", "chat", "completions", "completions"} {
		what := fmt.Sprintf("random-prefill auto %d (%s)", i+1, endpoint)
		r := kvbench(t, append(slices.Clone(rp), "--endpoint", endpoint)...)
		r.check(t, what)
		for _, q := range r.Requests {
			if c, ok := q["cached_tokens"].(float64); !ok || c >= 16 {
				t.Errorf("%s: %v reports %v of %v prompt tokens cached, want under 16 (only the tokens every prompt starts with)",
					what, q["request_id"], q["cached_tokens"], q["prompt_tokens"])
			}
			if q["decode_speed"] != nil {
				t.Errorf("%s (max_tokens 1): %v has decode_speed %v, want null", what, q["request_id"], q["decode_speed"])
			}
		}
		if d := r.Summary["results"].(map[string]any)["mean_decode_speed"]; d != nil {
			t.Errorf("%s: mean_decode_speed %v, want null", what, d)
		}
		// The workload's own judgement: every request a cold prefill.
		if v := verdict(r); v != "met" {
			t.Errorf("%s: expectation verdict %q, want met", what, v)
		}
	}
}

func TestMultiRoundChat(t *testing.T) {
	need(t)
	r := kvbench(t, "--workload", "multi-round-chat", "--kv-cache-volume", "1", "--tokens-per-gb-kvcache", "600",
		"--mrc-shared-prompt-length", "100", "--mrc-chat-history-length", "200", "--mrc-user-input-length", "10",
		"--mrc-output-length", "8", "--mrc-qps", "4", "--mrc-duration", "3")
	r.check(t, "multi-round-chat")
	if len(r.Requests) < 4 {
		t.Errorf("multi-round-chat: only %d requests", len(r.Requests))
	}
}

func TestConcurrentExactness(t *testing.T) {
	need(t)
	r := kvbench(t, "--workload", "concurrent-exactness", "--ce-levels", "1,2", "--ce-tokens", "8")
	r.check(t, "concurrent-exactness")
}

// --reset-cache: llama.cpp erases its slots only with --slot-save-path;
// without it the run stops before any request with exit 3 naming the
// flag, and leaves no run folder.
func TestResetCache(t *testing.T) {
	need(t)
	if !engine.llama {
		r := kvbench(t, "--workload", "random-prefill", "--tokens-per-gb-kvcache", "1000",
			"--rp-num-requests", "2", "--rp-request-length", "100", "--reset-cache")
		if r.Code == 3 {
			if r.Dir != "" || !strings.Contains(r.Stderr, "--reset-cache") {
				t.Errorf("exit 3 must name --reset-cache and leave no folder:\n%s", r.Stderr)
			}
			t.Logf("the engine has no cache reset: %s", r.Stderr)
			return
		}
		r.check(t, "reset-cache")
		if r.Summary["cache_reset"] == nil {
			t.Errorf("cache_reset is null after a run with --reset-cache")
		}
		return
	}
	args := []string{"--workload", "random-prefill", "--tokens-per-gb-kvcache", "1000",
		"--rp-num-requests", "2", "--rp-request-length", "100", "--prompt-salt", "none", "--reset-cache"}
	r := kvbench(t, args...)
	if r.Code != 3 || r.Dir != "" || !strings.Contains(r.Stderr, "--slot-save-path") || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
		t.Fatalf("without --slot-save-path: exit %d, folder %q, stderr:\n%s", r.Code, r.Dir, r.Stderr)
	}

	srv, err := startLlama(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stop()
	saved := engine.url
	engine.url = srv.url
	defer func() { engine.url = saved }()
	plain := args[:len(args)-1]
	kvbench(t, plain...).check(t, "warm the slots")
	r = kvbench(t, args...)
	r.check(t, "--reset-cache with --slot-save-path")
	if r.Code != 0 || r.Summary["cache_reset"] != "POST /slots/{id}?action=erase" {
		t.Fatalf("with --slot-save-path: exit %d cache_reset %v\n%s", r.Code, r.Summary["cache_reset"], r.Stderr)
	}
	if h := hitRatio(r); h > 0.1 {
		t.Errorf("after the reset the same prompts hit %.3f of their tokens, want <= 0.1", h)
	}
}

// traceInputs reads a trace's input lengths by request id.
func traceInputs(t *testing.T, path string) map[string]float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var l struct {
			In float64 `json:"input_length"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("trace_%d", i)] = l.In
	}
	return out
}

// Against llama.cpp's server, token-id prompts have exactly the trace's
// lengths, and the server never reports more reuse than the trace allows.
// llama.cpp reuses a slot's prefix token by token, so the replay says
// --tr-engine-block-size 1: a conversation's next turn then hits exactly
// what the trace predicts, its whole previous prompt, cut last block
// included. (A turn can get less: with one request at a time llama.cpp
// gives the other conversation the same slot, keeping only the shared
// system blocks.)
func TestTraceReplayExactLengths(t *testing.T) {
	need(t)
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
	res := kvbench(t, "--workload", "trace-replay", "--tr-file", path, "--tr-speedup", "10",
		"--tr-prompt-mode", "tokens", "--tr-engine-block-size", "1", "--max-concurrency", "1", "--format", "json")
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
	}
	res.check(t, "trace-replay")
	inputs := traceInputs(t, path)
	if len(res.Requests) != 8 {
		t.Fatalf("%d requests", len(res.Requests))
	}
	exact := 0
	for _, q := range res.Requests {
		id := q["request_id"].(string)
		if q["prompt_tokens"] != inputs[id] {
			t.Errorf("%s: prompt_tokens %v, input_length %v", id, q["prompt_tokens"], inputs[id])
		}
		cached, ok1 := q["cached_tokens"].(float64)
		expected, ok2 := q["expected_cached_tokens"].(float64)
		if !ok1 || !ok2 {
			t.Fatalf("%s: cached %v, expected %v", id, q["cached_tokens"], q["expected_cached_tokens"])
		}
		t.Logf("%s: prompt %v, cached %v, expected %v", id, q["prompt_tokens"], cached, expected)
		if cached > expected {
			t.Errorf("%s: llama.cpp reused %v tokens, more than the %v the trace shares", id, cached, expected)
		}
		if cached == expected {
			exact++
		}
	}
	// The first request, the other conversation's first turn (the system
	// blocks) and every turn after the second hit exactly.
	if exact < 6 {
		t.Errorf("%d of 8 requests hit what the trace predicts, want at least 6", exact)
	}
	if w, _ := res.Summary["workload"].(map[string]any); w["prompt_mode"] != "tokens" || w["prompt_exactness"] != "exact" {
		t.Errorf("workload block: %v", w)
	}
}

// LMCache's newer workloads against llama.cpp's server: kv-tier-pressure
// learns its one-token words through llama.cpp's /tokenize and, its
// documents in random order, reuses only the system prompt (what a prefix
// cache can); rag-qa-quality aligns its passages through /tokenize,
// prefills them alone and writes its quality file.
func TestKVTierPressure(t *testing.T) {
	need(t)
	r := kvbench(t, "--workload", "kv-tier-pressure", "--tokens-per-gb-kvcache", "1000", "--ktp-pool-size", "8",
		"--ktp-docs-per-request", "2", "--ktp-context-length", "300", "--ktp-num-requests", "10", "--format", "json")
	r.check(t, "kv-tier-pressure")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	w, _ := r.Summary["workload"].(map[string]any)
	if n, _ := w["vocabulary_words"].(float64); n < 256 {
		t.Errorf("vocabulary_words %v: the engine's tokenizer must give at least 256 one-token words", w["vocabulary_words"])
	}
	if v := verdict(r); v != "met" {
		t.Errorf("kv-tier-pressure verdict %v: %v", v, w["expectation"])
	}
	measured := 0
	for _, q := range r.Requests {
		if q["phase"] == "measured" {
			measured++
			if docs, _ := q["documents"].([]any); len(docs) != 2 {
				t.Errorf("%v carried documents %v, want 2", q["request_id"], q["documents"])
			}
		}
	}
	if measured != 10 {
		t.Errorf("%d measured requests, want 10", measured)
	}
}

func TestRAGQAQuality(t *testing.T) {
	need(t)
	data, err := filepath.Abs("../../bench/workload/testdata/rag_musique.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	r := kvbench(t, "--workload", "rag-qa-quality", "--rag-dataset", data, "--rag-max-output-length", "16",
		"--rag-doc-align-tokens", "32", "--format", "json")
	r.check(t, "rag-qa-quality")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	w, _ := r.Summary["workload"].(map[string]any)
	if w["off_alignment"] != float64(0) || w["num_samples"] != float64(3) {
		t.Errorf("off_alignment %v, num_samples %v", w["off_alignment"], w["num_samples"])
	}
	if v := verdict(r); v != "met" {
		t.Errorf("rag-qa-quality verdict %v: %v", v, w["expectation"])
	}
	b, err := os.ReadFile(filepath.Join(r.Dir, "rag_qa_quality.json"))
	if err != nil {
		t.Fatal(err)
	}
	var q struct {
		PerSample []map[string]any `json:"per_sample"`
	}
	if err := json.Unmarshal(b, &q); err != nil || len(q.PerSample) != 3 {
		t.Fatalf("rag_qa_quality.json: %v, %d samples", err, len(q.PerSample))
	}
}
