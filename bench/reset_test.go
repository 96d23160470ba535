package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/simtest"
)

// fakeResetEngine answers the reset endpoints of one engine kind.
type fakeResetEngine struct {
	kind     string // vllm, sglang, llamacpp, llamacpp-nosave, none
	mu       sync.Mutex
	calls    []string
	erasedID []string
}

func (f *fakeResetEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls = append(f.calls, r.Method+" "+r.URL.RequestURI())
	f.mu.Unlock()
	switch {
	case f.kind == "vllm" && r.Method == "POST" && r.URL.Path == "/reset_prefix_cache":
		w.WriteHeader(200)
	case f.kind == "sglang" && r.URL.Path == "/flush_cache":
		fmt.Fprint(w, "Cache flushed.")
	case strings.HasPrefix(f.kind, "llamacpp") && r.Method == "GET" && r.URL.Path == "/slots":
		fmt.Fprint(w, `[{"id":0,"n_ctx":8192},{"id":1,"n_ctx":8192}]`)
	case strings.HasPrefix(f.kind, "llamacpp") && r.Method == "POST" && strings.HasPrefix(r.URL.Path, "/slots/"):
		if f.kind == "llamacpp-nosave" {
			w.WriteHeader(501)
			fmt.Fprint(w, `{"error":{"code":501,"message":"This server does not support slots action. Start it with `+"`--slot-save-path`"+`","type":"not_supported_error"}}`)
			return
		}
		if r.URL.Query().Get("action") != "erase" {
			w.WriteHeader(400)
			return
		}
		f.mu.Lock()
		f.erasedID = append(f.erasedID, strings.TrimPrefix(r.URL.Path, "/slots/"))
		f.mu.Unlock()
		fmt.Fprint(w, `{"id_slot":0,"n_erased":10}`)
	default:
		w.WriteHeader(404)
		fmt.Fprint(w, `{"error":{"message":"File Not Found","type":"not_found_error","code":404}}`)
	}
}

func TestResetCacheEngines(t *testing.T) {
	for _, c := range []struct{ kind, want string }{
		{"vllm", "POST /reset_prefix_cache"},
		{"sglang", "POST /flush_cache"},
		{"llamacpp", "POST /slots/{id}?action=erase"},
	} {
		t.Run(c.kind, func(t *testing.T) {
			f := &fakeResetEngine{kind: c.kind}
			srv := httptest.NewServer(f)
			defer srv.Close()
			got, err := ResetCache(context.Background(), ResetOptions{BaseURL: srv.URL + "/v1"})
			if err != nil || got != c.want {
				t.Fatalf("got %q %v, want %q", got, err, c.want)
			}
			if c.kind == "llamacpp" && strings.Join(f.erasedID, ",") != "0,1" {
				t.Errorf("erased slots %v, want 0,1", f.erasedID)
			}
		})
	}
}

// Nothing answering is exit 3 with one line naming what each engine
// said and the flag that enables its endpoint; llama.cpp's own message
// (naming --slot-save-path) is relayed.
func TestResetCacheNothingAnswers(t *testing.T) {
	for _, kind := range []string{"none", "llamacpp-nosave"} {
		t.Run(kind, func(t *testing.T) {
			srv := httptest.NewServer(&fakeResetEngine{kind: kind})
			defer srv.Close()
			_, err := ResetCache(context.Background(), ResetOptions{BaseURL: srv.URL + "/v1", APIKey: "sk-never-shown"})
			if !IsEngineUnavailable(err) {
				t.Fatalf("error %v is not exit 3", err)
			}
			msg := err.Error()
			for _, w := range []string{"--reset-cache", "VLLM_SERVER_DEV_MODE=1", "/flush_cache", "--slot-save-path"} {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q: %s", w, msg)
				}
			}
			if kind == "llamacpp-nosave" && !strings.Contains(msg, "does not support slots action") {
				t.Errorf("llama.cpp's message not relayed: %s", msg)
			}
			if strings.Contains(msg, "\n") || strings.Contains(msg, "sk-never-shown") {
				t.Errorf("message: %q", msg)
			}
		})
	}
}

func TestResetCacheSimulator(t *testing.T) {
	url := simtest.Start(t, func(c *sim.Config) {})
	got, err := ResetCache(context.Background(), ResetOptions{BaseURL: url + "/v1"})
	if err != nil || got != "POST /reset_prefix_cache" {
		t.Fatalf("got %q %v", got, err)
	}
}
