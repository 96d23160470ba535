package sim

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestStatusReportsTheCPUTierAsL1(t *testing.T) {
	r := startSim(t, func(c *Config) { c.CPUKVGB = 3 })
	_, body := get(t, r.URL(), "/status")
	var st struct {
		SM struct {
			Total int64 `json:"memory_total_bytes"`
			L1    struct {
				Total int64 `json:"memory_total_bytes"`
			} `json:"l1_manager"`
		} `json:"storage_manager"`
	}
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatal(err)
	}
	if st.SM.L1.Total != 3<<30 || st.SM.Total != 3<<30 {
		t.Errorf("storage_manager %s, want 3 GiB in l1_manager.memory_total_bytes", body)
	}
}

func TestDetokenizeMirrorsTokenize(t *testing.T) {
	r := startSim(t, nil)
	text := "hi tell hello, world!"
	resp := post(t, r.URL(), "/tokenize", map[string]any{"prompt": text})
	var tok struct {
		Tokens []uint32 `json:"tokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp = post(t, r.URL(), "/detokenize", map[string]any{"tokens": tok.Tokens})
	var detok struct {
		Prompt string `json:"prompt"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&detok); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if detok.Prompt != "hi tell hell o , worl d !" {
		t.Errorf("detokenize = %q", detok.Prompt)
	}
	// Its text tokenizes back to the same ids.
	if got := tokenize(nil, detok.Prompt); !equalIDs(got, tok.Tokens) {
		t.Errorf("round trip %v, want %v", got, tok.Tokens)
	}
	// An id never produced is refused, naming it.
	resp = post(t, r.URL(), "/detokenize", map[string]any{"tokens": []uint32{7}})
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("unknown id: status %d, want 400", resp.StatusCode)
	}
}

func equalIDs(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The CPU tier's prefix-chained lookup counters: requested is what the GPU
// tier missed, hits what the CPU tier served.
func TestLMCacheLookupCounters(t *testing.T) {
	r := startTraced(t, func(c *Config) {
		c.TokensPerGB = 100 // GPU tier 8 GB = 800 tokens = 50 blocks; CPU 10 GB
		c.CPUKVGB = 10
	})
	var prompt, cpuServed, gpuServed int
	for _, p := range []string{words("hi", 600), words("tell", 600), words("hi", 600)} {
		res := streamChat(t, r.URL, p, nil)
		prompt += res.Usage.PromptTokens
		tr := r.last(t)
		if tr.GPUTokens+tr.CPUTokens != res.Usage.cached(t) {
			t.Fatalf("trace %+v, cached_tokens %d", tr, res.Usage.cached(t))
		}
		cpuServed += tr.CPUTokens
		gpuServed += tr.GPUTokens
	}
	// Request 3 repeats request 1, part of which request 2 pushed to the
	// CPU tier.
	if cpuServed == 0 {
		t.Fatal("nothing was served from the CPU tier")
	}
	_, body := get(t, r.URL, "/metrics")
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	val := func(name string) float64 {
		f, ok := fams[name]
		if !ok {
			t.Fatalf("%s missing", name)
		}
		return f.Metric[0].Counter.GetValue()
	}
	if got := val("lmcache_mp_lookup_hit_tokens_total"); got != float64(cpuServed) {
		t.Errorf("hit tokens %v, want %d", got, cpuServed)
	}
	if got := val("lmcache_mp_lookup_requested_tokens_total"); got != float64(prompt-gpuServed) {
		t.Errorf("requested tokens %v, want %d", got, prompt-gpuServed)
	}
}
