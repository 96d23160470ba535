package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kvbench/kvbench/bench/enginehttp"
	"github.com/kvbench/kvbench/internal/errs"
	"github.com/kvbench/kvbench/internal/secret"
)

// ResetTimeout bounds each request of a cache reset.
const ResetTimeout = 30 * time.Second

// ResetOptions say which engine's prefix cache to drop.
type ResetOptions struct {
	BaseURL  string // normalised API base (ends in /v1); the endpoints sit at its root
	APIKey   string
	UserInfo *url.Userinfo
	Timeout  time.Duration // ResetTimeout when 0
	// Client replaces the default HTTP client (tests).
	Client *http.Client
}

// ResetCache asks the engine to drop its prefix cache, trying in order
// vLLM's and the simulator's POST /reset_prefix_cache, SGLang's POST
// /flush_cache and llama.cpp's slot erase (GET /slots, then POST
// /slots/{id}?action=erase for each slot). It returns what answered
// (e.g. "POST /reset_prefix_cache"). When nothing did, the error (an
// *EngineError, exit 3) says what each engine answered and which flag
// enables its endpoint. Run calls it before the first request; a sweep
// before every cell.
func ResetCache(ctx context.Context, o ResetOptions) (string, error) {
	if o.Timeout <= 0 {
		o.Timeout = ResetTimeout
	}
	hc := o.Client
	if hc == nil {
		hc = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, DisableKeepAlives: true}}
	}
	root := strings.TrimSuffix(strings.TrimRight(o.BaseURL, "/"), "/v1")
	call := func(method, path string) (int, []byte, error) {
		resp, err := enginehttp.Do(ctx, hc, enginehttp.Request{Method: method, URL: root + path,
			Auth: enginehttp.Auth{Key: o.APIKey, User: o.UserInfo}, Timeout: o.Timeout, Max: 1 << 20})
		if err != nil {
			return 0, nil, errs.Root(err)
		}
		return resp.Status, resp.Body, nil
	}
	answer := func(status int, body []byte, err error) string {
		if err != nil {
			return redactKey(err.Error(), o.APIKey)
		}
		s := fmt.Sprintf("HTTP %d", status)
		if m := errorMessage(body); m != "" {
			s += " " + m
		}
		return redactKey(s, o.APIKey)
	}

	var tried []string
	for _, e := range []struct{ path, engine, enable string }{
		{"/reset_prefix_cache", "vLLM", "VLLM_SERVER_DEV_MODE=1"},
		{"/flush_cache", "SGLang", ""},
	} {
		status, body, err := call(http.MethodPost, e.path)
		if err == nil && status >= 200 && status < 300 {
			return "POST " + e.path, nil
		}
		t := "POST " + e.path + " (" + e.engine + "): " + answer(status, body, err)
		if e.enable != "" {
			t += ", needs " + e.enable
		}
		tried = append(tried, t)
		if err != nil && ctx.Err() != nil {
			break
		}
	}

	// llama.cpp: erase every slot.
	status, body, err := call(http.MethodGet, "/slots")
	var slots []struct {
		ID *int `json:"id"`
	}
	switch {
	case err != nil || status != http.StatusOK:
		tried = append(tried, "GET /slots (llama.cpp): "+answer(status, body, err)+", needs llama-server --slot-save-path DIR")
	case json.Unmarshal(body, &slots) != nil || len(slots) == 0:
		tried = append(tried, "GET /slots (llama.cpp): not a slot list, needs llama-server --slot-save-path DIR")
	default:
		erased := 0
		for _, sl := range slots {
			if sl.ID == nil {
				continue
			}
			path := fmt.Sprintf("/slots/%d?action=erase", *sl.ID)
			st, b, err := call(http.MethodPost, path)
			if err != nil || st < 200 || st >= 300 {
				t := "POST " + path + " (llama.cpp): " + answer(st, b, err)
				if !strings.Contains(t, "--slot-save-path") {
					t += ", needs llama-server --slot-save-path DIR"
				}
				tried = append(tried, t)
				break
			}
			erased++
		}
		if erased == len(slots) {
			return "POST /slots/{id}?action=erase", nil
		}
	}
	return "", &EngineError{Err: fmt.Errorf("--reset-cache: no engine at %s dropped its prefix cache: %s",
		secret.Strip(root), strings.Join(tried, "; "))}
}

// errorMessage is the message of an OpenAI- or llama.cpp-shaped error
// body, or its first line when it is plain text.
func errorMessage(body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && len(e.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
			return oneLineErr(fmt.Errorf("%s", obj.Message))
		}
		var s string
		if json.Unmarshal(e.Error, &s) == nil {
			return oneLineErr(fmt.Errorf("%s", s))
		}
	}
	s := strings.TrimSpace(string(body))
	if s == "" || strings.HasPrefix(s, "{") || strings.HasPrefix(s, "<") {
		return ""
	}
	if len(s) > 120 {
		s = s[:120]
	}
	return oneLineErr(fmt.Errorf("%s", s))
}
