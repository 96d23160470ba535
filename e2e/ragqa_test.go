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

// TestRAGQAQuality: against the built-in engine every distinct passage is
// prefilled alone, each sample is asked once, and rag_qa_quality.json and
// the Answer Quality section are written (the simulator's replies are not
// answers: nothing parses, and no request fails).
func TestRAGQAQuality(t *testing.T) {
	t.Parallel()
	data, _ := filepath.Abs("../bench/workload/testdata/rag_musique.jsonl")
	r := kvbench(t, "--engine-url", "builtin", "--builtin-speed", "20", "--workload", "rag-qa-quality",
		"--rag-dataset", data, "--rag-max-output-length", "16", "--rag-doc-align-tokens", "32")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	// Four distinct passages: Paris, Berlin, Rome and the blank-bodied
	// "Empty", which LMCache keeps as its title.
	if len(r.byPhase("warmup")) != 4 || len(r.byPhase("measured")) != 3 || r.byPhase("warmup")["prefill_doc3"] == nil {
		t.Fatalf("%d warmups, %d samples", len(r.byPhase("warmup")), len(r.byPhase("measured")))
	}
	w := r.workload(t)
	if num(t, w, "num_samples") != 3 || w["output"] == nil {
		t.Fatalf("workload block %v", w)
	}
	b, err := os.ReadFile(w["output"].(string))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil || len(doc["per_sample"].([]any)) != 3 {
		t.Fatalf("rag_qa_quality.json: %v\n%s", err, b)
	}
	if !strings.Contains(r.Stdout, "Answer Quality") || !strings.Contains(r.Stdout, "Parse rate (%):") {
		t.Errorf("text summary lacks Answer Quality:\n%s", r.Stdout)
	}
}

// TestRAGQAQualityOffline: a named dataset that cannot be downloaded says
// which file to fetch and where to put it (exit 2, nothing sent).
func TestRAGQAQualityOffline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res := testbin.Run(t, 60*time.Second, []string{"KVBENCH_CONFIG_DIR=" + dir, "HF_ENDPOINT=http://127.0.0.1:9", "XDG_CACHE_HOME=" + dir},
		"run", "--no-interactive", "--output-dir", filepath.Join(dir, "runs"), "--engine-url", "builtin",
		"--workload", "rag-qa-quality", "--rag-dataset", "hotpotqa")
	want := filepath.Join(dir, "kvbench", "datasets", "hotpotqa", "validation-00000-of-00001.parquet")
	if res.Code != 2 || !strings.Contains(res.Stderr, "cannot download") || !strings.Contains(res.Stderr, want) {
		t.Fatalf("exit %d, stderr %q; want 2 naming %s", res.Code, res.Stderr, want)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "runs")); len(entries) > 0 {
		t.Fatalf("a run folder was created")
	}
}
