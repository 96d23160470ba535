//go:build unix && !aix && !solaris

package cli_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testbin"
	"github.com/kvbench/kvbench/internal/testutil"
)

// A run in progress (the built binary against the built-in simulator,
// long enough to outlast the checks, killed at the end) is running in
// `results` text and JSON and in `compare`; after kill -9 the OS has
// released its lock and the same folder is incomplete.
func TestResultsRunInProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	out := t.TempDir()
	cmd := exec.Command(testbin.Path(t), "run", "--engine-url", "builtin", "--workload", "long-doc-qa",
		"--kv-cache-volume", "80", "--ldqa-document-length", "2000", "--ldqa-max-output-length", "32",
		"--name", "inflight", "--output-dir", out, "--no-interactive")
	cmd.Env = append(os.Environ(), "KVBENCH_CONFIG_DIR="+t.TempDir())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	// The first phase line comes once the run folder and its lock exist.
	started := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		seen := false
		for sc.Scan() {
			if !seen && strings.HasPrefix(sc.Text(), "phase ") {
				seen = true
				started <- true
			}
		}
		if !seen {
			started <- false
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case ok := <-started:
		if !ok {
			t.Fatal("the run ended before its first phase")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("no phase line within 60 s")
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 {
		t.Fatalf("runs directory holds %v", entries)
	}
	dir := filepath.Join(out, entries[0].Name())
	id := entries[0].Name()

	table := testbin.Run(t, 30*time.Second, nil, "results", "--runs-dir", out, "--no-interactive")
	lines := strings.Split(strings.TrimSpace(table.Stdout), "\n")
	if table.Code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[1], id) || !strings.HasSuffix(lines[1], " running") {
		t.Errorf("results table of a run in progress: exit %d\n%s%s", table.Code, table.Stdout, table.Stderr)
	}
	res := testbin.Run(t, 30*time.Second, nil, "results", "--runs-dir", out, "--format", "json")
	var raws []json.RawMessage
	if err := json.Unmarshal([]byte(res.Stdout), &raws); err != nil || len(raws) != 1 {
		t.Fatalf("results JSON: %v\n%s", err, res.Stdout)
	}
	if keys := testutil.ObjectKeys(t, raws[0], ""); !reflect.DeepEqual(keys, append(append([]string{}, resJSONKeys...), "status")) {
		t.Errorf("keys of a run in progress: %v", keys)
	}
	var o map[string]any
	json.Unmarshal(raws[0], &o)
	if o["status"] != "running" || o["complete"] != false || o["interrupted"] != false || o["id"] != id || o["name"] != "inflight" {
		t.Errorf("run in progress in JSON: %v", o)
	}
	cmp := testbin.Run(t, 30*time.Second, nil, "compare", dir, id, "--runs-dir", out, "--no-interactive")
	if cmp.Code != 0 || !strings.Contains(cmp.Stdout, "(running)") || strings.Contains(cmp.Stdout, "incomplete") {
		t.Errorf("compare of a run in progress: exit %d\n%s%s", cmp.Code, cmp.Stdout, cmp.Stderr)
	}
	if cmd.ProcessState != nil {
		t.Fatal("the run ended during the checks: lengthen it")
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := resExit(cmd.Wait()); code != -int(syscall.SIGKILL) {
		t.Fatalf("exit %d, want killed by SIGKILL", code)
	}
	if _, err := os.Stat(filepath.Join(dir, ".lock")); err != nil {
		t.Fatalf("the killed run's lock file: %v", err)
	}
	res = testbin.Run(t, 30*time.Second, nil, "results", "--runs-dir", out, "--format", "json")
	list := resDecode(t, res.Stdout) // exactly the keys of spec/cli.md: no status
	if len(list) != 1 || list[0]["complete"] != false || list[0]["interrupted"] != true || list[0]["id"] != id {
		t.Errorf("killed run in JSON: %v", list)
	}
	table = testbin.Run(t, 30*time.Second, nil, "results", "--runs-dir", out, "--no-interactive")
	if lines := strings.Split(strings.TrimSpace(table.Stdout), "\n"); len(lines) != 2 || !strings.Contains(lines[1], " incomplete") ||
		strings.Contains(lines[1], "running") {
		t.Errorf("results table after kill -9:\n%s", table.Stdout)
	}
}
