package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testbin"
	"github.com/kvbench/kvbench/internal/testutil"
)

// engine is a minimal OpenAI-compatible streaming server for end-to-end
// tests of the binary.
type engine struct {
	srv      *httptest.Server
	requests atomic.Int64
	status   int           // non-zero: answer every completion with it
	hold     chan struct{} // non-nil: streams wait here after the first chunk
	started  chan struct{} // receives one value per started stream
	mu       sync.Mutex
	auth     []string
}

func newEngine(t *testing.T, configure func(*engine)) *engine {
	t.Helper()
	e := &engine{started: make(chan struct{}, 1024)}
	if configure != nil {
		configure(e)
	}
	e.srv = httptest.NewServer(http.HandlerFunc(e.serve))
	t.Cleanup(func() {
		if e.hold != nil {
			select {
			case <-e.hold:
			default:
				close(e.hold)
			}
		}
		e.srv.CloseClientConnections()
		e.srv.Close()
	})
	return e
}

func (e *engine) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/models":
		fmt.Fprint(w, `{"object":"list","data":[{"id":"tiny","object":"model"}]}`)
		return
	case "/v1/chat/completions", "/v1/completions":
	default:
		http.NotFound(w, r)
		return
	}
	e.requests.Add(1)
	e.mu.Lock()
	e.auth = append(e.auth, r.Header.Get("Authorization"))
	e.mu.Unlock()
	if e.status != 0 {
		w.WriteHeader(e.status)
		fmt.Fprintf(w, `{"error":{"message":"engine says no","type":"server_error","code":%d}}`, e.status)
		return
	}
	var body struct {
		Messages []struct{ Content string } `json:"messages"`
	}
	json.NewDecoder(r.Body).Decode(&body)
	prompt := 0
	for _, m := range body.Messages {
		prompt += len(strings.Fields(m.Content))
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n")
	fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hello\"}}]}\n\n")
	fl.Flush()
	e.started <- struct{}{}
	if e.hold != nil {
		select {
		case <-e.hold:
		case <-r.Context().Done():
			return
		}
	}
	fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" world\"}}]}\n\n")
	fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":2,\"total_tokens\":%d,\"prompt_tokens_details\":{\"cached_tokens\":0}}}\n\n", prompt, prompt+2)
	fmt.Fprint(w, "data: [DONE]\n\n")
	fl.Flush()
}

func onlyDir(t *testing.T, parent string) string {
	t.Helper()
	entries, err := os.ReadDir(parent)
	if err != nil || len(entries) != 1 {
		t.Fatalf("want exactly one run folder in %s, got %v (%v)", parent, entries, err)
	}
	return filepath.Join(parent, entries[0].Name())
}

