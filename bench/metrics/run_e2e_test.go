package metrics_test

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/metrics"
	"github.com/kvbench/kvbench/internal/testbin"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/simtest"
)

// realSpeed keeps the simulator at its modelled speed (sim's default 1,
// not simtest's 100): these runs sample the metrics endpoint once a second
// and time their phases.
func realSpeed(c *sim.Config) { c.Speed = 1 }

func runDir(t *testing.T, parent string) string {
	t.Helper()
	entries, err := os.ReadDir(parent)
	if err != nil || len(entries) != 1 {
		t.Fatalf("want one run folder in %s: %v %v", parent, entries, err)
	}
	return filepath.Join(parent, entries[0].Name())
}

func readJSONL(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v in %q", path, err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

type summary struct {
	Results struct {
		TotalRequests      int     `json:"total_requests"`
		SuccessfulRequests int     `json:"successful_requests"`
		ElapsedTime        float64 `json:"elapsed_time"`
		TotalInputTokens   int     `json:"total_input_tokens"`
		TotalOutputTokens  int     `json:"total_output_tokens"`
	} `json:"results"`
	Cache struct {
		PromptTokens int      `json:"prompt_tokens"`
		CachedTokens int      `json:"cached_tokens"`
		HitRatio     *float64 `json:"hit_ratio"`
	} `json:"cache"`
	ServerMetrics *metrics.ServerMetrics `json:"server_metrics"`
}

func readSummary(t *testing.T, dir string) summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// A sequential long-doc-qa run against the simulator: metrics.jsonl has a
// line a second, and server_metrics agrees token for token with the
// receipts and with the simulator's own counters.
func TestRunMetricsURLAgainstSimulator(t *testing.T) {
	t.Parallel()
	eng := simtest.Start(t, realSpeed)
	out := t.TempDir()
	res := testbin.Run(t, 120*time.Second, nil, "run", "--engine-url", eng, "--metrics-url", eng+"/metrics",
		"--workload", "long-doc-qa", "--tokens-per-gb-kvcache", "10000", "--kv-cache-volume", "1",
		"--ldqa-document-length", "2000", "--ldqa-num-inflight-requests", "1", "--ldqa-max-output-length", "40",
		"--output-dir", out, "--no-interactive")
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
	}
	dir := runDir(t, out)

	// metrics.jsonl: one periodic line a second, plus the two marks.
	lines := readJSONL(t, filepath.Join(dir, "metrics.jsonl"))
	var periodic []float64
	marks := map[string]int{}
	for _, l := range lines {
		for _, k := range []string{"time", "elapsed_s", "metrics"} {
			if _, ok := l[k]; !ok {
				t.Fatalf("metrics.jsonl line lacks %q: %v", k, l)
			}
		}
		if l["error"] != nil {
			t.Errorf("a scrape of the simulator failed: %v", l["error"])
		}
		if m, ok := l["mark"].(string); ok {
			marks[m]++
			continue
		}
		periodic = append(periodic, l["elapsed_s"].(float64))
	}
	if marks[metrics.MarkMeasuredStart] != 1 || marks[metrics.MarkMeasuredEnd] != 1 {
		t.Errorf("marks %v, want one measured_start and one measured_end", marks)
	}
	if len(periodic) < 3 {
		t.Fatalf("%d periodic lines; the run should last several seconds", len(periodic))
	}
	span := periodic[len(periodic)-1] - periodic[0]
	if n := float64(len(periodic) - 1); math.Abs(n-span) > 1 {
		t.Errorf("%d periodic lines over %.2fs, want one a second", len(periodic), span)
	}
	for i := 1; i < len(periodic); i++ {
		if gap := periodic[i] - periodic[i-1]; gap < 0.5 || gap > 2 {
			t.Errorf("gap %.2fs between lines %d and %d", gap, i-1, i)
		}
	}

	// server_metrics against the receipts of the measured requests.
	s := readSummary(t, dir)
	sm := s.ServerMetrics
	if sm == nil {
		t.Fatal("bench_summary.json has no server_metrics")
	}
	reqs := readJSONL(t, filepath.Join(dir, "requests.jsonl"))
	var measuredPrompt, measuredCached, allCached, allPrompt float64
	for _, r := range reqs {
		p, c := r["prompt_tokens"].(float64), r["cached_tokens"].(float64)
		allPrompt += p
		allCached += c
		if r["phase"] == "measured" {
			measuredPrompt += p
			measuredCached += c
		}
	}
	hits := sm.Counters["vllm:prefix_cache_hits_total"]
	queries := sm.Counters["vllm:prefix_cache_queries_total"]
	if measuredCached == 0 || hits.Delta != measuredCached {
		t.Errorf("server hits delta %v, receipts' cached tokens %v", hits.Delta, measuredCached)
	}
	if queries.Delta != measuredPrompt {
		t.Errorf("server queries delta %v, receipts' prompt tokens %v", queries.Delta, measuredPrompt)
	}
	if sm.PrefixCacheHitRate == nil || s.Cache.HitRatio == nil || math.Abs(*sm.PrefixCacheHitRate-*s.Cache.HitRatio) > 1e-12 {
		t.Errorf("server hit rate %v, observed hit ratio %v", sm.PrefixCacheHitRate, s.Cache.HitRatio)
	}
	if !sm.Exact || sm.FailedScrapes != 0 || sm.Scrapes != len(lines) {
		t.Errorf("exact %v, scrapes %d (failed %d), lines %d", sm.Exact, sm.Scrapes, sm.FailedScrapes, len(lines))
	}

	// ... and against the simulator's own counters: nothing ran after the
	// measured phase, so "after" is the final state, warm-up included.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	final, err := metrics.Scrape(ctx, nil, eng+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if final["vllm:prefix_cache_hits_total"] != allCached || hits.After != allCached {
		t.Errorf("simulator hits %v, server_metrics after %v, receipts' cached tokens (all phases) %v",
			final["vllm:prefix_cache_hits_total"], hits.After, allCached)
	}
	if final["vllm:prefix_cache_queries_total"] != allPrompt {
		t.Errorf("simulator queries %v, receipts' prompt tokens (all phases) %v", final["vllm:prefix_cache_queries_total"], allPrompt)
	}

	// The text summary's section.
	for _, want := range []string{"Server metrics", "Server prefix cache hit rate (%):", "vllm:prefix_cache_hits_total:"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("text summary lacks %q:\n%s", want, res.Stdout)
		}
	}
}

