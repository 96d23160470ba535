package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/internal/textclean/cleantest"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/simtest"
)

func byID(r Report) map[string]Check {
	m := map[string]Check{}
	for _, c := range r.Checks {
		m[c.ID] = c
	}
	return m
}

func checkOrder(t *testing.T, r Report) {
	t.Helper()
	var ids []string
	for _, c := range r.Checks {
		ids = append(ids, c.ID)
		if c.Status != Pass && c.Status != Warn && c.Status != Fail && c.Status != Info {
			t.Errorf("%s: status %q", c.ID, c.Status)
		}
		if c.Message == "" {
			t.Errorf("%s: empty message", c.ID)
		}
		if (c.Status == Warn || c.Status == Fail) && c.Hint == "" {
			t.Errorf("%s: %s without a hint", c.ID, c.Status)
		}
		if c.Status == Pass && c.Hint != "" {
			t.Errorf("%s: a pass with a hint %q", c.ID, c.Hint)
		}
	}
	if !reflect.DeepEqual(ids, IDs) {
		t.Errorf("check ids %v, want %v", ids, IDs)
	}
}

func dump(r Report) string {
	var b strings.Builder
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "  %-13s %-4s %s | %s\n", c.ID, c.Status, c.Message, c.Hint)
	}
	return b.String()
}

func TestSimulatorAllPass(t *testing.T) {
	url := simtest.Start(t, nil)
	r := Run(context.Background(), Options{EngineURL: url, LMCacheURL: url, Timeout: 10 * time.Second})
	checkOrder(t, r)
	for _, c := range r.Checks {
		if c.Status == Fail || c.Status == Warn {
			t.Errorf("%s: %s: %s (hint: %s)", c.ID, c.Status, c.Message, c.Hint)
		}
	}
	if r.Failed() {
		t.Error("Failed() is true")
	}
	if r.Model != "kvbench-sim" || r.EngineURL != url+"/v1" {
		t.Errorf("report engine_url %q model %q", r.EngineURL, r.Model)
	}
	m := byID(r)
	for id, want := range map[string]string{
		IDModels:       `a run would use "kvbench-sim"; the engine looks like kvbench sim`,
		IDCachedTokens: "explicit 0 on a unique prompt",
		IDPrefixCache:  "an identical repeat reported",
		IDMetrics:      "vllm:prefix_cache_hits_total",
		IDLMCache:      "tokens per GB",
		IDReasoning:    "no reasoning",
		IDTokenize:     "POST /tokenize answers",
	} {
		if !strings.Contains(m[id].Message, want) {
			t.Errorf("%s message %q lacks %q", id, m[id].Message, want)
		}
	}
	for _, id := range []string{IDModels, IDStream, IDUsage, IDCachedTokens, IDPrefixCache, IDCompletions, IDMetrics, IDLMCache} {
		if m[id].Status != Pass {
			t.Errorf("%s = %s, want pass", id, m[id].Status)
		}
	}
	if t.Failed() {
		t.Log("\n" + dump(r))
	}
}

func TestSimulatorOmitZeroCachedWarns(t *testing.T) {
	url := simtest.Start(t, func(c *sim.Config) { c.OmitZeroCached = true })
	r := Run(context.Background(), Options{EngineURL: url, Timeout: 10 * time.Second})
	checkOrder(t, r)
	c := byID(r)[IDCachedTokens]
	if c.Status != Warn || !strings.Contains(c.Message, "details_absent") || !strings.Contains(c.Hint, "--omit-zero-cached") ||
		!strings.Contains(c.Hint, "--enable-prompt-tokens-details") {
		t.Errorf("cached_tokens = %+v", c)
	}
	if p := byID(r)[IDPrefixCache]; p.Status != Pass {
		t.Errorf("prefix_cache = %+v, want pass (the repeat reports its hits)", p)
	}
	if r.Failed() {
		t.Errorf("a warning is not a failure:\n%s", dump(r))
	}
}

func TestSimulatorPrefixCacheOff(t *testing.T) {
	url := simtest.Start(t, func(c *sim.Config) { c.GPUKVGB = 0 })
	r := Run(context.Background(), Options{EngineURL: url, Timeout: 10 * time.Second})
	c := byID(r)[IDPrefixCache]
	if c.Status != Warn || !strings.Contains(c.Hint, "prefix caching") && !strings.Contains(c.Hint, "--gpu-kv-gb") {
		t.Errorf("prefix_cache = %+v", c)
	}
}

