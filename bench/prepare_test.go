package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func statusServer(t *testing.T, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/status" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestTokensPerGBFromLMCacheStatus(t *testing.T) {
	url := statusServer(t, `{"cache_context_meta": {
		"a": {"model_name": "other", "kv_cache_layout": {"cache_size_per_token": 1}, "world_size": 1},
		"b": {"model_name": "llama", "kv_cache_layout": {"cache_size_per_token": 163840}}}}`)
	n, err := TokensPerGB(context.Background(), url, "llama")
	if err != nil || n != 6553 {
		t.Fatalf("163840 bytes/token: got %d, %v; want 6553", n, err)
	}
	url4 := statusServer(t, `{"cache_context_meta": {"x": {"model_name": "llama", "kv_cache_layout": {"cache_size_per_token": 163840}, "world_size": 4}}}`)
	if n, err := TokensPerGB(context.Background(), url4, "llama"); err != nil || n != 1638 {
		t.Fatalf("x4 ranks: got %d, %v; want 1638", n, err)
	}
	// Fallback to cb_gpu_context_meta.
	urlGPU := statusServer(t, `{"cb_gpu_context_meta": {"x": {"model_name": "llama", "kv_cache_layout": {"cache_size_per_token": 163840}, "world_size": 2}}}`)
	if n, err := TokensPerGB(context.Background(), urlGPU, "llama"); err != nil || n != 3276 {
		t.Fatalf("cb_gpu fallback: got %d, %v; want 3276", n, err)
	}
}

func TestTokensPerGBErrors(t *testing.T) {
	url := statusServer(t, `{"cache_context_meta": {"a": {"model_name": "qwen", "kv_cache_layout": {"cache_size_per_token": 1}}, "b": {"model_name": "mistral", "kv_cache_layout": {"cache_size_per_token": 1}}}}`)
	_, err := TokensPerGB(context.Background(), url, "llama")
	if err == nil {
		t.Fatal("want an error for a missing model")
	}
	for _, want := range []string{`"llama"`, url + "/status", "available: qwen, mistral", "--lmcache-url"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	bad := statusServer(t, `<html>`)
	if _, err := TokensPerGB(context.Background(), bad, "llama"); err == nil || !strings.Contains(err.Error(), "not LMCache status JSON") {
		t.Errorf("garbage: %v", err)
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	closed := srv.URL
	srv.Close()
	if _, err := TokensPerGB(context.Background(), closed, "llama"); err == nil || !strings.Contains(err.Error(), closed) {
		t.Errorf("unreachable must name the URL: %v", err)
	}
}
