package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/hostileengine"
	"github.com/kvbench/kvbench/internal/testbin"
)

const hostileKey = "sk-e2e-planted-4c3b2a1f0e"

// hostileRun is one run of the binary against a hostile engine, with the
// key in the environment variable --api-key-env names.
type hostileRun struct {
	code           int
	stdout, stderr string
	folder         string
	maxRSSKiB      int64 // peak resident set of the kvbench process; -1 where unknown
	lines          []map[string]any
	summary        map[string]any
}

func runHostile(t *testing.T, e *hostileengine.Engine, args ...string) hostileRun {
	t.Helper()
	bin := testbin.Path(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "runs")
	full := append([]string{"run", "--no-interactive", "--engine-url", e.URL, "--api-key-env", "KVBENCH_HOSTILE_KEY",
		"--output-dir", out, "--workload", "random-prefill", "--tokens-per-gb-kvcache", "10000", "--rp-request-length", "40"}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, full...)
	cmd.Env = append(os.Environ(), "KVBENCH_HOSTILE_KEY="+hostileKey, "KVBENCH_CONFIG_DIR="+filepath.Join(dir, "config"),
		"KVBENCH_RUNS_DIR="+out, "XDG_STATE_HOME="+dir)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	peak, err := runPeakRSS(cmd)
	if ctx.Err() != nil {
		t.Fatalf("kvbench did not finish in time\nstderr:\n%s", se.String())
	}
	r := hostileRun{stdout: so.String(), stderr: se.String(), maxRSSKiB: peak}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(out)
	if err != nil || len(entries) != 1 {
		t.Fatalf("want one run folder (%v, %d)\nstdout:\n%s\nstderr:\n%s", err, len(entries), r.stdout, r.stderr)
	}
	r.folder = filepath.Join(out, entries[0].Name())
	f, err := os.Open(filepath.Join(r.folder, "requests.jsonl"))
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
		r.lines = append(r.lines, m)
	}
	b, err := os.ReadFile(filepath.Join(r.folder, "bench_summary.json"))
	if err != nil || json.Unmarshal(b, &r.summary) != nil {
		t.Fatalf("summary: %v", err)
	}
	return r
}

// checkClean fails for the key (or its first characters), a raw ESC/C1
// or other control byte, or an escaped one, in text.
func checkClean(t *testing.T, what string, b []byte) {
	t.Helper()
	if bytes.Contains(b, []byte(hostileKey[:8])) {
		t.Errorf("%s holds the key", what)
	}
	if i := hostileengine.Unsafe(b); i >= 0 {
		t.Errorf("%s holds a control byte at %d: %q", what, i, b[max(0, i-40):min(len(b), i+40)])
	}
	for _, esc := range []string{`\u001b`, `\u009b`, `\u0007`, `\x1b`} {
		if bytes.Contains(b, []byte(esc)) {
			t.Errorf("%s holds an escaped control %s", what, esc)
		}
	}
}

// checkAllClean runs checkClean over stdout, stderr and every file of the
// run folder; it returns how many files it read.
func checkAllClean(t *testing.T, r hostileRun) int {
	t.Helper()
	checkClean(t, "stdout", []byte(r.stdout))
	checkClean(t, "stderr", []byte(r.stderr))
	files := 0
	filepath.WalkDir(r.folder, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("read %s: %v", path, err)
			return nil
		}
		files++
		checkClean(t, filepath.Base(path), b)
		return nil
	})
	return files
}