func TestUnreachableFailsFast(t *testing.T) {
	url := "http://" + testutil.ClosedAddr(t)
	t0 := time.Now()
	r := Run(context.Background(), Options{EngineURL: url, Timeout: 10 * time.Second})
	if d := time.Since(t0); d > 3*time.Second {
		t.Errorf("an unreachable engine took %v", d)
	}
	checkOrder(t, r)
	m := byID(r)
	if c := m[IDModels]; c.Status != Fail || !strings.Contains(c.Message, url+"/v1/models") {
		t.Errorf("models = %+v, want a failure naming the URL", c)
	}
	for _, id := range []string{IDStream, IDUsage, IDCachedTokens, IDPrefixCache, IDCompletions, IDReasoning, IDTokenize, IDMetrics} {
		if c := m[id]; c.Status != Fail || c.Message != "skipped: engine unreachable" {
			t.Errorf("%s = %+v", id, c)
		}
	}
	if c := m[IDLMCache]; c.Status != Info {
		t.Errorf("lmcache without --lmcache-url = %+v", c)
	}
	if !r.Failed() {
		t.Error("Failed() is false")
	}
}

// fakeEngine is an OpenAI-compatible server whose reporting can be
// shaped like a given engine's.
type fakeEngine struct {
	ownedBy     string
	llamaModels bool   // add llama.cpp's ollama-style "models" list
	server      string // Server header
	usage       string // "" full, "none", "never-details", "float"
	noCache     bool   // never report cached tokens > 0
	metrics     string // body of /metrics; "" is 404
	wantKey     string // non-empty: 401 without this bearer key
	noTokenIDs  bool   // /v1/completions refuses token-id prompts
	template    int    // tokens of a chat template start cached even on a new prompt
	lie         string // "whole": a repeat reports the whole prompt cached; "over": the half-shared prompt reports 79 of 80
	modelID     string // the id /v1/models lists, as the text of a JSON string ("" is tiny)

	mu      sync.Mutex
	seen    map[string]bool
	authLog map[string][]string
	srv     *httptest.Server
}

func (f *fakeEngine) start(t *testing.T) string {
	f.seen = map[string]bool{}
	f.authLog = map[string][]string{}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f.srv.URL
}

