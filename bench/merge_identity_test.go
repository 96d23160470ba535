package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/simtest"
)

// copyShard copies a shard folder and rewrites its files with edit
// (file name -> old -> new, every occurrence), failing when an old text
// is not there, so the edit the test relies on happened.
func copyShard(t *testing.T, dir string, edits map[string][][2]string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(dir))
	if err := os.CopyFS(dst, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	for name, pairs := range edits {
		path := filepath.Join(dst, name)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pairs {
			if !bytes.Contains(b, []byte(p[0])) {
				t.Fatalf("%s has no %q to edit", path, p[0])
			}
			b = bytes.ReplaceAll(b, []byte(p[0]), []byte(p[1]))
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// refused runs a merge that must fail as a usage error naming every
// text in want, and write nothing.
func refused(t *testing.T, o MergeOptions, want ...string) {
	t.Helper()
	o.OutputDir = t.TempDir()
	_, err := Merge(o)
	if !IsUsage(err) {
		t.Fatalf("want a usage error (exit 2), got %v", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %q", err, w)
		}
	}
	if entries, _ := os.ReadDir(o.OutputDir); len(entries) != 0 {
		t.Errorf("a refused merge wrote %d entries", len(entries))
	}
}

func TestMergeRefusesShardsOfAnotherRun(t *testing.T) {
	_, shards := shardSet(t)
	// Shard 1 of another run of the same config: another run key.
	other := runConfigKey(t, filepath.Join(t.TempDir(), "other"), "1/3", "another-run")
	refused(t, MergeOptions{Dirs: []string{shards[0], other, shards[2]}}, "run keys differ", shards[0], other, "merge-test", "another-run")
	// A shard block without a run key is not one of a run.
	nokey := copyShard(t, shards[1], map[string][][2]string{record.ConfigFile: {{"\"start_at\": null,\n    \"run_key\": \"merge-test\"", `"start_at": null`}}})
	refused(t, MergeOptions{Dirs: []string{shards[0], nokey, shards[2]}}, nokey, "run_key")
}

// A copy of shard 0 relabelled as shard 1 (its index and lines' shard
// key edited) has the ids of shard 0: refused, naming the folder.
func TestMergeRefusesARelabelledShard(t *testing.T) {
	_, shards := shardSet(t)
	fake := copyShard(t, shards[0], map[string][][2]string{
		record.ConfigFile:   {{`"index": 0,`, `"index": 1,`}},
		record.RequestsFile: {{`"shard":0}`, `"shard":1}`}},
	})
	refused(t, MergeOptions{Dirs: []string{shards[0], fake, shards[2]}}, fake, "is shard 1 of 3", "shard 0 sends")
	refused(t, MergeOptions{Dirs: []string{fake, shards[2]}, AllowPartial: true}, fake, "shard 0 sends")
	// A line the workload never sends.
	alien := copyShard(t, shards[1], map[string][][2]string{record.RequestsFile: {{`"request_id":"doc1_q0"`, `"request_id":"prefill_1"`}}})
	refused(t, MergeOptions{Dirs: []string{shards[0], alien, shards[2]}}, alien, `"prefill_1"`, "long-doc-qa never sends")
	// The same index twice.
	refused(t, MergeOptions{Dirs: []string{shards[0], shards[1], shards[2], shards[1]}}, "shard 1 of 3 is given 2 times", shards[1])
}

// A request id twice: in one shard (a line copied), or in two shards
// (where the ids do not say which shard sends them).
func TestMergeRefusesRepeatedRequestIDs(t *testing.T) {
	_, shards := shardSet(t)
	b, err := os.ReadFile(filepath.Join(shards[1], record.RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	first := b[:bytes.IndexByte(b, '\n')+1]
	twice := copyShard(t, shards[1], nil)
	f, err := os.OpenFile(filepath.Join(twice, record.RequestsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(first)
	f.Close()
	var l line
	json.Unmarshal(first, &l)
	refused(t, MergeOptions{Dirs: []string{shards[0], twice, shards[2]}}, "request \""+l.ID+"\" is twice in "+twice)

	// Across shards, by the index alone (no workload to say whose a line
	// is): both folders are named.
	dir := t.TempDir()
	var folders []*shardFolder
	for i, ids := range [][]string{{"a", "b", "c"}, {"d", "b"}} {
		path := filepath.Join(dir, fmt.Sprint(i))
		os.MkdirAll(path, 0o755)
		var lines bytes.Buffer
		for k, id := range ids {
			fmt.Fprintf(&lines, `{"request_id":%q,"phase":"measured","successful":true,"submit_time":%d}`+"\n", id, 100+k)
		}
		os.WriteFile(filepath.Join(path, record.RequestsFile), lines.Bytes(), 0o644)
		folders = append(folders, &shardFolder{dir: path, index: i, count: 2})
	}
	var index []indexEntry
	for i, s := range folders {
		e, err := indexShard(s, int32(i), nil, "x")
		if err != nil {
			t.Fatal(err)
		}
		defer s.file.Close()
		index = append(index, e...)
	}
	err = checkRepeatedIDs(folders, index)
	if !IsUsage(err) || !strings.Contains(err.Error(), `request "b" is in `+folders[0].dir+" and in "+folders[1].dir) {
		t.Fatalf("an id in two shards: %v", err)
	}
	if err := checkRepeatedIDs(folders[:1], index[:3]); err != nil {
		t.Fatalf("distinct ids: %v", err)
	}
}

// --shard 0/1000000000 in a folder's config: refused at once (its merge
// used to allocate a billion missing shards).
func TestMergeBoundsTheShardCount(t *testing.T) {
	_, shards := shardSet(t)
	huge := copyShard(t, shards[0], map[string][][2]string{record.ConfigFile: {{`"count": 3,`, `"count": 1000000000,`}}})
	refused(t, MergeOptions{Dirs: []string{huge}, AllowPartial: true}, huge, "count <= 4096")
}

// traceLines is a Mooncake trace of 16-token blocks whose even lines
// share prefixes only with even lines, and odd with odd: split over two
// shards, no request's hits depend on when the other shard sent, so the
// merged replay must observe what the whole replay observed. Line 6 is
// too long for --tr-max-input-tokens 100; line 9 is invalid.
const traceLines = `{"timestamp":0,"input_length":48,"output_length":2,"hash_ids":[1,2,3]}
{"timestamp":10,"input_length":48,"output_length":2,"hash_ids":[10,11,12]}
{"timestamp":20,"input_length":64,"output_length":2,"hash_ids":[1,2,3,4]}
{"timestamp":30,"input_length":64,"output_length":2,"hash_ids":[10,11,12,13]}
{"timestamp":40,"input_length":80,"output_length":2,"hash_ids":[1,2,3,4,5]}
{"timestamp":50,"input_length":80,"output_length":2,"hash_ids":[10,11,12,13,14]}
{"timestamp":60,"input_length":112,"output_length":2,"hash_ids":[20,21,22,23,24,25,26]}
{"timestamp":70,"input_length":32,"output_length":2,"hash_ids":[30,31]}
{"timestamp":80,"input_length":40,"output_length":2,"hash_ids":[1,2,41]}
{"timestamp":90,"input_length":"many"}
`

// runTrace replays the trace against the simulator at url; shard "" is
// the whole replay.
func runTrace(t *testing.T, url, trace, out, shard string) string {
	t.Helper()
	cfg := config.Default()
	for k, v := range map[string]any{"workload": config.TraceReplay, "model": "kvbench-sim", "output_dir": out,
		"tr_file": trace, "tr_block_size": 16, "tr_max_input_tokens": 100, "tr_skip_invalid": true,
		"max_concurrency": 1, "tokens_per_gb_kvcache": 10000, "kv_cache_volume": 10.0} {
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if shard != "" {
		cfg.Set("shard", shard)
		cfg.Set("run_key", "trace-merge")
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	r, err := New(context.Background(), &Prepared{Config: cfg, EngineURL: url + "/v1", TokensPerGB: 10000})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for range r.Events() {
		}
	}()
	if code := r.Run(context.Background()).ExitCode; code != 0 {
		t.Fatalf("trace replay %q: exit %d", shard, code)
	}
	return r.Dir()
}

// workloadBlock is a summary's workload block as JSON values.
func workloadBlock(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, record.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Workload map[string]any `json:"workload"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Workload == nil {
		t.Fatalf("%s: the workload block is null", dir)
	}
	return s.Workload
}

// sameBlock compares two trace-replay blocks but for the replay's own
// span (its wall-clock time).
func sameBlock(t *testing.T, what string, got, want map[string]any) {
	t.Helper()
	g, _ := json.Marshal(withoutKey(got, "replay_span_s"))
	w, _ := json.Marshal(withoutKey(want, "replay_span_s"))
	if !bytes.Equal(g, w) {
		t.Errorf("%s workload block\n got %s\nwant %s (the unsharded replay's)", what, g, w)
	}
}

func withoutKey(m map[string]any, key string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// A merged trace replay keeps its workload block, recomputed from the
// lines' expected and observed cache: the unsharded replay's. A shard
// config whose tr_file is now a FIFO or /dev/zero merges just the same:
// merge never opens the trace.
func TestMergeTraceReplayKeepsItsBlock(t *testing.T) {
	url := simtest.Start(t, func(c *sim.Config) { c.ZeroLatency = true; c.GPUKVGB = 1000; c.MaxModelLen = 200000 })
	root := t.TempDir()
	trace := filepath.Join(root, "trace.jsonl")
	if err := os.WriteFile(trace, []byte(traceLines), 0o644); err != nil {
		t.Fatal(err)
	}
	whole := workloadBlock(t, runTrace(t, url, trace, filepath.Join(root, "whole"), ""))
	if whole["requests"] != 8.0 || whole["skipped_too_long"] != 1.0 || whole["skipped_invalid"] != 1.0 || whole["prompt_mode"] != "tokens" ||
		whole["expected_hit_ratio"] == nil || whole["expected_hit_ratio"] == 0.0 || whole["below_expected"] != 0.0 {
		t.Fatalf("the unsharded replay's block proves nothing: %v", whole)
	}
	shards := []string{
		runTrace(t, url, trace, filepath.Join(root, "shards"), "0/2"),
		runTrace(t, url, trace, filepath.Join(root, "shards"), "1/2"),
	}
	m, err := Merge(MergeOptions{Dirs: shards, OutputDir: filepath.Join(root, "merged")})
	if err != nil {
		t.Fatal(err)
	}
	sameBlock(t, "merged", workloadBlock(t, m.Dir), whole)
	if len(m.Sections) == 0 || m.Sections[0].Title != "Trace Replay" {
		t.Errorf("the merged text summary has no trace replay section: %+v", m.Sections)
	}

	fifo := filepath.Join(t.TempDir(), "trace.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(trace)
	for _, bad := range []string{fifo, "/dev/zero"} {
		to, _ := json.Marshal(bad)
		edit := map[string][][2]string{record.ConfigFile: {{`"tr_file": ` + string(quoted), `"tr_file": ` + string(to)}}}
		dirs := []string{copyShard(t, shards[0], edit), copyShard(t, shards[1], edit)}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		done := make(chan error, 1)
		var merged *Merged
		go func() {
			var err error
			merged, err = Merge(MergeOptions{Dirs: dirs, OutputDir: t.TempDir()})
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("tr_file %s: %v", bad, err)
			}
			sameBlock(t, "tr_file "+bad, workloadBlock(t, merged.Dir), whole)
		case <-ctx.Done():
			t.Fatalf("merge of shards whose tr_file is %s did not return in 60 s: it opened the file", bad)
		}
		cancel()
	}
}

// A workload that merge does not rebuild from its record is not built at
// all: a prompt file its config names (here a FIFO, which would block an
// open) is never opened.
func TestMergeOpensNoFileTheConfigNames(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "prompt.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "probe")
	os.MkdirAll(dir, 0o755)
	path, _ := json.Marshal(fifo)
	os.WriteFile(filepath.Join(dir, record.ConfigFile), []byte(`{"workload": "cache-probe", "cp_prompt_file": `+string(path)+
		`, "shard": {"index": 0, "count": 1, "start_at": "2030-01-01T00:00:00Z", "run_key": "probe-1"}}`+"\n"), 0o644)
	done := make(chan error, 1)
	go func() {
		_, err := Merge(MergeOptions{Dirs: []string{dir}, OutputDir: t.TempDir()})
		done <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("merge did not return in 60 s: it opened the config's prompt file")
	}
}