// TestHostileEngineRecordStaysClean: an engine that echoes the key in
// every place a reply can carry text, laces its model ids and errors with
// terminal escapes, reports counts near 2^62 and writes whole replies at
// once. The run still records every request, and no file of the run,
// nor stdout or stderr, holds the key or a control byte; counts near 2^62
// are invalid and no total overflows; replies in one write have no decode
// figures.
func TestHostileEngineRecordStaysClean(t *testing.T) {
	t.Parallel()
	testbin.Path(t) // build first: the timeouts below are for kvbench alone
	replies := []hostileengine.Reply{hostileengine.Normal, hostileengine.OneWrite, hostileengine.ErrorObject, hostileengine.ErrorEvent,
		hostileengine.MalformedChunk, hostileengine.HTTPError, hostileengine.HTTPErrorText, hostileengine.HugeCounts}
	e := hostileengine.Start(t, hostileengine.Config{Replies: replies, EchoInContent: true})
	const n = 16
	r := runHostile(t, e, "--rp-num-requests", "16")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (requests failed)\nstderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(strings.Join(e.Authorizations(), " "), hostileKey) {
		t.Fatalf("the key never reached the engine: %q", e.Authorizations())
	}
	if files := checkAllClean(t, r); files < 4 {
		t.Errorf("only %d files in the run folder", files)
	}

	codes := map[string]int{}
	oneRead, huge := 0, 0
	for _, l := range r.lines {
		if c, ok := l["error"].(string); ok {
			codes[c]++
			if d, _ := l["error_detail"].(string); !strings.Contains(d, "[redacted]") && c != "invalid_json" {
				t.Errorf("%s: the echoed key is not marked: %q", c, d)
			}
		}
		if l["decode_unmeasured"] == "one_read" {
			oneRead++
			if l["decode_speed"] != nil || l["itl_mean_ms"] != nil {
				t.Errorf("one_read line with decode figures: %v", l)
			}
		}
		if l["unverified_reason"] == "invalid_count" {
			huge++
			if l["prompt_tokens"] != nil || l["completion_tokens"] != nil || l["cached_tokens"] != nil || l["cache_n"] != nil {
				t.Errorf("a count near 2^62 was kept: %v", l)
			}
		}
	}
	measured := 0
	for _, l := range r.lines {
		if l["phase"] == "measured" {
			measured++
		}
	}
	if measured != n {
		t.Fatalf("%d measured lines, want %d", measured, n)
	}
	// Each error reply came in turn, so each code is in the record.
	for _, c := range []string{"stream_error", "invalid_json", "http_503", "http_500"} {
		if codes[c] == 0 {
			t.Errorf("no %s in the record (codes %v)", c, codes)
		}
	}
	if oneRead == 0 || huge == 0 {
		t.Errorf("%d one_read lines, %d invalid_count lines; want some of each", oneRead, huge)
	}
	lat := r.summary["latency"].(map[string]any)
	res := r.summary["results"].(map[string]any)
	cache := r.summary["cache"].(map[string]any)
	if lat["decode_unmeasured"].(float64) < 1 {
		t.Errorf("latency.decode_unmeasured %v", lat["decode_unmeasured"])
	}
	for _, k := range []string{"total_input_tokens", "total_output_tokens", "input_throughput", "output_throughput"} {
		if v := res[k].(float64); v < 0 || v > 1e9 {
			t.Errorf("results.%s = %v", k, v)
		}
	}
	if h, ok := cache["hit_ratio"].(float64); ok && (h < 0 || h > 1) {
		t.Errorf("cache.hit_ratio = %v", h)
	}
	if p := cache["prompt_tokens"].(float64); p < 0 || p > 1e9 {
		t.Errorf("cache.prompt_tokens = %v", p)
	}
}

// TestEndlessStreamEndsBounded: an engine that never sends [DONE] fills
// the default 256 MiB response limit with 34-byte chunks (7.9 million of
// them); the request ends as response_too_long and kvbench's peak memory
// stays far below what keeping every chunk's arrival would take.
func TestEndlessStreamEndsBounded(t *testing.T) {
	t.Parallel()
	testbin.Path(t)
	e := hostileengine.Start(t, hostileengine.Config{Replies: []hostileengine.Reply{hostileengine.Endless}})
	r := runHostile(t, e, "--rp-num-requests", "1", "--no-warmup")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstderr:\n%s", r.code, r.stderr)
	}
	checkAllClean(t, r)
	if len(r.lines) != 1 || r.lines[0]["error"] != "response_too_long" {
		t.Fatalf("lines %v, want one response_too_long", r.lines)
	}
	if d, _ := r.lines[0]["error_detail"].(string); !strings.Contains(d, "268435456") {
		t.Errorf("detail %q", d)
	}
	if chunks := r.lines[0]["chunks"].(float64); chunks < 7e6 {
		t.Errorf("%v chunks: the stream ended early", chunks)
	}
	if e.BytesSent() < 256<<20 {
		t.Errorf("the engine sent %d bytes", e.BytesSent())
	}
	// Arrival times for 7.9 million chunks would be 63 MB (126 MB while
	// growing); bounded, kvbench stays near its idle size.
	t.Logf("peak RSS of kvbench: %d KiB", r.maxRSSKiB)
	if r.maxRSSKiB > 100<<10 {
		t.Errorf("peak RSS %d KiB over an endless stream", r.maxRSSKiB)
	}
}
