package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/kvbench/kvbench/bench/metrics"
	"github.com/kvbench/kvbench/bench/workload"
	"github.com/kvbench/kvbench/internal/errs"
)

// engineRoot is the engine URL without its /v1: where /tokenize,
// /detokenize and /metrics live.
func (p *Prepared) engineRoot() string { return strings.TrimSuffix(p.EngineURL, "/v1") }

// Tokenize asks the engine's POST /tokenize for text's token ids without
// special tokens (vLLM and the simulator read `prompt`, llama.cpp
// `content`). An engine without the endpoint is a *workload.UnavailableError.
func (p *Prepared) Tokenize(ctx context.Context, text string) ([]uint32, error) {
	var out struct {
		Tokens []uint32 `json:"tokens"`
	}
	err := p.engineCall(ctx, "/tokenize", map[string]any{
		"model": p.RequestModel(), "prompt": text, "content": text,
		"add_special_tokens": false, "add_special": false,
	}, &out)
	if err == nil && out.Tokens == nil {
		err = &workload.UnavailableError{Err: fmt.Errorf("POST %s/tokenize answers without a token list", p.engineRoot())}
	}
	return out.Tokens, err
}

// Detokenize asks the engine's POST /detokenize for the text of ids (vLLM
// and the simulator answer `prompt`, llama.cpp `content`).
func (p *Prepared) Detokenize(ctx context.Context, ids []uint32) (string, error) {
	var out struct {
		Prompt  *string `json:"prompt"`
		Content *string `json:"content"`
	}
	if err := p.engineCall(ctx, "/detokenize", map[string]any{"model": p.RequestModel(), "tokens": ids}, &out); err != nil {
		return "", err
	}
	switch {
	case out.Prompt != nil:
		return *out.Prompt, nil
	case out.Content != nil:
		return *out.Content, nil
	}
	return "", &workload.UnavailableError{Err: fmt.Errorf("POST %s/detokenize answers without a text", p.engineRoot())}
}

// engineCall POSTs body as JSON to the engine's root path and decodes the
// answer into out. A missing endpoint is a *workload.UnavailableError.
func (p *Prepared) engineCall(ctx context.Context, path string, body, out any) error {
	b, _ := json.Marshal(body)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	url := p.engineRoot() + path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if p.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.apiKey)
	} else if p.user != nil {
		pass, _ := p.user.Password()
		req.SetBasicAuth(p.user.Username(), pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return &workload.UnavailableError{Err: fmt.Errorf("POST %s failed: %v", url, errs.Root(err))}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("POST %s: %v", url, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed:
		return &workload.UnavailableError{Err: fmt.Errorf("the engine has no %s endpoint (POST %s answered HTTP %d); this workload needs the engine's tokenizer", path, url, resp.StatusCode)}
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("POST %s answered HTTP %d", url, resp.StatusCode)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &workload.UnavailableError{Err: fmt.Errorf("POST %s: the answer is not JSON: %v", url, err)}
	}
	return nil
}

// lmcacheLookups reads the LMCache server's lookup counters from
// {--lmcache-url}/metrics; nil without --lmcache-url.
func (p *Prepared) lmcacheLookups() workload.LookupSource {
	base := p.Config.ConnURL("lmcache_url")
	if base == "" {
		return nil
	}
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	url := strings.TrimRight(base, "/") + "/metrics"
	return func(ctx context.Context) (workload.LookupTotals, error) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		vals, err := metrics.Scrape(ctx, nil, url)
		if err != nil {
			return workload.LookupTotals{}, err
		}
		return workload.LookupTotals{
			MPHit:          int64(vals["lmcache_mp_lookup_hit_tokens_total"]),
			MPRequested:    int64(vals["lmcache_mp_lookup_requested_tokens_total"]),
			BlendHit:       int64(vals["lmcache_blend_lookup_hit_tokens_total"]),
			BlendRequested: int64(vals["lmcache_blend_lookup_requested_tokens_total"]),
		}, nil
	}
}
