package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testbin"
)

// TestAbsurdValuesRefused: each value is refused with exit 2, one line
// naming the flag (and its range, or the memory the plan needs), before
// any run folder is created.
func TestAbsurdValuesRefused(t *testing.T) {
	t.Parallel()
	testbin.Path(t) // build first: the timeouts below are for kvbench alone
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--workload", "random-prefill", "--rp-num-requests", "100000000000"}, "--rp-num-requests must be in [1, 1000000]"},
		{[]string{"--workload", "random-prefill", "--rp-request-length", "2000000000"}, "--rp-request-length must be in (0, 10000000]"},
		{[]string{"--workload", "long-doc-permutator", "--ldp-num-permutations", "1000000000"}, "--ldp-num-permutations must be in [1, 1000000]"},
		{[]string{"--workload", "long-doc-qa", "--tokens-per-gb-kvcache", "9223372036854775807"}, "--tokens-per-gb-kvcache must be in [0, 1073741824]"},
		{[]string{"--workload", "multi-round-chat", "--mrc-duration", "1e12"}, "--mrc-duration must be in (0, 10000000]"},
		{[]string{"--workload", "long-doc-qa", "--kv-cache-volume", "1e300"}, "--kv-cache-volume must be in (0, 1000000]"},
		{[]string{"--workload", "random-prefill", "--rp-num-requests", "1000000", "--rp-request-length", "10000000"}, "lower --rp-num-requests or --rp-request-length"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		out := filepath.Join(dir, "runs")
		args := append([]string{"run", "--no-interactive", "--engine-url", "http://127.0.0.1:1", "--model", "m",
			"--tokens-per-gb-kvcache", "6000", "--output-dir", out}, c.args...)
		r := testbin.Run(t, 60*time.Second, []string{"KVBENCH_CONFIG_DIR=" + dir}, args...)
		msg := strings.TrimSpace(r.Stderr)
		if r.Code != 2 || !strings.Contains(msg, c.want) || strings.Count(msg, "\n") > 0 || strings.Contains(msg, "goroutine") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, r.Code, msg, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: the output directory was created", c.args)
		}
	}
}
