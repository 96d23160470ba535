//go:build linux

package e2e

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testbin"
	"github.com/kvbench/kvbench/sim/simtest"
)

// smallDisk mounts a tmpfs of size bytes for the test; it skips only
// where mounting is impossible (not root, no tmpfs).
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENODEV) || errors.Is(err, syscall.EACCES) {
			t.Skipf("cannot mount a tmpfs here: %v", err)
		}
		t.Fatalf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// TestDiskFullMidRun: a disk that fills mid-run ends with exit code 4 and
// a message naming what is missing (with -q too); requests.jsonl is valid
// line by line; the summary, if it fits, counts what the record holds.
func TestDiskFullMidRun(t *testing.T) {
	t.Parallel()
	testbin.Path(t) // build first: the timeouts below are for kvbench alone
	disk := smallDisk(t, "300k")
	url := simtest.Start(t, nil)
	r := testbin.Run(t, 120*time.Second, []string{"KVBENCH_CONFIG_DIR=" + t.TempDir()},
		"run", "--no-interactive", "-q", "--engine-url", url, "--workload", "random-prefill",
		"--rp-num-requests", "600", "--rp-request-length", "16", "--tokens-per-gb-kvcache", "1000", "--output-dir", disk)
	if r.Code != 4 {
		t.Fatalf("exit %d, want 4\nstderr:\n%s", r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "incomplete") || !strings.Contains(r.Stderr, "requests.jsonl") || !strings.Contains(r.Stderr, "no space left") {
		t.Fatalf("with -q the message must still name what is missing; stderr:\n%s", r.Stderr)
	}
	entries, _ := os.ReadDir(disk)
	if len(entries) != 1 {
		t.Fatalf("want one run folder, got %d", len(entries))
	}
	folder := filepath.Join(disk, entries[0].Name())
	data, err := os.ReadFile(filepath.Join(folder, "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Fatalf("requests.jsonl ends in a partial line: %q", data[max(0, len(data)-40):])
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	lines := 0
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m["request_id"] == nil {
			t.Fatalf("line %d is not a whole record: %q", lines+1, sc.Text())
		}
		lines++
	}
	if lines == 0 || lines >= 600 {
		t.Fatalf("%d lines: the disk should have filled part-way", lines)
	}
	t.Logf("requests.jsonl: %d of 600 lines, all valid; stderr: %s", lines, strings.TrimSpace(r.Stderr))
	if b, err := os.ReadFile(filepath.Join(folder, "bench_summary.json")); err == nil {
		var s struct {
			Run struct {
				ExitCode int `json:"exit_code"`
			} `json:"run"`
			Results struct {
				TotalRequests int `json:"total_requests"`
			} `json:"results"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("summary: %v", err)
		}
		if s.Results.TotalRequests != lines || s.Run.ExitCode != 4 {
			t.Fatalf("summary claims %d requests and exit %d; the record holds %d lines", s.Results.TotalRequests, s.Run.ExitCode, lines)
		}
	} else if !strings.Contains(r.Stderr, "bench_summary.json was not written") {
		t.Fatalf("no summary, and the message does not say so:\n%s", r.Stderr)
	}
}

// TestDescriptorLimit: under `ulimit -n 1024`, 3000 streams are refused
// before anything is created (exit 2, naming the flag and the limit);
// streams that fit run to the end with the summary and CSV written.
func TestDescriptorLimit(t *testing.T) {
	t.Parallel()
	url := simtest.Start(t, nil)
	bin := testbin.Path(t)
	run := func(limit, streams string) (int, string, string) {
		out := filepath.Join(t.TempDir(), "runs")
		cmd := exec.Command("sh", "-c", `ulimit -n "$1" && shift && exec "$@"`, "sh", limit, bin,
			"run", "--no-interactive", "-q", "--engine-url", url, "--workload", "random-prefill",
			"--rp-num-requests", streams, "--rp-request-length", "16", "--tokens-per-gb-kvcache", "1000", "--output-dir", out)
		cmd.Env = append(os.Environ(), "KVBENCH_CONFIG_DIR="+t.TempDir())
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out, stderr.String()
	}
	code, out, stderr := run("1024", "3000")
	if code != 2 || !strings.Contains(stderr, "--rp-num-requests 3000") || !strings.Contains(stderr, "1024") || !strings.Contains(stderr, "ulimit -n") {
		t.Fatalf("3000 streams under ulimit -n 1024: exit %d, stderr %q; want exit 2 naming the flag and the limit", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a refused run created its output directory")
	}
	code, out, stderr = run("256", "150")
	if code != 0 {
		t.Fatalf("150 streams under ulimit -n 256: exit %d\n%s", code, stderr)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 {
		t.Fatalf("want one run folder, got %d", len(entries))
	}
	for _, f := range []string{"bench_summary.json", "bench_results.csv", "requests.jsonl"} {
		if _, err := os.Stat(filepath.Join(out, entries[0].Name(), f)); err != nil {
			t.Errorf("%s missing: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, entries[0].Name(), ".kvbench-spare")); err == nil {
		t.Error("the spare file was left in the run folder")
	}
}