func (f *fakeEngine) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.authLog[r.URL.Path] = append(f.authLog[r.URL.Path], r.Header.Get("Authorization"))
	f.mu.Unlock()
	if f.server != "" {
		w.Header().Set("Server", f.server)
	}
	if f.wantKey != "" && r.URL.Path != "/metrics" && r.Header.Get("Authorization") != "Bearer "+f.wantKey {
		w.WriteHeader(http.StatusUnauthorized)
		// A careless engine that echoes what it was sent.
		fmt.Fprintf(w, `{"error":{"message":"bad key %q","type":"auth"}}`, r.Header.Get("Authorization"))
		return
	}
	switch r.URL.Path {
	case "/v1/models":
		extra := ""
		if f.llamaModels {
			extra = `,"models":[{"name":"tiny","model":"tiny"}]`
		}
		id := f.modelID
		if id == "" {
			id = "tiny"
		}
		fmt.Fprintf(w, `{"object":"list","data":[{"id":"%s","object":"model","owned_by":%q}]%s}`, id, f.ownedBy, extra)
	case "/metrics":
		if f.metrics == "" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, f.metrics)
	case "/v1/chat/completions", "/v1/completions":
		f.generate(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeEngine) generate(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	json.NewDecoder(r.Body).Decode(&body)
	if _, ids := body["prompt"].([]any); ids && f.noTokenIDs {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"prompt must be a string","type":"invalid_request_error"}}`)
		return
	}
	key := fmt.Sprint(body["messages"], body["prompt"])
	f.mu.Lock()
	warm := f.seen[key]
	f.seen[key] = true
	f.mu.Unlock()
	cached := f.template
	if warm && !f.noCache {
		cached = 64
	}
	switch {
	case f.lie == "whole" && warm:
		cached = 80
	case f.lie == "over" && strings.Contains(key, "Second half replaced"):
		cached = 79
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"text\":\"ok\"}]}\n\n")
	fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n")
	details := fmt.Sprintf(`,"prompt_tokens_details":{"cached_tokens":%d}`, cached)
	if f.usage == "never-details" {
		details = ""
	}
	switch f.usage {
	case "none":
	case "float":
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":80.0,\"completion_tokens\":1,\"total_tokens\":81}}\n\n")
	default:
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":80,\"completion_tokens\":1,\"total_tokens\":81%s}}\n\n", details)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func TestSimulatorReasoning(t *testing.T) {
	url := simtest.Start(t, func(c *sim.Config) { c.ReasoningTokens = 3 })
	r := Run(context.Background(), Options{EngineURL: url, Timeout: 10 * time.Second})
	c := byID(r)[IDReasoning]
	if c.Status != Info || !strings.Contains(c.Message, "delta.reasoning_content") || !strings.Contains(c.Hint, "enable_thinking") {
		t.Errorf("reasoning = %+v", c)
	}
	if r.Failed() {
		t.Errorf("reasoning fails nothing:\n%s", dump(r))
	}
}

func TestTemplatePrefixCachedOnAUniquePrompt(t *testing.T) {
	f := &fakeEngine{llamaModels: true, template: 8}
	r := Run(context.Background(), Options{EngineURL: f.start(t), Timeout: 5 * time.Second})
	c := byID(r)[IDCachedTokens]
	if c.Status != Warn || !strings.Contains(c.Message, "8 of 80") || !strings.Contains(c.Hint, "--endpoint completions") {
		t.Errorf("cached_tokens = %+v", c)
	}
}

func TestEngineWithoutUsage(t *testing.T) {
	f := &fakeEngine{ownedBy: "someone", usage: "none"}
	r := Run(context.Background(), Options{EngineURL: f.start(t), Timeout: 5 * time.Second})
	checkOrder(t, r)
	m := byID(r)
	if c := m[IDUsage]; c.Status != Fail || !strings.Contains(c.Message, "no usage") || !strings.Contains(c.Hint, "include_usage") {
		t.Errorf("usage = %+v", c)
	}
	if c := m[IDStream]; c.Status != Pass {
		t.Errorf("stream = %+v", c)
	}
	if c := m[IDCachedTokens]; c.Status != Fail {
		t.Errorf("cached_tokens without usage = %+v", c)
	}
	if !r.Failed() {
		t.Error("Failed() is false")
	}
}

func TestUsageWithFloatCounts(t *testing.T) {
	f := &fakeEngine{usage: "float"}
	r := Run(context.Background(), Options{EngineURL: f.start(t), Timeout: 5 * time.Second})
	if c := byID(r)[IDUsage]; c.Status != Fail || !strings.Contains(c.Message, "not JSON integers") {
		t.Errorf("usage = %+v", c)
	}
}

func TestEngineSpecificHints(t *testing.T) {
	cases := []struct {
		name   string
		f      *fakeEngine
		id     string
		status string
		hint   string
	}{
		{"vllm no details", &fakeEngine{ownedBy: "vllm", usage: "never-details"}, IDCachedTokens, Warn, "start vLLM with --enable-prompt-tokens-details"},
		{"sglang no details", &fakeEngine{ownedBy: "sglang", usage: "never-details"}, IDCachedTokens, Warn, "--enable-cache-report"},
		{"generic no details", &fakeEngine{ownedBy: "acme", usage: "never-details"}, IDCachedTokens, Warn, "on vLLM start with --enable-prompt-tokens-details, on SGLang with --enable-cache-report"},
		{"vllm prefix off", &fakeEngine{ownedBy: "vllm", noCache: true}, IDPrefixCache, Warn, "--enable-prefix-caching"},
		{"llama.cpp by models list", &fakeEngine{llamaModels: true, noCache: true}, IDPrefixCache, Warn, "--cache-reuse"},
		{"llama.cpp by header", &fakeEngine{server: "llama.cpp", noCache: true}, IDPrefixCache, Warn, "--cache-reuse"},
		{"sglang by metric names", &fakeEngine{noCache: true, metrics: "sglang:prompt_tokens_total 10\nsglang:cached_tokens_total 0\n"}, IDPrefixCache, Warn, "--disable-radix-cache"},
		{"llama.cpp without --metrics", &fakeEngine{llamaModels: true}, IDMetrics, Warn, "--metrics"},
		{"no cache counters", &fakeEngine{ownedBy: "acme", metrics: "process_cpu_seconds_total 3\n"}, IDMetrics, Warn, "known cache counters"},
		{"token ids refused", &fakeEngine{noTokenIDs: true}, IDCompletions, Warn, "token ids"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Run(context.Background(), Options{EngineURL: tc.f.start(t), Timeout: 5 * time.Second})
			checkOrder(t, r)
			c := byID(r)[tc.id]
			if c.Status != tc.status || !strings.Contains(c.Hint, tc.hint) {
				t.Errorf("%s = %+v\nwant %s with hint containing %q", tc.id, c, tc.status, tc.hint)
			}
		})
	}
}

func TestPrefixCacheFromMetricsWhenRepliesAreSilent(t *testing.T) {
	f := &fakeEngine{ownedBy: "vllm", usage: "never-details"}
	var mu sync.Mutex
	hits := 0
	f.metrics = "" // set per request below
	url := f.start(t)
	// Count hits the way vLLM does: the repeat's tokens.
	f.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			mu.Lock()
			fmt.Fprintf(w, "vllm:prefix_cache_queries_total %d\nvllm:prefix_cache_hits_total %d\n", 1000+hits, hits)
			mu.Unlock()
			return
		}
		if r.URL.Path == "/v1/chat/completions" {
			mu.Lock()
			hits += 64
			mu.Unlock()
		}
		f.serve(w, r)
	})
	r := Run(context.Background(), Options{EngineURL: url, Timeout: 5 * time.Second})
	if c := byID(r)[IDPrefixCache]; c.Status != Pass || !strings.Contains(c.Message, "vllm:prefix_cache_hits_total grew by 64") {
		t.Errorf("prefix_cache = %+v", c)
	}
	if c := byID(r)[IDCachedTokens]; c.Status != Warn {
		t.Errorf("cached_tokens = %+v", c)
	}
}

func TestAPIKeyNeverInReport(t *testing.T) {
	const key = "sk-do-not-print-4242"
	f := &fakeEngine{ownedBy: "vllm", wantKey: key, metrics: "vllm:prefix_cache_queries_total 1\nvllm:prefix_cache_hits_total 0\n"}
	url := f.start(t)

	// Without the key: 401s, with the flag to pass in the hint, and the
	// key the engine echoes back is not in the report.
	r := Run(context.Background(), Options{EngineURL: url, Timeout: 5 * time.Second})
	if c := byID(r)[IDModels]; c.Status != Fail || !strings.Contains(c.Hint, "--api-key-env") {
		t.Errorf("models without a key = %+v", c)
	}

	// A wrong key that the engine echoes in its error body.
	wrong := "sk-wrong-key-777"
	r = Run(context.Background(), Options{EngineURL: url, APIKey: wrong, Timeout: 5 * time.Second})
	b, _ := json.Marshal(r)
	if bytes.Contains(b, []byte(wrong)) {
		t.Errorf("the report shows the key: %s", b)
	}

	r = Run(context.Background(), Options{EngineURL: url, APIKey: key, Timeout: 5 * time.Second})
	b, _ = json.Marshal(r)
	if bytes.Contains(b, []byte(key)) {
		t.Errorf("the report shows the key: %s", b)
	}
	if r.Failed() {
		t.Errorf("with the key nothing should fail:\n%s", dump(r))
	}

	// The key goes to the engine's own /metrics, never to another host.
	other := &fakeEngine{metrics: "vllm:prefix_cache_queries_total 1\nvllm:prefix_cache_hits_total 0\n"}
	otherURL := other.start(t)
	Run(context.Background(), Options{EngineURL: url, APIKey: key, MetricsURL: strings.Replace(otherURL, "127.0.0.1", "localhost", 1) + "/metrics", Timeout: 5 * time.Second})
	other.mu.Lock()
	defer other.mu.Unlock()
	for _, a := range other.authLog["/metrics"] {
		if a != "" {
			t.Errorf("the key was sent to another host's metrics: %q", a)
		}
	}
	if len(other.authLog["/metrics"]) == 0 {
		t.Error("the --metrics-url endpoint was never scraped")
	}
}

func TestExplicitMetricsURLFailureFails(t *testing.T) {
	url := simtest.Start(t, nil)
	r := Run(context.Background(), Options{EngineURL: url, MetricsURL: "http://" + testutil.ClosedAddr(t) + "/metrics", Timeout: 5 * time.Second})
	if c := byID(r)[IDMetrics]; c.Status != Fail || !strings.Contains(c.Hint, "--metrics-url") {
		t.Errorf("metrics = %+v", c)
	}
}

func TestLMCacheModelMissing(t *testing.T) {
	url := simtest.Start(t, nil)
	r := Run(context.Background(), Options{EngineURL: url, LMCacheURL: url, Model: "other-model", Timeout: 5 * time.Second})
	m := byID(r)
	if c := m[IDLMCache]; c.Status != Fail || !strings.Contains(c.Message, "kvbench-sim") {
		t.Errorf("lmcache = %+v, want a failure listing the available model", c)
	}
	if c := m[IDModels]; c.Status != Warn {
		t.Errorf("models with an unlisted --model = %+v", c)
	}
}

func TestReportJSONKeys(t *testing.T) {
	url := simtest.Start(t, nil)
	r := Run(context.Background(), Options{EngineURL: url, Timeout: 5 * time.Second})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if got := testutil.ObjectKeys(t, b, ""); !reflect.DeepEqual(got, []string{"engine_url", "model", "checks"}) {
		t.Errorf("report keys %v", got)
	}
	var raw struct {
		Checks []json.RawMessage `json:"checks"`
	}
	json.Unmarshal(b, &raw)
	if len(raw.Checks) != len(IDs) {
		t.Fatalf("%d checks", len(raw.Checks))
	}
	for _, c := range raw.Checks {
		if got := testutil.ObjectKeys(t, c, ""); !reflect.DeepEqual(got, []string{"id", "status", "message", "hint"}) {
			t.Errorf("check keys %v in %s", got, c)
		}
	}
}

// cached_tokens that no prefix cache can produce are warnings with a hint:
// 0 on an identical repeat, the whole prompt, more than the shared half.
func TestCachedTokensThatLie(t *testing.T) {
	for _, c := range []struct {
		name string
		f    *fakeEngine
		want string
	}{
		{"zero on repeat", &fakeEngine{noCache: true}, "an identical repeat reported cached_tokens 0"},
		{"whole prompt", &fakeEngine{lie: "whole"}, "all 80 prompt tokens cached"},
		{"more than shared", &fakeEngine{lie: "over"}, "sharing only its first half reported 79 of 80"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Run(context.Background(), Options{EngineURL: c.f.start(t), Timeout: 5 * time.Second})
			ck := byID(r)[IDCachedTokens]
			if ck.Status != Warn || !strings.Contains(ck.Message, c.want) || !strings.Contains(ck.Hint, "disaggregated") {
				t.Errorf("cached_tokens = %+v, want a warning with %q", ck, c.want)
			}
		})
	}
	// An honest engine passes.
	r := Run(context.Background(), Options{EngineURL: (&fakeEngine{}).start(t), Timeout: 5 * time.Second})
	if ck := byID(r)[IDCachedTokens]; ck.Status != Pass {
		t.Errorf("honest engine: %+v", ck)
	}
}

// An engine listing a model id full of terminal controls (and a --model
// holding some) gets a report that shows them cleaned, in its header and
// its messages, while the requests still name the id as listed.
func TestHostileModelIDIsCleanedInTheReport(t *testing.T) {
	f := &fakeEngine{modelID: cleantest.JSON}
	url := f.start(t)
	r := Run(context.Background(), Options{EngineURL: url, Timeout: 10 * time.Second})
	checkOrder(t, r)
	cleantest.Check(t, "report model", r.Model)
	// The messages quote the id (escaped or cleaned), never raw.
	m := byID(r)[IDModels].Message
	cleantest.Clean(t, "models check", m)
	if !strings.Contains(m, `"evil`) {
		t.Errorf("models check %q: want the id quoted", m)
	}
	b, _ := json.Marshal(r)
	var v any
	json.Unmarshal(b, &v)
	cleantest.Clean(t, "report", fmt.Sprint(v))
	if c := byID(r)[IDStream]; c.Status != Pass {
		t.Errorf("stream check %s: %s: the requests must name the model as listed", c.Status, c.Message)
	}

	r = Run(context.Background(), Options{EngineURL: url, Model: cleantest.Text, Timeout: 10 * time.Second})
	cleantest.Check(t, "report model from --model", r.Model)
	b, _ = json.Marshal(r)
	json.Unmarshal(b, &v)
	cleantest.Clean(t, "report", fmt.Sprint(v))
}
