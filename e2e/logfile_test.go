package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testbin"
)

// --log-file: a headless run writes its lifecycle, phases and requests
// as JSON lines, and the API key it sent never reaches the file.
func TestLogFileHeadless(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "debug.jsonl")
	const key = "sk-log-file-secret-4711"
	dir := t.TempDir()
	env := []string{"KVBENCH_TEST_KEY=" + key, "KVBENCH_CONFIG_DIR=" + filepath.Join(dir, "config"), "XDG_STATE_HOME=" + dir}
	res := testbin.Run(t, 90*time.Second, env, "run", "--no-interactive", "--output-dir", filepath.Join(dir, "runs"),
		"--engine-url", "builtin", "--builtin-speed", "100", "--workload", "random-prefill",
		"--rp-num-requests", "4", "--rp-request-length", "200",
		"--api-key-env", "KVBENCH_TEST_KEY", "--log-file", log)
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), key) {
		t.Fatal("the API key reached the log file")
	}
	msgs := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		msgs[m["msg"].(string)]++
	}
	for _, want := range []string{"start", "prepared", "run started", "phase", "request", "run finished"} {
		if msgs[want] == 0 {
			t.Errorf("no %q line in the log; lines: %v", want, msgs)
		}
	}
	if msgs["request"] != 4 {
		t.Errorf("%d request lines, want 4", msgs["request"])
	}
}

// A log file that cannot be opened is a usage error naming the flag.
func TestLogFileUnwritable(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "missing", "debug.jsonl")
	res := testbin.Run(t, 60*time.Second, nil, "run", "--engine-url", "builtin", "--workload", "random-prefill",
		"--no-interactive", "--log-file", bad)
	lines := strings.Split(strings.TrimSpace(res.Stderr), "\n")
	if res.Code != 2 || len(lines) != 1 || !strings.Contains(lines[0], "--log-file") {
		t.Fatalf("exit %d, stderr %q; want exit 2 and one line naming --log-file", res.Code, res.Stderr)
	}
}
