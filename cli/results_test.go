package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/cli"
	"github.com/kvbench/kvbench/internal/testbin"
	"github.com/kvbench/kvbench/internal/testutil"
)

var resT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)

// resFixture writes a complete, an interrupted and a crashed run (with a
// torn last line).
func resFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	runstest.Write(t, dir, runstest.Spec{Name: "done", Started: resT0, Requests: 10, ReusedEvery: 2, Summary: true})
	runstest.Write(t, dir, runstest.Spec{Name: "stopped", Started: resT0.Add(time.Hour), Requests: 5, Summary: true,
		Interrupted: true, ExitCode: 130})
	runstest.Write(t, dir, runstest.Spec{Name: "killed", Started: resT0.Add(2 * time.Hour), Requests: 7, FailEvery: 3, Corrupt: true})
	return dir
}

// resJSONKeys are the keys of spec/cli.md, in order.
var resJSONKeys = []string{"id", "name", "workload", "model", "engine_url", "started_at", "total_requests",
	"failed_requests", "mean_ttft_ms", "p99_ttft_ms", "output_throughput", "hit_ratio", "interrupted", "complete"}

// resDecode reads the JSON array keeping each object's key order.
func resDecode(t *testing.T, out string) []map[string]any {
	t.Helper()
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("not a JSON array: %v\n%s", err, out)
	}
	// Key order, from the raw objects.
	var raws []json.RawMessage
	json.Unmarshal([]byte(out), &raws)
	for i, raw := range raws {
		if keys := testutil.ObjectKeys(t, raw, ""); !reflect.DeepEqual(keys, resJSONKeys) {
			t.Errorf("object %d keys:\n%v\nwant\n%v", i, keys, resJSONKeys)
		}
	}
	return list
}

func resByName(list []map[string]any) map[string]map[string]any {
	m := map[string]map[string]any{}
	for _, o := range list {
		name, _ := o["name"].(string)
		m[name] = o
	}
	return m
}

// Without a terminal and without --no-interactive, results behaves as
// headless: no TTY is ever required.
func TestResultsJSONKeys(t *testing.T) {
	dir := resFixture(t)
	res := testbin.Run(t, 30*time.Second, nil, "results", "--runs-dir", dir, "--format", "json")
	if res.Code != 0 || res.Stderr != "" {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	list := resDecode(t, res.Stdout)
	if len(list) != 3 {
		t.Fatalf("%d runs, want 3:\n%s", len(list), res.Stdout)
	}
	m := resByName(list)
	if o := m["done"]; o["complete"] != true || o["interrupted"] != false || o["total_requests"] != 10.0 ||
		o["workload"] != "long-doc-qa" || o["engine_url"] != "http://127.0.0.1:8000/v1" || o["hit_ratio"] != 0.4 {
		t.Errorf("complete run: %v", o)
	}
	if o := m["stopped"]; o["complete"] != true || o["interrupted"] != true {
		t.Errorf("interrupted run: %v", o)
	}
	if o := m["killed"]; o["complete"] != false || o["interrupted"] != true || o["total_requests"] != 7.0 ||
		o["failed_requests"] != 2.0 || o["engine_url"] != nil || o["started_at"] == nil {
		t.Errorf("crashed run: %v", o)
	}
	if strings.Contains(res.Stdout, "\x1b") {
		t.Error("escape sequences in JSON output")
	}

	// An empty runs directory is an empty array, not null.
	res = testbin.Run(t, 30*time.Second, nil, "results", "--runs-dir", filepath.Join(t.TempDir(), "none"), "--format", "json")
	if res.Code != 0 || strings.TrimSpace(res.Stdout) != "[]" {
		t.Errorf("empty: exit %d %q", res.Code, res.Stdout)
	}
}

func TestResultsTable(t *testing.T) {
	dir := resFixture(t)
	res := testbin.Run(t, 30*time.Second, nil, "results", "--runs-dir", dir, "--no-interactive")
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "ID") {
		t.Fatalf("table:\n%s", res.Stdout)
	}
	// Newest first, with their status.
	for i, want := range []string{"killed", "stopped", "done"} {
		if !strings.Contains(lines[i+1], want) {
			t.Errorf("row %d: %q, want %s", i+1, lines[i+1], want)
		}
	}
	if !strings.Contains(lines[1], "incomplete (1 unreadable line(s))") || !strings.Contains(lines[2], "interrupted") ||
		!strings.HasSuffix(lines[3], "ok") {
		t.Errorf("statuses:\n%s", res.Stdout)
	}
	// Named runs only, by id.
	id := strings.Fields(lines[3])[0]
	res = testbin.Run(t, 30*time.Second, nil, "results", id, "--runs-dir", dir, "--format", "json")
	if list := resDecode(t, res.Stdout); len(list) != 1 || list[0]["id"] != id {
		t.Errorf("results %s: %s", id, res.Stdout)
	}
}

func TestResultsUsageErrors(t *testing.T) {
	dir := resFixture(t)
	for _, args := range [][]string{
		{"results", "nope", "--runs-dir", dir},
		{"results", "--format", "yaml", "--runs-dir", dir},
	} {
		res := testbin.Run(t, 30*time.Second, nil, args...)
		if res.Code != 2 || strings.Count(strings.TrimSpace(res.Stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, res.Code, res.Stderr)
		}
	}
}

// resRun starts `kvbench run` against the built-in simulator, long enough
// to be stopped midway, writing to out.
func resRun(t *testing.T, out string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(testbin.Path(t), "run", "--engine-url", "builtin", "--workload", "long-doc-qa",
		"--kv-cache-volume", "8", "--ldqa-document-length", "2000", "--ldqa-max-output-length", "32",
		"--name", "durable", "--output-dir", out, "--no-interactive")
	cmd.Stdout, cmd.Stderr = new(bytes.Buffer), new(bytes.Buffer)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd
}

