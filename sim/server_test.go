package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/spf13/pflag"
)

func TestStatusTokensPerGB(t *testing.T) {
	for _, tpg := range []int{10000, 6553, 1638, 1, 32767, 49932, 1 << 30} {
		r := startSim(t, func(c *Config) { c.TokensPerGB = tpg })
		code, body := get(t, r.URL(), "/status")
		if code != 200 {
			t.Fatalf("status %d", code)
		}
		var st struct {
			Meta map[string]struct {
				ModelName string `json:"model_name"`
				Layout    struct {
					CacheSizePerToken int64 `json:"cache_size_per_token"`
				} `json:"kv_cache_layout"`
				WorldSize int `json:"world_size"`
			} `json:"cache_context_meta"`
		}
		if err := json.Unmarshal(body, &st); err != nil {
			t.Fatal(err)
		}
		if len(st.Meta) != 1 {
			t.Fatalf("cache_context_meta %s", body)
		}
		for _, m := range st.Meta {
			if m.ModelName != "kvbench-sim" || m.WorldSize != 1 {
				t.Errorf("meta %+v", m)
			}
			if got := (1 << 30) / (m.Layout.CacheSizePerToken * int64(m.WorldSize)); got != int64(tpg) {
				t.Errorf("--tokens-per-gb %d: /status gives %d (cache_size_per_token %d)", tpg, got, m.Layout.CacheSizePerToken)
			}
		}
	}
}