// A metrics endpoint that hangs or answers garbage is counted, never
// fatal, and does not stretch the measured phase.
func TestRunWithBrokenMetricsEndpoint(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, metricsURL string) (summary, []map[string]any, testbin.Result) {
		eng := simtest.Start(t, realSpeed) // a fresh cache per run: the same cold work each time
		out := t.TempDir()
		args := []string{"run", "--engine-url", eng, "--workload", "random-prefill",
			"--tokens-per-gb-kvcache", "10000", "--rp-num-requests", "6", "--rp-request-length", "2000",
			"--output-dir", out, "--no-interactive", "-q"}
		if metricsURL != "" {
			args = append(args, "--metrics-url", metricsURL)
		}
		res := testbin.Run(t, 120*time.Second, nil, args...)
		if res.Code != 0 {
			t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
		}
		dir := runDir(t, out)
		var lines []map[string]any
		if metricsURL != "" {
			lines = readJSONL(t, filepath.Join(dir, "metrics.jsonl"))
		}
		return readSummary(t, dir), lines, res
	}
	base, _, _ := run(t, "")

	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer hang.Close()
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<html>this is not the metrics endpoint</html>\n"))
	}))
	defer garbage.Close()

	for name, url := range map[string]string{"hanging": hang.URL + "/metrics", "garbage": garbage.URL + "/metrics"} {
		t.Run(name, func(t *testing.T) {
			s, lines, res := run(t, url)
			if s.Results.SuccessfulRequests != s.Results.TotalRequests || s.Results.TotalRequests != 6 {
				t.Errorf("results %+v", s.Results)
			}
			sm := s.ServerMetrics
			if sm == nil || sm.Scrapes < 2 || sm.FailedScrapes != sm.Scrapes || len(sm.Counters) != 0 || sm.PrefixCacheHitRate != nil || sm.Exact {
				t.Errorf("server_metrics %+v", sm)
			}
			if len(lines) != sm.Scrapes {
				t.Errorf("%d lines for %d scrapes", len(lines), sm.Scrapes)
			}
			for _, l := range lines {
				if l["error"] == nil || l["metrics"] != nil {
					t.Errorf("a failed scrape's line: %v", l)
				}
			}
			// The same requests, all successful, with the same token counts as
			// without metrics: the failing endpoint changed nothing measured.
			// (How long the marks may wait is bounded in sampler_test.go.)
			if s.Results.TotalInputTokens != base.Results.TotalInputTokens || s.Results.TotalOutputTokens != base.Results.TotalOutputTokens {
				t.Errorf("tokens %d/%d, %d/%d without metrics", s.Results.TotalInputTokens, s.Results.TotalOutputTokens,
					base.Results.TotalInputTokens, base.Results.TotalOutputTokens)
			}
			if strings.Count(res.Stderr, "metrics: scrape failed") > 1 {
				t.Errorf("the failure is logged more than once:\n%s", res.Stderr)
			}
		})
	}
}