func readSummary(t *testing.T, dir string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRunWritesTheFourFiles(t *testing.T) {
	t.Parallel()
	e := newEngine(t, nil)
	out := t.TempDir()
	res := testbin.Run(t, 60*time.Second, nil, "run", "--engine-url", e.srv.URL, "--workload", "random-prefill",
		"--tokens-per-gb-kvcache", "1000", "--rp-num-requests", "4", "--rp-request-length", "20",
		"--output-dir", out, "--no-interactive", "--name", "smoke")
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	dir := onlyDir(t, out)
	if !strings.HasSuffix(dir, "-random-prefill-smoke") {
		t.Errorf("run folder name %s", dir)
	}
	for _, f := range []string{"config.json", "requests.jsonl", "bench_results.csv", "bench_summary.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "bench_results.csv"))
	header := strings.SplitN(string(csv), "\n", 2)[0]
	want := "request_id,successful,ttft,request_latency,num_input_tokens,num_output_tokens,decode_speed,submit_time,first_token_time,finish_time,error,prompt_tokens,cached_tokens,cache_state,complete,chunks,itl_mean_ms,output_sha256"
	if strings.TrimSpace(header) != want {
		t.Errorf("CSV header\n got %s\nwant %s", header, want)
	}
	if n := strings.Count(strings.TrimSpace(string(csv)), "\n"); n != 4 {
		t.Errorf("CSV rows = %d, want 4", n)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "bench_summary.json"))
	gotKeys := testutil.ObjectKeys(t, data, "results")
	wantKeys := []string{"total_requests", "successful_requests", "failed_requests", "elapsed_time", "mean_ttft_ms",
		"mean_decode_speed", "mean_request_latency_ms", "input_throughput", "output_throughput", "total_input_tokens",
		"total_output_tokens", "p50_ttft_ms", "p90_ttft_ms", "p99_ttft_ms", "p50_decode_speed", "p90_decode_speed",
		"p99_decode_speed", "p50_request_latency_ms", "p90_request_latency_ms", "p99_request_latency_ms"}
	if !reflect.DeepEqual(gotKeys, wantKeys) {
		t.Errorf("results keys\n got %v\nwant %v", gotKeys, wantKeys)
	}
	top := testutil.ObjectKeys(t, data, "")
	for _, k := range []string{"schema_version", "tool", "run", "config", "results", "cache", "latency", "client", "workload"} {
		if !contains(top, k) {
			t.Errorf("summary lacks %q (has %v)", k, top)
		}
	}
	sum := readSummary(t, dir)
	if r := sum["results"].(map[string]any); r["total_requests"].(float64) != 4 || r["successful_requests"].(float64) != 4 {
		t.Errorf("results %v", r)
	}
	if c := sum["cache"].(map[string]any); c["cold"].(float64) != 4 {
		t.Errorf("explicit zero cached tokens must be cold: %v", c)
	}
	if run := sum["run"].(map[string]any); run["interrupted"] != false || run["exit_code"].(float64) != 0 || run["name"] != "smoke" {
		t.Errorf("run block %v", run)
	}
	lines, _ := os.ReadFile(filepath.Join(dir, "requests.jsonl"))
	first := strings.SplitN(string(lines), "\n", 2)[0]
	wantLine := []string{"request_id", "phase", "successful", "error", "error_detail", "scheduled_time", "submit_time",
		"first_token_time", "finish_time", "ttft_s", "request_latency_s", "dispatch_lag_ms", "prompt_tokens", "cached_tokens",
		"completion_tokens", "cache_n", "cache_state", "unverified_reason", "complete", "finish_reason", "chunks",
		"decode_speed", "itl_mean_ms", "itl_p50_ms", "itl_p95_ms", "round_gap_p50_ms", "round_gap_p95_ms",
		"tokens_per_chunk", "prefill_tps", "output_sha256", "token_sha", "retries", "slo_met"}
	// A reply that came in one read says so, last (spec/record.md,
	// arrival times); the built-in engine at full speed often writes one.
	if strings.Contains(first, `"decode_unmeasured":"one_read"`) {
		wantLine = append(wantLine, "decode_unmeasured")
	}
	if got := testutil.ObjectKeys(t, []byte(first), ""); !reflect.DeepEqual(got, wantLine) {
		t.Errorf("requests.jsonl keys\n got %v\nwant %v", got, wantLine)
	}
	cfg, _ := os.ReadFile(filepath.Join(dir, "config.json"))
	if strings.Contains(string(cfg), "engine_url") || strings.Contains(string(cfg), "127.0.0.1") {
		t.Errorf("config.json holds the engine URL:\n%s", cfg)
	}
	if !strings.Contains(res.Stdout, "Engine Benchmark Result (random-prefill)") {
		t.Errorf("text summary missing on stdout:\n%s", res.Stdout)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestRunJSONFormatAndQuiet(t *testing.T) {
	t.Parallel()
	e := newEngine(t, nil)
	res := testbin.Run(t, 60*time.Second, nil, "run", "--engine-url", e.srv.URL, "--workload", "random-prefill",
		"--tokens-per-gb-kvcache", "1000", "--rp-num-requests", "2", "--rp-request-length", "20",
		"--output-dir", t.TempDir(), "--no-interactive", "--format", "json", "-q")
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(res.Stdout), &m); err != nil {
		t.Fatalf("stdout is not the JSON summary: %v\n%s", err, res.Stdout)
	}
	if m["schema_version"].(float64) != 1 {
		t.Errorf("schema_version %v", m["schema_version"])
	}
	if strings.TrimSpace(res.Stderr) != "" {
		t.Errorf("-q must silence stderr, got:\n%s", res.Stderr)
	}
}

func TestRunFailedRequestsExit1(t *testing.T) {
	t.Parallel()
	e := newEngine(t, func(e *engine) { e.status = 503 })
	out := t.TempDir()
	res := testbin.Run(t, 60*time.Second, nil, "run", "--engine-url", e.srv.URL, "--workload", "random-prefill",
		"--tokens-per-gb-kvcache", "1000", "--rp-num-requests", "3", "--rp-request-length", "20",
		"--output-dir", out, "--no-interactive")
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", res.Code, res.Stderr)
	}
	dir := onlyDir(t, out)
	lines, _ := os.ReadFile(filepath.Join(dir, "requests.jsonl"))
	if n := strings.Count(string(lines), `"error":"http_503"`); n != 3 {
		t.Errorf("want 3 http_503 lines, got %d:\n%s", n, lines)
	}
	if !strings.Contains(string(lines), "engine says no") {
		t.Errorf("server error detail not kept")
	}
	if sum := readSummary(t, dir); sum["results"].(map[string]any)["failed_requests"].(float64) != 3 {
		t.Errorf("failed_requests: %v", sum["results"])
	}
}

// A dead engine, an unknown model or an unresolvable host fail the
// preflight: exit 3, one line naming the URL and the cause, nothing sent,
// no run folder. --no-preflight sends the requests into failure instead.
func TestRunPreflightExit3(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	dead := srv.URL
	srv.Close()
	e := newEngine(t, nil)
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"dead port", []string{"--engine-url", dead}, []string{strings.TrimPrefix(dead, "http://"), "connection refused"}},
		{"unknown model", []string{"--engine-url", e.srv.URL, "--model", "llama-70b"}, []string{`"llama-70b"`, `"tiny"`}},
		{"unknown alias", []string{"--engine-url", e.srv.URL, "--served-model-name", "alias"}, []string{`"alias"`, `"tiny"`}},
		{"no cache reset", []string{"--engine-url", e.srv.URL, "--reset-cache"}, []string{"--reset-cache", "VLLM_SERVER_DEV_MODE=1", "--slot-save-path"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "runs")
			res := testbin.Run(t, 60*time.Second, nil, append([]string{"run", "--workload", "random-prefill",
				"--tokens-per-gb-kvcache", "1000", "--rp-num-requests", "2", "--rp-request-length", "20",
				"--output-dir", out, "--no-interactive"}, c.args...)...)
			if res.Code != 3 {
				t.Fatalf("exit %d, want 3; stderr:\n%s", res.Code, res.Stderr)
			}
			msg := strings.TrimSpace(res.Stderr)
			if strings.Count(msg, "\n") > 0 {
				t.Errorf("want one line, got:\n%s", res.Stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("stderr lacks %q:\n%s", w, msg)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a run folder was created under %s", out)
			}
		})
	}
	if n := e.requests.Load(); n != 0 {
		t.Errorf("a failed preflight sent %d requests", n)
	}

	out := t.TempDir()
	res := testbin.Run(t, 60*time.Second, nil, "run", "--engine-url", dead, "--workload", "random-prefill",
		"--tokens-per-gb-kvcache", "1000", "--rp-num-requests", "2", "--rp-request-length", "20",
		"--output-dir", out, "--no-interactive", "--no-preflight")
	if res.Code != 1 {
		t.Fatalf("--no-preflight: exit %d, want 1", res.Code)
	}
	lines, _ := os.ReadFile(filepath.Join(onlyDir(t, out), "requests.jsonl"))
	if strings.Count(string(lines), `"error":"connect"`) != 2 {
		t.Errorf("--no-preflight: want 2 connect failures recorded:\n%s", lines)
	}
}

func TestRunUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	e := newEngine(t, nil)
	ro := filepath.Join(t.TempDir(), "ro")
	os.Mkdir(ro, 0o500)
	badCfg := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(badCfg, []byte(`{"workload":"long-doc-qa","ldqa_document_length":"long"}`), 0o644)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"--bogus"}, "unknown flag: --bogus"},
		{"missing", []string{}, "missing required arguments: --engine-url, --workload, --tokens-per-gb-kvcache or --lmcache-url; provide them or remove --no-interactive for guided setup"},
		{"zero size", []string{"--engine-url", e.srv.URL, "--workload", "long-doc-qa", "--tokens-per-gb-kvcache", "10", "--ldqa-document-length", "0"}, "--ldqa-document-length must be in (0, 10000000]"},
		{"bad config", []string{"--config", badCfg, "--engine-url", e.srv.URL, "--tokens-per-gb-kvcache", "10"}, "ldqa_document_length: wrong type string"},
		{"bad extra body", []string{"--engine-url", e.srv.URL, "--workload", "random-prefill", "--tokens-per-gb-kvcache", "10", "--extra-body", "{"}, "--extra-body"},
		{"not a url", []string{"--engine-url", "notaurl", "--workload", "random-prefill", "--tokens-per-gb-kvcache", "10"}, `--engine-url "notaurl": not an engine URL`},
	}
	if os.Geteuid() != 0 { // root can write anywhere
		cases = append(cases, struct {
			name string
			args []string
			want string
		}{"unwritable output", []string{"--engine-url", e.srv.URL, "--workload", "random-prefill", "--tokens-per-gb-kvcache", "10", "--output-dir", filepath.Join(ro, "x")}, "--output-dir"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := testbin.Run(t, 30*time.Second, []string{"KVBENCH_RUNS_DIR=" + t.TempDir()}, append([]string{"run", "--no-interactive"}, c.args...)...)
			if res.Code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", res.Code, res.Stderr)
			}
			lines := strings.Split(strings.TrimSpace(res.Stderr), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], c.want) {
				t.Fatalf("want one line containing %q, got:\n%s", c.want, res.Stderr)
			}
			if strings.Contains(res.Stderr, "goroutine ") || strings.Contains(res.Stderr, "panic") {
				t.Fatalf("stack trace:\n%s", res.Stderr)
			}
		})
	}
	if n := e.requests.Load(); n != 0 {
		t.Errorf("usage errors must send nothing; engine saw %d requests", n)
	}
}

