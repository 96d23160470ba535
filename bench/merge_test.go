package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/config"
)

// runConfig is a small long-doc-qa run (5 documents, 2 questions each)
// against the test engine; shard "" is the whole run, and the shards of
// a run share one run key.
func runConfig(t *testing.T, out, shard string) string {
	t.Helper()
	return runConfigKey(t, out, shard, "merge-test")
}

// runConfigKey is runConfig with the shards' run key.
func runConfigKey(t *testing.T, out, shard, key string) string {
	t.Helper()
	cfg := config.Default()
	cfg.Set("workload", config.LongDocQA)
	cfg.Set("model", "m")
	cfg.Set("tokens_per_gb_kvcache", 1000)
	cfg.Set("kv_cache_volume", 0.5)
	cfg.Set("ldqa_document_length", 100)
	cfg.Set("output_dir", out)
	if shard != "" {
		cfg.Set("shard", shard)
		cfg.Set("run_key", key)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	r, err := New(context.Background(), &Prepared{Config: cfg, EngineURL: testEngine(t), TokensPerGB: 1000})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for range r.Events() {
		}
	}()
	if code := r.Run(context.Background()).ExitCode; code != 0 {
		t.Fatalf("shard %q: exit %d", shard, code)
	}
	return r.Dir()
}

// line is what the test reads of a requests.jsonl line.
type line struct {
	ID         string   `json:"request_id"`
	Phase      string   `json:"phase"`
	Successful bool     `json:"successful"`
	Submit     float64  `json:"submit_time"`
	TTFT       *float64 `json:"ttft_s"`
	Latency    float64  `json:"request_latency_s"`
	Shard      *int     `json:"shard"`
}

func readLines(t *testing.T, dir string) []line {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, record.RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []line
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		out = append(out, l)
	}
	return out
}

func ids(ls []line) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.ID)
	}
	slices.Sort(out)
	return out
}

// pct is the LMCache percentile (linear at rank (n-1)p/100), written
// again here so the merged summary is checked against an independent
// computation from the merged lines.
func pct(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	r := float64(len(s)-1) * p / 100
	lo := int(math.Floor(r))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (s[hi]-s[lo])*(r-float64(lo))
}

func shardSet(t *testing.T) (whole string, shards []string) {
	t.Helper()
	root := t.TempDir()
	whole = runConfig(t, filepath.Join(root, "whole"), "")
	for _, s := range []string{"0/3", "1/3", "2/3"} {
		shards = append(shards, runConfig(t, filepath.Join(root, "shards"), s))
	}
	return whole, shards
}

