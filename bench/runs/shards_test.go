package runs_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
)

// markMerged turns a written run into what kvbench merge writes: a
// shards block (here partial) and the largest start skew.
func markMerged(t *testing.T, dir string, shards int) {
	t.Helper()
	path := filepath.Join(dir, record.SummaryFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var list []map[string]any
	for i := range shards {
		list = append(list, map[string]any{"index": i, "run_id": "shard", "requests": 1, "failed": 0})
	}
	m["shards"], m["partial"], m["start_skew_ms"] = list, true, 12.5
	b, _ = json.Marshal(m)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMergedRunsShowTheirShards(t *testing.T) {
	dir := t.TempDir()
	merged := runstest.Write(t, dir, runstest.Spec{Name: "merged", Started: t0, Requests: 6, Summary: true})
	plain := runstest.Write(t, dir, runstest.Spec{Name: "plain", Started: t0.Add(time.Hour), Requests: 6, Summary: true})
	markMerged(t, merged, 3)

	r, err := runs.Read(merged)
	if err != nil {
		t.Fatal(err)
	}
	if r.Shards != 3 || !r.Partial || r.ShardNote() != "3 shards, partial" || r.StartSkewMs == nil || *r.StartSkewMs != 12.5 {
		t.Fatalf("merged run: shards %d partial %v note %q skew %v", r.Shards, r.Partial, r.ShardNote(), r.StartSkewMs)
	}
	p, err := runs.Read(plain)
	if err != nil {
		t.Fatal(err)
	}
	if p.Shards != 0 || p.ShardNote() != "" {
		t.Fatalf("a run of one process has no shards: %d %q", p.Shards, p.ShardNote())
	}
	cmp, err := runs.CompareNamed(dir, plain, merged)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := cmp.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "B: "+filepath.Base(merged)+" (merged from 3 shards, partial)") {
		t.Fatalf("compare must say B is merged:\n%s", out.String())
	}
}