func TestTokenize(t *testing.T) {
	r := startSim(t, nil)
	tok := func(body any) (count int, tokens []uint32, maxLen int) {
		resp := post(t, r.URL(), "/tokenize", body)
		defer resp.Body.Close()
		var out struct {
			Count       int      `json:"count"`
			Tokens      []uint32 `json:"tokens"`
			MaxModelLen int      `json:"max_model_len"`
		}
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out.Count, out.Tokens, out.MaxModelLen
	}
	// hi, tell, help: 1 each; hello: 2 (4+1 bytes); ",": 1; world: 2; "!": 1.
	n, ids, maxLen := tok(map[string]any{"model": "kvbench-sim", "prompt": "hi tell help hello, world!"})
	if n != 9 || len(ids) != 9 || maxLen != 131072 {
		t.Errorf("count %d, %d ids, max_model_len %d; want 9, 9, 131072", n, len(ids), maxLen)
	}
	// The completions endpoint reports the same count and caches by the same ids.
	res := streamCompletion(t, r.URL(), "hi tell help hello, world!", nil)
	if res.Usage.PromptTokens != 9 {
		t.Errorf("completions prompt_tokens %d, want 9", res.Usage.PromptTokens)
	}
	// Chat: the template adds 4 per message and 3 per request.
	msgs := []map[string]any{{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi tell help"}}
	n, _, _ = tok(map[string]any{"messages": msgs})
	if want := 3 + 3 + 2*messageOverhead + requestOverhead; n != want { // be brief: 1+2
		t.Errorf("chat count %d, want %d", n, want)
	}
	chatRes := readStream(t, post(t, r.URL(), "/v1/chat/completions", map[string]any{
		"messages": msgs, "stream": true, "stream_options": map[string]any{"include_usage": true}, "max_tokens": 2,
	}))
	if chatRes.Usage.PromptTokens != n {
		t.Errorf("chat prompt_tokens %d, /tokenize %d", chatRes.Usage.PromptTokens, n)
	}
}

func TestTokenizerRules(t *testing.T) {
	cases := map[string]int{
		"":                   0,
		"hi":                 1,
		"tell help hi":       3,
		"hello":              2,
		"Document 3: hi hi.": 2 + 1 + 1 + 2 + 1,
		"abcdefgh":           2,
		"abcdefghi":          3,
		"  spaced\n\tout  ":  2 + 1,
		"PREFIX_0000abcd":    2 + 1 + 2,
		"naïve":              2, // 6 bytes
		"a+b=c":              5,
	}
	for text, want := range cases {
		if got := len(tokenize(nil, text)); got != want {
			t.Errorf("%q: %d tokens, want %d", text, got, want)
		}
	}
	a := tokenize(nil, "hi tell")
	b := tokenize(nil, "hi\ntell")
	if a[0] != b[0] || a[1] != b[1] {
		t.Error("ids depend on the whitespace")
	}
	if tokenize(nil, "hi")[0] == tokenize(nil, "Hi")[0] {
		t.Error("ids ignore case")
	}
	for _, w := range replyWords {
		if len(tokenize(nil, w)) != 1 {
			t.Errorf("reply word %q is not one token", w)
		}
	}
	for _, w := range reasoningWords {
		if len(tokenize(nil, w)) != 1 {
			t.Errorf("reasoning word %q is not one token", w)
		}
	}
}

func TestMetricsMatchTheReceipts(t *testing.T) {
	r := startSim(t, nil)
	var prompt, cached, completion int
	record := func(res streamResult) {
		prompt += res.Usage.PromptTokens
		cached += res.Usage.cached(t)
		completion += res.Usage.CompletionTokens
	}
	for i := 0; i < 3; i++ {
		record(streamChat(t, r.URL(), words("hi", 100*(i+1)), nil))
		record(streamChat(t, r.URL(), words("hi", 100*(i+1)), nil))
		record(streamCompletion(t, r.URL(), ids(500*i, 77), map[string]any{"max_tokens": 9}))
	}
	if cached == 0 {
		t.Fatal("nothing was cached")
	}
	code, body := get(t, r.URL(), "/metrics")
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	value := func(name string) float64 {
		f, ok := fams[name]
		if !ok || len(f.Metric) != 1 {
			t.Fatalf("metric %s missing", name)
		}
		m := f.Metric[0]
		if l := m.GetLabel(); len(l) != 1 || l[0].GetName() != "model_name" || l[0].GetValue() != "kvbench-sim" {
			t.Errorf("%s labels %v", name, l)
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
		t.Fatalf("%s has no value", name)
		return 0
	}
	checks := []struct {
		name string
		want float64
	}{
		{"vllm:prefix_cache_queries_total", float64(prompt)},
		{"vllm:prefix_cache_hits_total", float64(cached)},
		{"vllm:prompt_tokens_total", float64(prompt)},
		{"vllm:generation_tokens_total", float64(completion)},
		{"vllm:time_to_first_token_seconds", 9},
		{"vllm:num_requests_waiting", 0},
	}
	for _, c := range checks {
		if got := value(c.name); got != c.want {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
	if u := value("vllm:kv_cache_usage_perc"); u != 0 {
		t.Errorf("kv_cache_usage_perc %v when idle, want 0", u)
	}
	value("vllm:num_requests_running")
}

func TestErrors(t *testing.T) {
	r := startSim(t, func(c *Config) {
		c.MaxModelLen = 100
		c.MaxBodyBytes = 4096
	})
	cases := []struct {
		name   string
		path   string
		body   any
		status int
	}{
		{"malformed JSON", "/v1/chat/completions", `{"messages": [`, 400},
		{"trailing garbage", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}]} x`, 400},
		{"unknown model", "/v1/chat/completions", map[string]any{"model": "gpt-nope", "messages": []map[string]any{{"role": "user", "content": "hi"}}}, 404},
		{"unknown model (completions)", "/v1/completions", map[string]any{"model": "gpt-nope", "prompt": "hi"}, 404},
		{"missing messages", "/v1/chat/completions", map[string]any{"model": "kvbench-sim"}, 400},
		{"empty messages", "/v1/chat/completions", map[string]any{"messages": []any{}}, 400},
		{"missing prompt", "/v1/completions", map[string]any{"model": "kvbench-sim"}, 400},
		{"batched prompt", "/v1/completions", map[string]any{"prompt": []string{"a", "b"}}, 400},
		{"negative token id", "/v1/completions", map[string]any{"prompt": []int{1, -2}}, 400},
		{"max_tokens 0", "/v1/completions", map[string]any{"prompt": "hi", "max_tokens": 0}, 400},
		{"prompt over max-model-len", "/v1/completions", map[string]any{"prompt": ids(1, 101), "max_tokens": 1}, 400},
		{"prompt plus max_tokens over max-model-len", "/v1/completions", map[string]any{"prompt": ids(1, 60), "max_tokens": 41}, 400},
		{"prompt at max-model-len, no max_tokens", "/v1/completions", map[string]any{"prompt": ids(1, 100)}, 400},
		// Prompt plus max_tokens would wrap past the int range: still over.
		{"max_tokens 2^63-1", "/v1/completions", map[string]any{"prompt": ids(1, 60), "max_tokens": int64(math.MaxInt64)}, 400},
		{"max_tokens 2^63-59 (the sum wraps negative)", "/v1/completions", map[string]any{"prompt": ids(1, 60), "max_tokens": int64(math.MaxInt64 - 58)}, 400},
		{"oversized body", "/v1/completions", map[string]any{"prompt": strings.Repeat("hi ", 2000)}, 413},
		{"unknown model (tokenize)", "/tokenize", map[string]any{"model": "x", "prompt": "hi"}, 404},
	}
	for _, c := range cases {
		resp := post(t, r.URL(), c.path, c.body)
		e := decodeError(t, resp)
		if resp.StatusCode != c.status || e.Code != c.status || e.Type == "" || e.Message == "" {
			t.Errorf("%s: status %d, error %+v; want %d", c.name, resp.StatusCode, e, c.status)
		}
	}
	// vLLM's wording for an over-long prompt.
	resp := post(t, r.URL(), "/v1/completions", map[string]any{"prompt": ids(1, 101), "max_tokens": 1})
	if e := decodeError(t, resp); e.Type != "BadRequestError" || !strings.Contains(e.Message, "maximum context length is 100 tokens") {
		t.Errorf("over-long prompt: %+v", e)
	}
	// A body without Content-Length is cut off at the limit, never read whole.
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(`{"prompt":"`))
		for i := 0; i < 1000; i++ {
			if _, err := pw.Write(bytes.Repeat([]byte("hi "), 1000)); err != nil {
				return // the server hung up, as it should
			}
		}
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPost, r.URL()+"/v1/completions", pr)
	chunked, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if chunked.StatusCode != 413 {
		t.Errorf("chunked oversized body: status %d", chunked.StatusCode)
	}
	chunked.Body.Close()
	pr.Close()

	// Wrong method and unknown path.
	code, body := get(t, r.URL(), "/v1/chat/completions")
	if code != 405 || !strings.Contains(string(body), `"error"`) {
		t.Errorf("GET chat: %d %s", code, body)
	}
	code, _ = get(t, r.URL(), "/nope")
	if code != 404 {
		t.Errorf("unknown path: %d", code)
	}
}

func TestModelsAndHealth(t *testing.T) {
	r := startSim(t, func(c *Config) { c.Model = "tiny" })
	code, body := get(t, r.URL(), "/v1/models")
	var out struct {
		Object string `json:"object"`
		Data   []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil || code != 200 || out.Object != "list" || len(out.Data) != 1 || out.Data[0].ID != "tiny" {
		t.Errorf("/v1/models: %d %s", code, body)
	}
	if code, _ := get(t, r.URL(), "/health"); code != 200 {
		t.Errorf("/health: %d", code)
	}
	// A request without a model gets the served one.
	res := readStream(t, post(t, r.URL(), "/v1/completions", map[string]any{"prompt": "hi", "stream": true}))
	if !res.Done || !strings.Contains(res.Events[0], `"model":"tiny"`) {
		t.Errorf("no-model request: %v", res.Events)
	}
}

func TestValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	cases := []struct {
		flag   string
		mutate func(*Config)
	}{
		{"--listen", func(c *Config) { c.Listen = "nope" }},
		{"--model", func(c *Config) { c.Model = "" }},
		{"--tokens-per-gb", func(c *Config) { c.TokensPerGB = 0 }},
		{"--tokens-per-gb", func(c *Config) { c.TokensPerGB = 50000 }},
		{"--gpu-kv-gb", func(c *Config) { c.GPUKVGB = -1 }},
		{"--cpu-kv-gb", func(c *Config) { c.CPUKVGB = -0.5 }},
		{"--block-size", func(c *Config) { c.BlockSize = 0 }},
		{"--prefill-tps", func(c *Config) { c.PrefillTPS = 0 }},
		{"--decode-tps", func(c *Config) { c.DecodeTPS = -1 }},
		{"--cpu-load-tps", func(c *Config) { c.CPULoadTPS = 0 }},
		{"--speed", func(c *Config) { c.Speed = 0 }},
		{"--max-num-seqs", func(c *Config) { c.MaxNumSeqs = 0 }},
		{"--max-waiting", func(c *Config) { c.MaxWaiting = -1 }},
		{"--base-latency", func(c *Config) { c.BaseLatency = -1 }},
		{"--tokens-per-chunk", func(c *Config) { c.TokensPerChunk = 0 }},
		{"--reasoning-tokens", func(c *Config) { c.ReasoningTokens = -1 }},
		{"--fixed-ttft", func(c *Config) { c.FixedTTFT = -1 }},
		{"--zero-latency", func(c *Config) { c.ZeroLatency = true; c.FixedITL = 1 }},
		{"--max-model-len", func(c *Config) { c.MaxModelLen = 0 }},
		{"--max-model-len", func(c *Config) { c.MaxModelLen = MaxModelLenLimit + 1 }},
		{"--max-body-bytes", func(c *Config) { c.MaxBodyBytes = 10 }},
		{"--fault-http-500", func(c *Config) { c.FaultHTTP500 = 1.5 }},
		{"--fault-midstream-error", func(c *Config) { c.FaultMidstreamError = -0.1 }},
		{"--fault-truncate", func(c *Config) { c.FaultTruncate = 2 }},
		{"--fault-malformed", func(c *Config) { c.FaultMalformed = 2 }},
		{"--fault-drop-usage", func(c *Config) { c.FaultDropUsage = 2 }},
		{"--fault-stall-rate", func(c *Config) { c.FaultStallRate = 2 }},
		{"--fault-stall", func(c *Config) { c.FaultStall = -1 }},
		{"--nondeterministic-rate", func(c *Config) { c.NondeterministicRate = 2 }},
	}
	for _, c := range cases {
		cfg := DefaultConfig()
		c.mutate(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), c.flag) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v", c.flag, err)
		}
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted an invalid config", c.flag)
		}
	}
	// The 50000 error suggests representable neighbours.
	cfg := DefaultConfig()
	cfg.TokensPerGB = 50000
	if err := cfg.Validate(); !strings.Contains(err.Error(), "49999 and 50001") {
		t.Errorf("no representable neighbours suggested: %v", err)
	}
}

func TestRegisterFlags(t *testing.T) {
	var cfg Config
	fs := pflag.NewFlagSet("sim", pflag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if cfg != DefaultConfig() {
		t.Errorf("registering did not set the defaults: %+v", cfg)
	}
	err := fs.Parse([]string{
		"--listen", "127.0.0.1:9", "--model", "m", "--tokens-per-gb", "6553", "--gpu-kv-gb", "2.5",
		"--cpu-kv-gb", "4", "--block-size", "32", "--prefill-tps", "1000", "--decode-tps", "50",
		"--cpu-load-tps", "7", "--max-num-seqs", "3", "--max-waiting", "9", "--base-latency", "1s",
		"--speed", "100", "--zero-latency", "--tokens-per-chunk", "2", "--reasoning-tokens", "5",
		"--omit-zero-cached", "--fixed-ttft", "2s", "--fixed-itl", "3ms", "--max-model-len", "4096",
		"--max-body-bytes", "2048", "--fault-seed", "11", "--fault-http-500", "0.1",
		"--fault-midstream-error", "0.2", "--fault-truncate", "0.3", "--fault-malformed", "0.4",
		"--fault-drop-usage", "0.5", "--fault-stall", "4s", "--fault-stall-rate", "0.6",
		"--nondeterministic-rate", "0.7",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Listen: "127.0.0.1:9", Model: "m", TokensPerGB: 6553, GPUKVGB: 2.5, CPUKVGB: 4, BlockSize: 32,
		PrefillTPS: 1000, DecodeTPS: 50, CPULoadTPS: 7, MaxNumSeqs: 3, MaxWaiting: 9, BaseLatency: 1e9,
		Speed: 100, ZeroLatency: true, TokensPerChunk: 2, ReasoningTokens: 5, OmitZeroCached: true,
		FixedTTFT: 2e9, FixedITL: 3e6, MaxModelLen: 4096, MaxBodyBytes: 2048, FaultSeed: 11,
		FaultHTTP500: 0.1, FaultMidstreamError: 0.2, FaultTruncate: 0.3, FaultMalformed: 0.4,
		FaultDropUsage: 0.5, FaultStall: 4e9, FaultStallRate: 0.6, NondeterministicRate: 0.7,
	}
	if cfg != want {
		t.Errorf("parsed\n%+v\nwant\n%+v", cfg, want)
	}
	d := DefaultConfig()
	if d.TokensPerGB != 10000 || d.GPUKVGB != 8 || d.CPUKVGB != 0 || d.BlockSize != 16 || d.PrefillTPS != 20000 ||
		d.DecodeTPS != 100 || d.MaxNumSeqs != 64 || d.BaseLatency != 5e6 || d.Speed != 1 || d.Model != "kvbench-sim" ||
		d.Listen != "127.0.0.1:8000" || d.MaxModelLen != 131072 || d.TokensPerChunk != 1 {
		t.Errorf("defaults differ from the contract: %+v", d)
	}
}

func TestCommand(t *testing.T) {
	cmd := NewCommand()
	if cmd.Use != "sim" {
		t.Errorf("Use %q", cmd.Use)
	}
	pr, pw := io.Pipe()
	cmd.SetOut(pw)
	cmd.SetErr(io.Discard)
	cmd.SetArgs([]string{"--listen", "127.0.0.1:0", "--zero-latency"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()

	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "kvbench sim listening on ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("first line %q", line)
	}
	if code, _ := get(t, url, "/health"); code != 200 {
		t.Errorf("/health %d", code)
	}
	cancel() // as SIGINT would
	if err := <-done; err != nil {
		t.Errorf("command returned %v", err)
	}
	if _, err := http.Get(url + "/health"); err == nil {
		t.Error("still serving after shutdown")
	}

	bad := NewCommand()
	bad.SetOut(io.Discard)
	bad.SetErr(io.Discard)
	bad.SetArgs([]string{"--speed", "0"})
	if err := bad.Execute(); err == nil || !strings.Contains(err.Error(), "--speed") {
		t.Errorf("invalid flag: %v", err)
	}
}

func TestCloseIsBoundedAndRepeatable(t *testing.T) {
	r, err := Start(testConfig(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %q", r.URL())
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestCloseCutsOffStalledStreams(t *testing.T) {
	defer func(g time.Duration) { shutdownGrace = g }(shutdownGrace)
	shutdownGrace = 50 * time.Millisecond
	r, err := Start(testConfig(func(c *Config) { c.FaultStall = time.Hour }))
	if err != nil {
		t.Fatal(err)
	}
	resp := post(t, r.URL(), "/v1/chat/completions", chat("hi", map[string]any{"max_tokens": 8}))
	defer resp.Body.Close()
	buf := make([]byte, 1)
	if _, err := resp.Body.Read(buf); err != nil { // the stream has started
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- r.Close() }()
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	// The hour-long stall was cut off: the body ends now.
	io.Copy(io.Discard, resp.Body)
}

// POST /reset_prefix_cache drops both tiers, as vLLM's dev endpoint does.
func TestResetPrefixCache(t *testing.T) {
	r := startSim(t, func(c *Config) { c.GPUKVGB, c.CPUKVGB = 0.01, 0.01 })
	text := words("hi", 300)
	streamChat(t, r.URL(), text, nil)
	if got := streamChat(t, r.URL(), text, nil).Usage.cached(t); got == 0 {
		t.Fatal("the repeat reused nothing before the reset")
	}
	resp := post(t, r.URL(), "/reset_prefix_cache", "")
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reset: HTTP %d", resp.StatusCode)
	}
	if got := streamChat(t, r.URL(), text, nil).Usage.cached(t); got != 0 {
		t.Errorf("after the reset %d tokens were cached, want 0", got)
	}
	if code, _ := get(t, r.URL(), "/reset_prefix_cache"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /reset_prefix_cache: HTTP %d, want 405", code)
	}
}

func TestParseIDList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []uint32
	}{
		{"[1,2,3]", []uint32{1, 2, 3}},
		{"[ 0 , 4294967295\n]", []uint32{0, 4294967295}},
		{"[7]", []uint32{7}},
	} {
		got, ok := parseIDList([]byte(c.in))
		if !ok || !slices.Equal(got, c.want) {
			t.Errorf("%q: %v %v", c.in, got, ok)
		}
	}
	// Everything else goes to encoding/json, which decides.
	for _, in := range []string{"[]", "[1,]", "[-1]", "[1.0]", "[1e3]", "[4294967296]", "[01]", "[1 2]", "[1]x", `["1"]`, "[1"} {
		if _, ok := parseIDList([]byte(in)); ok {
			t.Errorf("%q parsed", in)
		}
	}
	for _, in := range []string{"[-1]", "[1.5]", "[4294967296]", "[1,]"} {
		if _, err := promptIDs([]byte(in)); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
	if ids, err := promptIDs([]byte("[1e3]")); err == nil && len(ids) == 1 && ids[0] != 1000 {
		t.Errorf("[1e3]: %v", ids)
	}
}
