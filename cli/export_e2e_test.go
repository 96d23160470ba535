package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testbin"
)

func TestExportConfigResolvesAndRunsNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "bench_config.json")
	runs := filepath.Join(dir, "runs")
	res := testbin.Run(t, 60*time.Second, []string{"KVBENCH_RUNS_DIR=" + runs}, "run", "--engine-url", "builtin",
		"--workload", "long-doc-qa", "--lmcache-url", "placeholder-replaced-below", "--export-config", out)
	// --lmcache-url pointing nowhere must fail with the URL named, exit 2.
	if res.Code != 2 || !strings.Contains(res.Stderr, "placeholder-replaced-below") {
		t.Fatalf("bad --lmcache-url: exit %d, stderr %q", res.Code, res.Stderr)
	}
	res = testbin.Run(t, 60*time.Second, []string{"KVBENCH_RUNS_DIR=" + runs}, "run", "--engine-url", "builtin",
		"--workload", "long-doc-qa", "--ldqa-document-length", "3000", "--export-config", out)
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m["model"] != "kvbench-sim" {
		t.Errorf("export must hold the auto-detected model, got %v", m["model"])
	}
	if m["tokens_per_gb_kvcache"].(float64) != 10000 {
		t.Errorf("export must hold the built-in engine's tokens per GB, got %v", m["tokens_per_gb_kvcache"])
	}
	if m["ldqa_document_length"].(float64) != 3000 {
		t.Errorf("workload key lost: %v", m)
	}
	for _, k := range []string{"engine_url", "lmcache_url", "api_key_env"} {
		if _, ok := m[k]; ok {
			t.Errorf("export holds %s", k)
		}
	}
	if _, err := os.Stat(runs); !os.IsNotExist(err) {
		t.Errorf("--export-config must run nothing, but %s exists", runs)
	}

	// The exported file replays: --config plus an engine URL is enough.
	res = testbin.Run(t, 90*time.Second, []string{"KVBENCH_RUNS_DIR=" + runs}, "run", "--config", out,
		"--engine-url", "builtin", "--ldqa-document-length", "200", "--kv-cache-volume", "0.04",
		"--builtin-speed", "50", "--no-interactive", "-q", "--format", "json")
	if res.Code != 0 {
		t.Fatalf("replay exit %d: %s", res.Code, res.Stderr)
	}
	var sum struct {
		Config map[string]any `json:"config"`
	}
	json.Unmarshal([]byte(res.Stdout), &sum)
	if sum.Config["ldqa_document_length"].(float64) != 200 || sum.Config["tokens_per_gb_kvcache"].(float64) != 10000 {
		t.Errorf("set flags must win over --config, file values must stay: %v", sum.Config)
	}
}

func TestBuiltinBudgetDefaultsToItsGPUTier(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	export := func(env []string, args ...string) map[string]any {
		t.Helper()
		out := filepath.Join(t.TempDir(), "c.json")
		env = append(env, "KVBENCH_RUNS_DIR="+filepath.Join(dir, "runs"), "KVBENCH_CONFIG_DIR="+filepath.Join(dir, "cfg"))
		res := testbin.Run(t, 60*time.Second, env, append([]string{"run", "--engine-url", "builtin",
			"--workload", "long-doc-qa", "--export-config", out}, args...)...)
		if res.Code != 0 {
			t.Fatalf("exit %d: %s", res.Code, res.Stderr)
		}
		data, _ := os.ReadFile(out)
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if v := export(nil)["kv_cache_volume"]; v != 8.0 {
		t.Errorf("builtin without a budget: kv_cache_volume %v, want the simulated GPU tier 8", v)
	}
	if v := export(nil, "--kv-cache-volume", "100")["kv_cache_volume"]; v != 100.0 {
		t.Errorf("a given budget is kept: %v", v)
	}
	if v := export([]string{"KVBENCH_KV_CACHE_VOLUME=3"})["kv_cache_volume"]; v != 3.0 {
		t.Errorf("a budget from the environment is kept: %v", v)
	}
}