// resLines reads the run's requests.jsonl: every whole line and the
// phases of the good ones.
func resLines(t *testing.T, dir string) (lines int, measured int) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "requests.jsonl"))
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r struct {
			Phase string `json:"phase"`
		}
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		lines++
		if r.Phase == "measured" {
			measured++
		}
	}
	return lines, measured
}

// resWaitMeasured waits until the run in out has recorded n measured
// requests and returns its folder.
func resWaitMeasured(t *testing.T, out string, n int) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir(out)
		if len(entries) == 1 {
			dir := filepath.Join(out, entries[0].Name())
			if _, m := resLines(t, dir); m >= n {
				return dir
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the run never recorded %d measured requests", n)
	return ""
}

func resExit(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// SIGINT during a run: exit 130, the summary marked interrupted and
// covering every request recorded, and the explorer lists it so.
func TestDurabilitySIGINT(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	out := t.TempDir()
	cmd := resRun(t, out)
	dir := resWaitMeasured(t, out, 3)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code := resExit(cmd.Wait())
	if code != 130 {
		t.Fatalf("exit %d, want 130; stderr:\n%s", code, cmd.Stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "bench_summary.json")); err != nil {
		t.Fatalf("no summary after SIGINT: %v", err)
	}
	_, measured := resLines(t, dir)
	res := testbin.Run(t, 30*time.Second, nil, "results", "--runs-dir", out, "--format", "json")
	list := resDecode(t, res.Stdout)
	if len(list) != 1 {
		t.Fatalf("listed %s", res.Stdout)
	}
	o := list[0]
	if o["interrupted"] != true || o["complete"] != true || o["name"] != "durable" || o["id"] != filepath.Base(dir) {
		t.Errorf("interrupted run listed as %v", o)
	}
	if o["total_requests"] != float64(measured) {
		t.Errorf("summary covers %v requests, requests.jsonl has %d measured", o["total_requests"], measured)
	}
	var sum struct {
		Run struct {
			Interrupted bool `json:"interrupted"`
			ExitCode    int  `json:"exit_code"`
		} `json:"run"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "bench_summary.json"))
	if json.Unmarshal(b, &sum) != nil || !sum.Run.Interrupted || sum.Run.ExitCode != 130 {
		t.Errorf("summary run block: %s", b)
	}
}

// kill -9 during a run: no summary, and the folder is listed as
// incomplete with every request that had finished.
func TestDurabilityKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	out := t.TempDir()
	cmd := resRun(t, out)
	dir := resWaitMeasured(t, out, 3)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := resExit(cmd.Wait()); code != -int(syscall.SIGKILL) {
		t.Fatalf("exit %d, want killed by SIGKILL", code)
	}
	if _, err := os.Stat(filepath.Join(dir, "bench_summary.json")); !os.IsNotExist(err) {
		t.Fatalf("a summary exists after kill -9 (%v): lengthen the run", err)
	}
	lines, measured := resLines(t, dir)
	if measured < 3 {
		t.Fatalf("requests.jsonl lost requests: %d lines, %d measured", lines, measured)
	}

	res := testbin.Run(t, 30*time.Second, nil, "results", "--runs-dir", out, "--format", "json")
	if res.Code != 0 {
		t.Fatalf("results: exit %d\n%s", res.Code, res.Stderr)
	}
	list := resDecode(t, res.Stdout)
	if len(list) != 1 {
		t.Fatalf("listed %s", res.Stdout)
	}
	o := list[0]
	if o["complete"] != false || o["interrupted"] != true || o["id"] != filepath.Base(dir) ||
		o["workload"] != "long-doc-qa" || o["name"] != "durable" {
		t.Errorf("killed run listed as %v", o)
	}
	if o["total_requests"] != float64(measured) {
		t.Errorf("listed %v requests, requests.jsonl has %d measured", o["total_requests"], measured)
	}
	if mean, _ := o["mean_ttft_ms"].(float64); mean <= 0 {
		t.Errorf("mean TTFT %v", o["mean_ttft_ms"])
	}

	table := testbin.Run(t, 30*time.Second, nil, "results", "--runs-dir", out, "--no-interactive")
	if !strings.Contains(table.Stdout, "incomplete") {
		t.Errorf("table:\n%s", table.Stdout)
	}
	// And it compares with itself without a summary.
	cmp := testbin.Run(t, 30*time.Second, nil, "compare", dir, filepath.Base(dir), "--runs-dir", out, "--no-interactive")
	if cmp.Code != 0 || !strings.Contains(cmp.Stdout, "(incomplete)") {
		t.Errorf("compare: exit %d\n%s%s", cmp.Code, cmp.Stdout, cmp.Stderr)
	}
}

// TestResultsTableMarksUndeliveredLoad: a run whose load block says it
// did not deliver is marked in the status column.
func TestResultsTableMarksUndeliveredLoad(t *testing.T) {
	no, yes := false, true
	var b strings.Builder
	err := cli.WriteRunsTable(&b, []runs.Run{
		{ID: "slipped", Complete: true, Delivered: &no},
		{ID: "fine", Complete: true, Delivered: &yes},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		switch {
		case strings.HasPrefix(l, "slipped") && !strings.Contains(l, "load not delivered"):
			t.Errorf("undelivered run not marked: %q", l)
		case strings.HasPrefix(l, "fine") && strings.Contains(l, "not delivered"):
			t.Errorf("delivered run marked: %q", l)
		}
	}
}
