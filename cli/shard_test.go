package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testbin"
)

// --shard's bounds and its run key are usage errors (exit 2) that name
// the flags, before any engine is asked anything.
func TestShardFlagsExit2(t *testing.T) {
	base := []string{"run", "--no-interactive", "--engine-url", "http://127.0.0.1:1", "--workload", "random-prefill", "--tokens-per-gb-kvcache", "1000"}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--shard", "0/2"}, []string{"--run-key", "--start-at"}},
		{[]string{"--shard", "0/1000000000", "--run-key", "k"}, []string{"--shard", "at most 4096"}},
		{[]string{"--shard", "0/4097", "--start-at", "2030-01-01T00:00:00Z"}, []string{"--shard", "at most 4096"}},
		{[]string{"--shard", "1/2", "--run-key", "a b"}, []string{"--run-key"}},
	} {
		r := testbin.Run(t, 30*time.Second, []string{"KVBENCH_CONFIG_DIR=" + t.TempDir()}, append(append([]string{}, base...), c.args...)...)
		if r.Code != 2 || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, want 2 and one line:\n%s", c.args, r.Code, r.Stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(r.Stderr, w) {
				t.Errorf("%v: %q does not name %s", c.args, r.Stderr, w)
			}
		}
	}
}

// A shard folder claiming a billion shards is refused at once (its merge
// used to run out of memory listing the missing ones).
func TestMergeRefusesAHugeShardCount(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shard-0")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "config.json"),
		[]byte(`{"workload": "random-prefill", "shard": {"index": 0, "count": 1000000000, "start_at": null, "run_key": "k"}}`+"\n"), 0o644)
	r := testbin.Run(t, 30*time.Second, nil, "merge", "--allow-partial", "--output-dir", t.TempDir(), dir)
	if r.Code != 2 || !strings.Contains(r.Stderr, dir) || !strings.Contains(r.Stderr, "4096") {
		t.Fatalf("exit %d, want 2 naming the folder and the bound:\n%s", r.Code, r.Stderr)
	}
}
