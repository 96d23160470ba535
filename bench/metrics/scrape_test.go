package metrics

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

func parseFile(t *testing.T, name string) map[string]float64 {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	all, err := Parse(f)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return all
}

func wantValues(t *testing.T, got map[string]float64, want map[string]float64) {
	t.Helper()
	for k, v := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s missing", k)
			continue
		}
		if g != v {
			t.Errorf("%s = %v, want %v", k, g, v)
		}
	}
}

func TestParseVLLM(t *testing.T) {
	all := parseFile(t, "vllm.prom")
	// Label sets are summed: two data-parallel engines, three finish reasons.
	wantValues(t, all, map[string]float64{
		"vllm:prefix_cache_queries_total":        20000,
		"vllm:prefix_cache_hits_total":           14400,
		"vllm:num_requests_running":              3,
		"vllm:num_requests_waiting":              3,
		"vllm:kv_cache_usage_perc":               0.375,
		"vllm:request_success_total":             40,
		"vllm:time_to_first_token_seconds_sum":   3.5,
		"vllm:time_to_first_token_seconds_count": 40,
		"python_gc_objects_collected_total":      12345,
	})
	if _, ok := all["vllm:time_to_first_token_seconds_bucket"]; ok {
		t.Error("histogram buckets must not appear as a series")
	}
	known := Pick(all)
	wantValues(t, known, map[string]float64{
		"vllm:prefix_cache_queries_total": 20000,
		"vllm:prefix_cache_hits_total":    14400,
		"vllm:prompt_tokens_total":        20000,
		"vllm:generation_tokens_total":    640,
		"lmcache:num_hit_tokens_total":    4096,
		// exposed without _total, reported under the canonical name
		"lmcache:num_requested_tokens_total": 8192,
		"lmcache:retrieve_hit_rate":          0.5,
	})
	for _, name := range []string{"python_gc_objects_collected_total", "vllm:prefix_cache_queries_created", "lmcache:num_requested_tokens"} {
		if _, ok := known[name]; ok {
			t.Errorf("Pick kept %s", name)
		}
	}
	p, ok := hitRatePair(known)
	if !ok || p.Hits != "vllm:prefix_cache_hits_total" {
		t.Errorf("hit-rate pair = %+v, want vLLM's ahead of LMCache's", p)
	}
}

func TestParseSGLang(t *testing.T) {
	known := Pick(parseFile(t, "sglang.prom"))
	wantValues(t, known, map[string]float64{
		"sglang:prompt_tokens_total":     4096,
		"sglang:cached_tokens_total":     3168, // device + host
		"sglang:generation_tokens_total": 512,
		"sglang:cache_hit_rate":          0.77,
		"sglang:num_running_reqs":        2,
		"sglang:token_usage":             0.05,
	})
	p, ok := hitRatePair(known)
	if !ok || p.Hits != "sglang:cached_tokens_total" || len(p.Queries) != 1 || p.Queries[0] != "sglang:prompt_tokens_total" {
		t.Errorf("hit-rate pair = %+v", p)
	}
}

func TestParseLlamaCpp(t *testing.T) {
	all := parseFile(t, "llamacpp.prom")
	known := Pick(all)
	wantValues(t, known, map[string]float64{
		"llamacpp:prompt_tokens_total":        6886,
		"llamacpp:prompt_tokens_cached_total": 678,
		"llamacpp:tokens_predicted_total":     3469,
		"llamacpp:requests_processing":        1,
	})
	if _, ok := all["llamacpp:kv_cache_usage_ratio"]; !ok {
		t.Error("the NaN gauge should parse")
	}
	if _, ok := known["llamacpp:kv_cache_usage_ratio"]; ok {
		t.Error("a NaN value must not be kept: JSON cannot hold it")
	}
	// llama.cpp's prompt counter excludes cached tokens: queries are both.
	before := map[string]float64{"llamacpp:prompt_tokens_total": 100, "llamacpp:prompt_tokens_cached_total": 0}
	after := map[string]float64{"llamacpp:prompt_tokens_total": 130, "llamacpp:prompt_tokens_cached_total": 90}
	rate, _ := hitRate(before, after)
	if rate == nil || *rate != 0.75 {
		t.Errorf("llama.cpp hit rate = %v, want 0.75 (90 of 120)", rate)
	}
}

