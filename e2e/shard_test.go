package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testbin"
	"github.com/kvbench/kvbench/sim/simtest"
)

// readRecord reads a run folder's summary and request lines.
func readRecord(t *testing.T, dir string) (map[string]any, []map[string]any) {
	t.Helper()
	var sum map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, m)
	}
	return sum, lines
}

// onlyFolder is the one run folder in dir.
func onlyFolder(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("want one run folder in %s: %v, %d entries", dir, err, len(entries))
	}
	return filepath.Join(dir, entries[0].Name())
}

func requestIDs(lines []map[string]any) []string {
	var ids []string
	for _, l := range lines {
		ids = append(ids, l["request_id"].(string))
	}
	slices.Sort(ids)
	return ids
}

// linear is the LMCache percentile, computed here independently of the
// stats package.
func linear(xs []float64, p float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	r := float64(len(s)-1) * p / 100
	lo := int(math.Floor(r))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (s[hi]-s[lo])*(r-float64(lo))
}

// TestShardedRunMergesIntoTheWholeRun: three shard processes with one
// --start-at against one simulator, merged, hold exactly the request set
// of the unsharded run, and the merged summary's figures are those of its
// merged lines.
func TestShardedRunMergesIntoTheWholeRun(t *testing.T) {
	t.Parallel()
	url := simtest.Start(t, nil)
	bin := testbin.Path(t)
	root := t.TempDir()
	env := append(os.Environ(), "KVBENCH_CONFIG_DIR="+filepath.Join(root, "config"), "XDG_STATE_HOME="+root)
	common := []string{"run", "--no-interactive", "--engine-url", url, "--workload", "long-doc-qa",
		"--tokens-per-gb-kvcache", "10000", "--kv-cache-volume", "1", "--ldqa-document-length", "1000",
		"--ldqa-max-output-length", "8", "--slo", "e2e=60s"}

	startAt := time.Now().Add(4 * time.Second).UTC()
	var wg sync.WaitGroup
	results := make([]string, 3)
	codes := make([]int, 3)
	for i := range 3 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			args := append(slices.Clone(common), "--output-dir", filepath.Join(root, "shards"),
				"--shard", []string{"0/3", "1/3", "2/3"}[i], "--start-at", startAt.Format(time.RFC3339Nano))
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Env = env
			var se bytes.Buffer
			cmd.Stderr = &se
			err := cmd.Run()
			results[i] = se.String()
			if ee, ok := err.(*exec.ExitError); ok {
				codes[i] = ee.ExitCode()
			} else if err != nil {
				codes[i] = -1
				results[i] += err.Error()
			}
		})
	}
	wg.Wait()
	for i, c := range codes {
		if c != 0 {
			t.Fatalf("shard %d/3 exited %d:\n%s", i, c, results[i])
		}
	}
	whole := testbin.Run(t, 90*time.Second, nil, append(slices.Clone(common), "--output-dir", filepath.Join(root, "whole"))...)
	if whole.Code != 0 {
		t.Fatalf("whole run exited %d:\n%s", whole.Code, whole.Stderr)
	}
	_, wholeLines := readRecord(t, onlyFolder(t, filepath.Join(root, "whole")))

	entries, _ := os.ReadDir(filepath.Join(root, "shards"))
	var shardDirs []string
	at := float64(startAt.UnixNano()) / 1e9
	for _, e := range entries {
		dir := filepath.Join(root, "shards", e.Name())
		shardDirs = append(shardDirs, dir)
		sum, lines := readRecord(t, dir)
		if _, ok := sum["start_skew_ms"].(float64); !ok {
			t.Fatalf("%s: no start_skew_ms in the shard's summary", e.Name())
		}
		for _, l := range lines {
			if l["phase"] == "measured" && l["submit_time"].(float64) < at {
				t.Fatalf("%s: %s submitted %.3f s before --start-at", e.Name(), l["request_id"], at-l["submit_time"].(float64))
			}
		}
	}
	if len(shardDirs) != 3 {
		t.Fatalf("want 3 shard folders, got %v", shardDirs)
	}
	// Folder names follow the shards' start order, not their index: put
	// shard I at shardDirs[I] (the partial merge below leaves out shard 1).
	slices.SortFunc(shardDirs, func(a, b string) int { return shardIndex(t, a) - shardIndex(t, b) })

	out := filepath.Join(root, "merged")
	m := testbin.Run(t, 60*time.Second, nil, append([]string{"merge", "--output-dir", out, "--format", "json"}, shardDirs...)...)
	if m.Code != 0 {
		t.Fatalf("merge exited %d:\n%s", m.Code, m.Stderr)
	}
	sum, merged := readRecord(t, onlyFolder(t, out))
	if got, want := requestIDs(merged), requestIDs(wholeLines); !slices.Equal(got, want) {
		t.Fatalf("merged request ids %v\nwhole run's %v", got, want)
	}
	var ttft, lat []float64
	good := 0
	prev := 0.0
	for _, l := range merged {
		s := l["submit_time"].(float64)
		if s < prev {
			t.Fatalf("merged lines are not ordered by submit time at %s", l["request_id"])
		}
		prev = s
		if l["phase"] == "measured" && l["slo_met"] == true {
			good++
		}
		if l["phase"] == "measured" && l["successful"] == true {
			ttft = append(ttft, l["ttft_s"].(float64)*1000)
			lat = append(lat, l["request_latency_s"].(float64)*1000)
		}
	}
	res := sum["results"].(map[string]any)
	if n := res["total_requests"].(float64); int(n) != len(ttft) || n != 20 {
		t.Fatalf("total_requests %v, successful measured lines %d; want 20 (10 documents, 2 questions each)", n, len(ttft))
	}
	for key, want := range map[string]float64{
		"p50_ttft_ms": linear(ttft, 50), "p99_ttft_ms": linear(ttft, 99), "p90_request_latency_ms": linear(lat, 90),
	} {
		if got := res[key].(float64); math.Abs(got-want) > 1e-9*math.Max(1, want) {
			t.Errorf("%s = %v, recomputed from the merged lines %v", key, got, want)
		}
	}
	gp, _ := sum["goodput"].(map[string]any)
	if gp == nil || gp["good_requests"] != float64(good) || good == 0 {
		t.Fatalf("goodput %v, want good_requests = %d (the merged lines meeting the SLO)", gp, good)
	}
	if ld, _ := sum["load"].(map[string]any); ld == nil || ld["achieved_rate"] == nil {
		t.Fatalf("the merged run has no load block: %v", sum["load"])
	}
	shards, _ := sum["shards"].([]any)
	from, _ := sum["run"].(map[string]any)["merged_from"].([]any)
	if len(shards) != 3 || len(from) != 3 || sum["partial"] != nil {
		t.Fatalf("shards %v, merged_from %v, partial %v", shards, from, sum["partial"])
	}

	// A missing shard is named; --allow-partial merges and marks it.
	miss := testbin.Run(t, 60*time.Second, nil, "merge", "--output-dir", filepath.Join(root, "partial"), shardDirs[0], shardDirs[2])
	if miss.Code != 2 || !strings.Contains(miss.Stderr, "missing shard(s) 1 of 3") {
		t.Fatalf("missing shard: exit %d\n%s", miss.Code, miss.Stderr)
	}
	part := testbin.Run(t, 60*time.Second, nil, "merge", "--output-dir", filepath.Join(root, "partial"), "--allow-partial", "--format", "json", shardDirs[0], shardDirs[2])
	if part.Code != 0 {
		t.Fatalf("--allow-partial: exit %d\n%s", part.Code, part.Stderr)
	}
	psum, _ := readRecord(t, onlyFolder(t, filepath.Join(root, "partial")))
	if psum["partial"] != true {
		t.Fatalf("a partial merge must be marked partial: %v", psum["partial"])
	}

	// A workload that cannot be split says why.
	ce := testbin.Run(t, 30*time.Second, nil, "run", "--no-interactive", "--engine-url", url, "--workload", "concurrent-exactness", "--shard", "0/2")
	if ce.Code != 2 || !strings.Contains(ce.Stderr, "concurrent-exactness cannot be split") {
		t.Fatalf("--shard on concurrent-exactness: exit %d\n%s", ce.Code, ce.Stderr)
	}
}

// shardIndex is the shard index a run folder's summary records.
func shardIndex(t *testing.T, dir string) int {
	t.Helper()
	sum, _ := readRecord(t, dir)
	sh, ok := sum["shard"].(map[string]any)
	if !ok {
		t.Fatalf("%s: no shard block in the summary", dir)
	}
	return int(sh["index"].(float64))
}
