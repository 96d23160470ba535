package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/bench/enginehttp"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/internal/secret"
)

// declaredTimeout bounds each question DeclaredCache asks.
const declaredTimeout = 5 * time.Second

// DeclaredCache is what the engine says its KV cache holds, for a
// working-set sweep to set beside what it found (spec/load.md): the
// simulator's tiers from its /status (tiers.gpu / tiers.cpu
// capacity_tokens); vLLM's vllm:cache_config_info from /metrics (or
// --metrics-url): num_gpu_blocks x block_size; an LMCache server's
// /status (--lmcache-url): its first tier's bytes over the cache size
// per token. Nil when none says. Every answer is best effort: an engine
// that does not answer declares nothing.
func (p *Prepared) DeclaredCache(ctx context.Context) *record.Declared {
	root := strings.TrimSuffix(p.EngineURL, "/v1")
	if p.builtin != nil {
		root = p.builtin.URL()
	}
	d := &record.Declared{}
	var sources []string
	if body := p.get(ctx, root+"/status", p.user); body != nil {
		if gpu, cpu, ok := simTiers(body); ok {
			d.GPUTokens, d.CPUTokens = gpu, cpu
			sources = append(sources, "engine /status tiers")
		}
	}
	if d.GPUTokens == nil {
		murl, user := root+"/metrics", p.user
		if raw := p.Config.ConnURL("metrics_url"); raw != "" && raw != "builtin" {
			murl, user = secret.SplitURL(raw)
		}
		if body := p.get(ctx, murl, user); body != nil {
			if gpu := vllmGPUTokens(body); gpu != nil {
				d.GPUTokens = gpu
				sources = append(sources, "vllm:cache_config_info")
			}
		}
	}
	if d.CPUTokens == nil && p.TokensPerGB > 0 {
		if raw := p.Config.ConnURL("lmcache_url"); raw != "" {
			if gb, err := LMCacheL1GB(ctx, raw); err == nil && gb > 0 {
				t := gb * float64(p.TokensPerGB)
				d.CPUTokens = &t
				sources = append(sources, "LMCache /status")
			}
		}
	}
	if d.GPUTokens == nil && d.CPUTokens == nil {
		return nil
	}
	d.Source = strings.Join(sources, ", ")
	switch {
	case d.GPUTokens != nil && d.CPUTokens != nil:
		t := *d.GPUTokens + *d.CPUTokens
		d.TotalTokens = &t
	case d.GPUTokens != nil:
		t := *d.GPUTokens
		d.TotalTokens = &t
	default:
		t := *d.CPUTokens
		d.TotalTokens = &t
	}
	if p.TokensPerGB > 0 {
		gb := func(t *float64) *float64 {
			if t == nil {
				return nil
			}
			g := *t / float64(p.TokensPerGB)
			return &g
		}
		d.GPUGB, d.CPUGB, d.TotalGB = gb(d.GPUTokens), gb(d.CPUTokens), gb(d.TotalTokens)
	}
	return d
}

// get is the body of GET u (at most 4 MiB), nil on any failure or a
// status other than 200. The bearer key and user info go as headers and
// appear nowhere else.
func (p *Prepared) get(ctx context.Context, u string, user *url.Userinfo) []byte {
	auth := enginehttp.Auth{User: user}
	if user == nil {
		auth.Key = p.APIKey()
	}
	resp, err := enginehttp.Do(ctx, nil, enginehttp.Request{URL: u, Auth: auth, Timeout: declaredTimeout, Max: 4 << 20})
	if err != nil || resp.Status != http.StatusOK {
		return nil
	}
	return resp.Body
}

// simTiers reads the simulator's tiers.gpu / tiers.cpu capacity_tokens
// (a tier of 0 tokens is absent: null, not 0).
func simTiers(body []byte) (gpu, cpu *float64, ok bool) {
	var st struct {
		Tiers map[string]struct {
			Capacity *float64 `json:"capacity_tokens"`
		} `json:"tiers"`
	}
	if json.Unmarshal(body, &st) != nil || st.Tiers == nil {
		return nil, nil, false
	}
	read := func(k string) *float64 {
		t, found := st.Tiers[k]
		if !found || t.Capacity == nil || !(*t.Capacity > 0) || *t.Capacity > 1e15 {
			return nil
		}
		v := *t.Capacity
		return &v
	}
	gpu, cpu = read("gpu"), read("cpu")
	return gpu, cpu, gpu != nil || cpu != nil
}

// vllmGPUTokens reads vllm:cache_config_info's num_gpu_blocks and
// block_size labels from a Prometheus text body: their product, nil
// when absent or not numbers.
func vllmGPUTokens(body []byte) *float64 {
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "vllm:cache_config_info{") {
			continue
		}
		labels := promLabels(line[len("vllm:cache_config_info{"):])
		blocks, err1 := strconv.ParseFloat(labels["num_gpu_blocks"], 64)
		size, err2 := strconv.ParseFloat(labels["block_size"], 64)
		if err1 != nil || err2 != nil || !(blocks > 0) || !(size > 0) || blocks*size > 1e15 {
			return nil
		}
		t := blocks * size
		return &t
	}
	return nil
}

// promLabels reads `a="1",b="x"}` up to the closing brace.
func promLabels(s string) map[string]string {
	out := map[string]string{}
	for len(s) > 0 && s[0] != '}' {
		eq := strings.IndexByte(s, '=')
		if eq < 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			break
		}
		key := strings.TrimSpace(s[:eq])
		rest := s[eq+2:]
		var val strings.Builder
		i := 0
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] == '\\' && i+1 < len(rest) {
				i++
			}
			val.WriteByte(rest[i])
		}
		out[key] = val.String()
		if i+1 > len(rest) {
			break
		}
		s = strings.TrimLeft(rest[i+1:], ", ")
	}
	return out
}