func TestMergeIsTheWholeRun(t *testing.T) {
	whole, shards := shardSet(t)
	// Given in any order.
	m, err := Merge(MergeOptions{Dirs: []string{shards[2], shards[0], shards[1]}, OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	merged := readLines(t, m.Dir)
	if got, want := ids(merged), ids(readLines(t, whole)); !slices.Equal(got, want) {
		t.Fatalf("merged ids %v\nwhole run ids %v", got, want)
	}
	var ttft, lat []float64
	for i, l := range merged {
		if i > 0 && l.Submit < merged[i-1].Submit {
			t.Fatalf("line %d (%s) submitted before line %d", i, l.ID, i-1)
		}
		if l.Shard == nil {
			t.Fatalf("%s lost its shard key", l.ID)
		}
		if l.Phase == "measured" && l.Successful {
			ttft = append(ttft, *l.TTFT*1000)
			lat = append(lat, l.Latency*1000)
		}
	}
	s, err := record.ReadSummary(m.Dir)
	if err != nil {
		t.Fatal(err)
	}
	res := s.Results
	if res.TotalRequests != 10 || len(ttft) != 10 {
		t.Fatalf("total %d, successful measured lines %d; want 10", res.TotalRequests, len(ttft))
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"p50 TTFT", *res.P50TTFTms, pct(ttft, 50)},
		{"p99 TTFT", *res.P99TTFTms, pct(ttft, 99)},
		{"p90 latency", *res.P90RequestLatencyMs, pct(lat, 90)},
	} {
		if math.Abs(c.got-c.want) > 1e-9*math.Max(1, c.want) {
			t.Errorf("%s = %v, recomputed from the merged lines %v", c.name, c.got, c.want)
		}
	}
	// The load block is the merged run's: its concurrency is that of the
	// three shards together (each at most 3 in flight, one after another
	// here), not one shard's.
	if s.Load == nil || s.Load.ObservedMaxConcurrency < 1 || s.Load.ObservedMaxConcurrency > 3 || s.Load.AchievedRate == nil {
		t.Fatalf("merged load block %+v", s.Load)
	}
	if len(s.Shards) != 3 || s.Partial || s.Run.MergedFrom == nil || len(*s.Run.MergedFrom) != 3 {
		t.Fatalf("shards block %+v, partial %v, merged_from %v", s.Shards, s.Partial, s.Run.MergedFrom)
	}
	for i, sh := range s.Shards {
		if sh.Index != i || sh.RunID != filepath.Base(shards[i]) || (*s.Run.MergedFrom)[i] != sh.RunID {
			t.Fatalf("shard %d: %+v, merged_from %v", i, sh, *s.Run.MergedFrom)
		}
	}
	if got := s.Shards[0].Requests + s.Shards[1].Requests + s.Shards[2].Requests; got != 10 {
		t.Fatalf("shards hold %d measured requests, want 10", got)
	}
	// The workload block is rebuilt from the lines: 5 warmups, 10
	// questions of which 5 first questions.
	wb, _ := record.Field(s.Workload, "warmup")
	if n, _ := record.Field(wb, "requests"); n == nil || n.(json.Number).String() != "5" {
		t.Fatalf("workload warmup block %s", wb)
	}
	fq, _ := record.Field(s.Workload, "first_question")
	if n, _ := record.Field(fq, "requests"); n == nil || n.(json.Number).String() != "5" {
		t.Fatalf("workload first_question block %s", fq)
	}
	if _, ok := record.Field(s.Config, "shard"); ok {
		t.Fatal("the merged summary's config still has a shard block")
	}
	cfg, err := os.ReadFile(filepath.Join(m.Dir, record.ConfigFile))
	if err != nil || strings.Contains(string(cfg), "shard") {
		t.Fatalf("merged config.json must be the run's, without its shard: %v\n%s", err, cfg)
	}
	csv, err := os.ReadFile(filepath.Join(m.Dir, record.CSVFile))
	if err != nil || strings.Count(string(csv), "\n") != 11 {
		t.Fatalf("bench_results.csv: want a header and 10 rows: %v\n%s", err, csv)
	}
}

func TestMergeRefusesAnIncompleteSet(t *testing.T) {
	_, shards := shardSet(t)
	out := t.TempDir()
	_, err := Merge(MergeOptions{Dirs: []string{shards[0], shards[2]}, OutputDir: out})
	if !IsUsage(err) || !strings.Contains(err.Error(), "missing shard(s) 1 of 3") {
		t.Fatalf("a missing shard: %v", err)
	}
	_, err = Merge(MergeOptions{Dirs: []string{shards[0], shards[1], shards[2], shards[1]}, OutputDir: out})
	if !IsUsage(err) || !strings.Contains(err.Error(), "shard 1 of 3 is given 2 times") {
		t.Fatalf("a repeated shard: %v", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Fatalf("a refused merge must write nothing, found %d entries", len(entries))
	}

	m, err := Merge(MergeOptions{Dirs: []string{shards[0], shards[2]}, OutputDir: out, AllowPartial: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := record.ReadSummary(m.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Partial || len(s.Shards) != 2 || s.Results.TotalRequests != s.Shards[0].Requests+s.Shards[1].Requests {
		t.Fatalf("partial merge: partial %v, shards %+v, total %d", s.Partial, s.Shards, s.Results.TotalRequests)
	}

	// A shard of another run: the first differing key is named.
	other := filepath.Join(t.TempDir(), "other")
	if err := os.CopyFS(other, os.DirFS(shards[1])); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(other, record.ConfigFile)
	b, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(b), `"ldqa_max_output_length": 128`, `"ldqa_max_output_length": 64`, 1)), 0o644)
	_, err = Merge(MergeOptions{Dirs: []string{shards[0], other, shards[2]}, OutputDir: out})
	if !IsUsage(err) || !strings.Contains(err.Error(), "config key ldqa_max_output_length differs") {
		t.Fatalf("a shard of another run: %v", err)
	}
	os.WriteFile(path, []byte(strings.Replace(string(b), `"count": 3`, `"count": 4`, 1)), 0o644)
	_, err = Merge(MergeOptions{Dirs: []string{shards[0], other, shards[2]}, OutputDir: out})
	if !IsUsage(err) || !strings.Contains(err.Error(), "config key shard.count differs") {
		t.Fatalf("a shard of a run split differently: %v", err)
	}
}

// A shard killed mid-write leaves a torn tail (a NUL run after a cut
// line): the merge keeps every whole line and says it skipped the rest.
func TestMergeReadsTornShards(t *testing.T) {
	_, shards := shardSet(t)
	f, err := os.OpenFile(filepath.Join(shards[1], record.RequestsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"request_id":"doc9_q1","phase":"meas` + strings.Repeat("\x00", 64))
	f.Close()
	os.Remove(filepath.Join(shards[1], record.SummaryFile))
	var warnings []string
	m, err := Merge(MergeOptions{Dirs: shards, OutputDir: t.TempDir(), Logf: func(f string, a ...any) { warnings = append(warnings, f) }})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(readLines(t, m.Dir)); got != 15 {
		t.Fatalf("merged %d lines, want the 15 whole ones", got)
	}
	if len(warnings) != 2 || !m.Summary.Run.Interrupted {
		t.Fatalf("want a warning for the torn line and one for the missing summary, and the run marked interrupted: %q, %+v", warnings, m.Summary.Run)
	}
}

// A shard still being written (its folder locked) is not merged: the
// lines it has yet to write would be missing from the merged run.
func TestMergeRefusesARunningShard(t *testing.T) {
	_, shards := shardSet(t)
	lock, err := record.LockDir(shards[1])
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	_, err = Merge(MergeOptions{Dirs: shards, OutputDir: out})
	if !IsUsage(err) || !strings.Contains(err.Error(), "is still running") {
		t.Fatalf("a running shard: %v", err)
	}
	if err := lock.Unlock(); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(MergeOptions{Dirs: shards, OutputDir: out}); err != nil {
		t.Fatalf("once it ended: %v", err)
	}
}