func TestParseRejectsGarbage(t *testing.T) {
	for _, in := range []string{
		"<html><body>Not Found</body></html>\n",
		"{\"error\": \"no metrics here\"}\n",
		"vllm:prefix_cache_hits_total{engine=\"0\" 12\n",
	} {
		if _, err := Parse(strings.NewReader(in)); err == nil {
			t.Errorf("Parse(%q) succeeded", in)
		}
	}
}

func TestScrapeHTTP(t *testing.T) {
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte("# TYPE vllm:prefix_cache_hits_total counter\nvllm:prefix_cache_hits_total 7\n"))
	}))
	defer srv.Close()

	all, err := Scrape(context.Background(), srv.Client(), srv.URL+"/metrics")
	if err != nil || all["vllm:prefix_cache_hits_total"] != 7 {
		t.Fatalf("Scrape = %v, %v", all, err)
	}
	if auth != "" {
		t.Errorf("Scrape sent Authorization %q", auth)
	}
	if _, err := ScrapeAuth(context.Background(), srv.Client(), srv.URL+"/metrics", "k-123"); err != nil || auth != "Bearer k-123" {
		t.Errorf("ScrapeAuth: err %v, Authorization %q", err, auth)
	}
	_, err = Scrape(context.Background(), srv.Client(), srv.URL+"/nope?token=secret")
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 404 {
		t.Fatalf("404 endpoint: %v", err)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("error shows the query string: %v", err)
	}
}

func TestDefaultAndNormalizeURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:8000/v1":  "http://h:8000/metrics",
		"http://h:8000/v1/": "http://h:8000/metrics",
		"http://h/api/v1":   "http://h/api/metrics",
	} {
		if got := DefaultURL(in); got != want {
			t.Errorf("DefaultURL(%q) = %q, want %q", in, got, want)
		}
	}
	if got, err := NormalizeURL("localhost:8000/metrics"); err != nil || got != "http://localhost:8000/metrics" {
		t.Errorf("NormalizeURL = %q, %v", got, err)
	}
	for _, bad := range []string{"", "ftp://h/metrics", "http:///metrics"} {
		if _, err := NormalizeURL(bad); err == nil || !strings.HasPrefix(err.Error(), "--metrics-url") {
			t.Errorf("NormalizeURL(%q) = %v, want an error naming the flag", bad, err)
		}
	}
}

func TestSameHost(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"http://h:8000/v1", "http://h:8000/metrics", true},
		{"http://H:8000/v1", "http://h:8000/metrics", true},
		{"http://h:8000/v1", "http://h:9000/metrics", false},
		{"http://h:8000/v1", "https://h:8000/metrics", false},
		{"http://h:8000/v1", "http://other:8000/metrics", false},
		{"", "http://h/metrics", false},
	} {
		if got := SameHost(tc.a, tc.b); got != tc.want {
			t.Errorf("SameHost(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}

func TestRedactWithoutHostCutsAtSecrets(t *testing.T) {
	for in, want := range map[string]string{
		"user:pass@gpu-box:9090/metrics?token=t": "gpu-box:9090/metrics?xxxxx",
		"http://u:secret@h:8000/metrics?token=x": "http://h:8000/metrics?xxxxx",
		"http://u:secret@h:8000/metrics":         "http://h:8000/metrics",
		"http://h:8000/metrics":                  "http://h:8000/metrics",
	} {
		if got := Redact(in); got != want || strings.Contains(got, "secret") || strings.Contains(got, "pass") || strings.Contains(got, "u:") || strings.Contains(got, "token=") {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