func TestRunOutputDirFileFailsBeforeSending(t *testing.T) {
	t.Parallel()
	e := newEngine(t, nil)
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	res := testbin.Run(t, 30*time.Second, nil, "run", "--no-interactive", "--engine-url", e.srv.URL, "--workload", "random-prefill",
		"--tokens-per-gb-kvcache", "10", "--output-dir", filepath.Join(file, "runs"))
	if res.Code != 2 || !strings.Contains(res.Stderr, "--output-dir") {
		t.Fatalf("exit %d stderr %q", res.Code, res.Stderr)
	}
	if n := e.requests.Load(); n != 0 {
		t.Fatalf("engine saw %d requests before the output dir failed", n)
	}
}

func TestRunAPIKeyNeverStored(t *testing.T) {
	t.Parallel()
	const secret = "sk-very-secret-123"
	e := newEngine(t, nil)
	out := t.TempDir()
	res := testbin.Run(t, 60*time.Second, []string{"MY_ENGINE_KEY=" + secret}, "run", "--engine-url", e.srv.URL,
		"--workload", "random-prefill", "--tokens-per-gb-kvcache", "10", "--rp-num-requests", "2", "--rp-request-length", "20",
		"--output-dir", out, "--no-interactive", "--api-key-env", "MY_ENGINE_KEY")
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	e.mu.Lock()
	for _, a := range e.auth {
		if a != "Bearer "+secret {
			t.Errorf("Authorization %q", a)
		}
	}
	e.mu.Unlock()
	filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
		if info != nil && !info.IsDir() {
			data, _ := os.ReadFile(p)
			if bytes.Contains(data, []byte(secret)) {
				t.Errorf("%s contains the key", p)
			}
		}
		return nil
	})
	if strings.Contains(res.Stdout+res.Stderr, secret) {
		t.Error("output contains the key")
	}
}

func TestRun401SaysWhichFlag(t *testing.T) {
	t.Parallel()
	e := newEngine(t, func(e *engine) { e.status = 401 })
	res := testbin.Run(t, 60*time.Second, nil, "run", "--engine-url", e.srv.URL, "--workload", "random-prefill",
		"--tokens-per-gb-kvcache", "10", "--rp-num-requests", "1", "--rp-request-length", "20",
		"--output-dir", t.TempDir(), "--no-interactive", "--model", "tiny")
	if res.Code != 1 || !strings.Contains(res.Stderr, "--api-key-env") {
		t.Fatalf("exit %d, stderr must mention --api-key-env:\n%s", res.Code, res.Stderr)
	}
}

func TestRunSIGINTExit130(t *testing.T) {
	t.Parallel()
	e := newEngine(t, func(e *engine) { e.hold = make(chan struct{}) })
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testbin.Path(t), "run", "--engine-url", e.srv.URL, "--workload", "random-prefill",
		"--tokens-per-gb-kvcache", "10", "--rp-num-requests", "2", "--rp-request-length", "20",
		"--output-dir", out, "--no-interactive", "--idle-timeout", "30s")
	var stderr testutil.LockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until both streams are open, then interrupt, then let them end.
	for i := 0; i < 2; i++ {
		select {
		case <-e.started:
		case <-ctx.Done():
			t.Fatal("streams never started")
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	// In-flight requests may finish after the interrupt.
	waitFor(t, ctx, func() bool { return strings.Contains(stderr.String(), "interrupted") })
	close(e.hold)
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code != 130 {
		t.Fatalf("exit %d, want 130; stderr:\n%s", code, stderr.String())
	}
	dir := onlyDir(t, out)
	sum := readSummary(t, dir)
	if run := sum["run"].(map[string]any); run["interrupted"] != true || run["exit_code"].(float64) != 130 {
		t.Fatalf("run block %v", run)
	}
	f, _ := os.Open(filepath.Join(dir, "requests.jsonl"))
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
	}
	if n != 2 {
		t.Fatalf("the two in-flight requests must finish and be recorded, got %d lines", n)
	}
}

// waitFor polls cond until it holds or ctx ends.
func waitFor(t *testing.T, ctx context.Context, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatal("condition never held")
		}
	}
}

func TestRootWithoutTTYPrintsUsageExit2(t *testing.T) {
	t.Parallel()
	res := testbin.Run(t, 30*time.Second, []string{"KVBENCH_RUNS_DIR=" + t.TempDir()})
	if res.Code != 2 {
		t.Fatalf("exit %d, want 2", res.Code)
	}
	if !strings.Contains(res.Stderr, "Usage:") || !strings.Contains(res.Stderr, "kvbench run") || res.Stdout != "" {
		t.Fatalf("want usage on stderr only; stdout %q stderr %q", res.Stdout, res.Stderr)
	}
}
