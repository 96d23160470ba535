//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testbin"
)

// What a trace may not be or ask, through the binary: a FIFO (it hung),
// /dev/zero (it spun forever), an absurd speedup (its lag was blamed on
// the client), a line asking 2^63-1 tokens (a panic). Each exits 2 at
// once with one line naming the flag or the line, and creates no run
// folder.
func TestTraceReplayRefusesWhatATraceMayNotAsk(t *testing.T) {
	testbin.Path(t) // build first: the timeouts below are for kvbench alone
	dir := t.TempDir()
	fifo := filepath.Join(dir, "trace.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.jsonl")
	os.WriteFile(huge, []byte(`{"timestamp": 0, "input_length": 9223372036854775807, "output_length": 1, "hash_ids": [1]}`+"\n"), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--tr-file", fifo}, "--tr-file " + fifo + ": not a regular file (a FIFO)"},
		{[]string{"--tr-file", "/dev/zero"}, "--tr-file /dev/zero: not a regular file (a device)"},
		{[]string{"--tr-file", dir}, "not a regular file (a directory)"},
		{[]string{"--tr-file", mooncakeTrace, "--tr-speedup", "1e-300"}, "--tr-speedup must be in [0.001, 1000000] (got 1e-300)"},
		{[]string{"--tr-file", huge}, "line 1: input_length 9223372036854775807 is above the limit of 10000000 tokens in one prompt"},
		{[]string{"--tr-file", huge, "--tr-skip-invalid"}, "no request to replay (1 lines skipped as invalid)"},
	}
	for _, c := range cases {
		out := filepath.Join(t.TempDir(), "runs")
		args := append([]string{"run", "--no-interactive", "--engine-url", "builtin", "--workload", "trace-replay", "--output-dir", out}, c.args...)
		r := testbin.Run(t, time.Minute, []string{"KVBENCH_CONFIG_DIR=" + dir}, args...)
		msg := strings.TrimSpace(r.Stderr)
		if r.Code != 2 || !strings.Contains(msg, c.want) || strings.Count(msg, "\n") > 0 || strings.Contains(msg, "goroutine") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, r.Code, msg, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: the output directory was created", c.args)
		}
	}
}
