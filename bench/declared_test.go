package bench

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kvbench/kvbench/config"
)

// serve127 is an httptest server on 127.0.0.1, stopped by the test.
func serve127(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewUnstartedServer(h)
	s.Listener.Close()
	s.Listener = ln
	s.Start()
	t.Cleanup(s.Close)
	return s.URL
}

// vLLM's cache_config_info gives the GPU tier: num_gpu_blocks x
// block_size; the API key goes as a bearer header.
func TestDeclaredCacheVLLM(t *testing.T) {
	url := serve127(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k3y" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.URL.Path == "/metrics" {
			w.Write([]byte("# HELP vllm:cache_config_info x\nvllm:cache_config_info{block_size=\"16\",cache_dtype=\"auto\",num_gpu_blocks=\"2500\",prefix_caching=\"True\"} 1.0\n"))
			return
		}
		w.WriteHeader(http.StatusNotFound)
	})
	p := &Prepared{Config: config.Default(), EngineURL: url + "/v1", TokensPerGB: 10000, apiKey: "k3y"}
	d := p.DeclaredCache(context.Background())
	if d == nil || d.GPUTokens == nil || *d.GPUTokens != 40000 || d.CPUTokens != nil || *d.TotalTokens != 40000 || *d.GPUGB != 4 {
		t.Fatalf("declared %+v", d)
	}
	if d.Source != "vllm:cache_config_info" {
		t.Errorf("source %q", d.Source)
	}
}

// An engine that says nothing declares nothing (null, not 0).
func TestDeclaredCacheNone(t *testing.T) {
	url := serve127(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			w.Write([]byte("llamacpp:prompt_tokens_total 0\n"))
			return
		}
		w.WriteHeader(http.StatusNotFound)
	})
	p := &Prepared{Config: config.Default(), EngineURL: url + "/v1", TokensPerGB: 10000}
	if d := p.DeclaredCache(context.Background()); d != nil {
		t.Fatalf("declared %+v", d)
	}
}

func TestPromLabels(t *testing.T) {
	l := promLabels(`a="1",b="x\"y", c="" } 1`)
	if l["a"] != "1" || l["b"] != `x"y` || l["c"] != "" {
		t.Fatalf("%v", l)
	}
	if vllmGPUTokens([]byte(`vllm:cache_config_info{block_size="16",num_gpu_blocks="NaN"} 1`)) != nil {
		t.Error("NaN blocks read")
	}
}
