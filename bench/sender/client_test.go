package sender

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
)

// captured is what a test server saw of one request.
type captured struct {
	path   string
	header http.Header
	body   []byte
}

// streamServer replies to every request with stream and records requests.
func streamServer(t *testing.T, stream string) (*httptest.Server, func() []captured) {
	t.Helper()
	var mu sync.Mutex
	var got []captured
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, captured{r.URL.Path, r.Header.Clone(), b})
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, stream)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []captured {
		mu.Lock()
		defer mu.Unlock()
		return append([]captured(nil), got...)
	}
}

func newClient(t *testing.T, srv *httptest.Server, opts Options) *Client {
	t.Helper()
	base, err := NormalizeURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	opts.BaseURL = base
	if opts.Model == "" {
		opts.Model = "m"
	}
	c := New(opts)
	t.Cleanup(c.Close)
	return c
}

func TestRequestBody(t *testing.T) {
	seed := int64(42)
	tricky := "say \"hi\"\n\ttab \\ back \x01 ctrl é 日本 \u2028 </script> & \xff end"
	cases := []struct {
		name string
		opts Options
		req  Request
		path string
		keys []string
		want string // the body, as JSON, compared after decoding
	}{
		{
			name: "chat",
			opts: Options{Model: "served-alias"},
			req:  Request{Messages: []Message{{"system", "be brief"}, {"user", tricky}}, MaxTokens: 64},
			path: "/v1/chat/completions",
			keys: []string{"model", "messages", "max_tokens", "temperature", "stream", "stream_options"},
			want: `{"model":"served-alias","messages":[{"role":"system","content":"be brief"},{"role":"user","content":` +
				jsonString(strings.ReplaceAll(tricky, "\xff", "\uFFFD")) + `}],"max_tokens":64,"temperature":0,"stream":true,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "completions text, ignore_eos, seed",
			opts: Options{Model: "m", IgnoreEOS: true},
			req:  Request{Endpoint: Completions, Prompt: "Once upon", MaxTokens: 8, Temperature: 0.7, Seed: &seed},
			path: "/v1/completions",
			keys: []string{"model", "prompt", "max_tokens", "temperature", "stream", "stream_options", "ignore_eos", "seed"},
			want: `{"model":"m","prompt":"Once upon","max_tokens":8,"temperature":0.7,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true,"seed":42}`,
		},
		{
			name: "completions token ids, default endpoint",
			opts: Options{Model: "m", Endpoint: Completions},
			req:  Request{PromptIDs: []uint32{1, 2, 4294967295}, Prompt: "ignored", MaxTokens: 1},
			path: "/v1/completions",
			keys: []string{"model", "prompt", "max_tokens", "temperature", "stream", "stream_options"},
			want: `{"model":"m","prompt":[1,2,4294967295],"max_tokens":1,"temperature":0,"stream":true,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "extra bodies merged",
			opts: Options{Model: "m", ExtraBody: map[string]any{
				"chat_template_kwargs": map[string]any{"enable_thinking": false}, "top_p": 0.9, "max_tokens": 5,
			}},
			req:  Request{Messages: []Message{{"user", "x"}}, MaxTokens: 64, ExtraBody: map[string]any{"top_p": 0.5, "priority": 1}},
			path: "/v1/chat/completions",
			keys: []string{"model", "messages", "max_tokens", "temperature", "stream", "stream_options", "chat_template_kwargs", "priority", "top_p"},
			want: `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":5,"temperature":0,"stream":true,"stream_options":{"include_usage":true},"chat_template_kwargs":{"enable_thinking":false},"priority":1,"top_p":0.5}`,
		},
		{
			name: "no max_tokens when unset",
			opts: Options{Model: "m"},
			req:  Request{Messages: []Message{}},
			path: "/v1/chat/completions",
			keys: []string{"model", "messages", "temperature", "stream", "stream_options"},
			want: `{"model":"m","messages":[],"temperature":0,"stream":true,"stream_options":{"include_usage":true}}`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, got := streamServer(t, simple)
			cl := newClient(t, srv, c.opts)
			r := cl.Do(context.Background(), &c.req)
			if !r.Successful {
				t.Fatalf("request failed: %v %v", errCode(r), r.ErrorDetail)
			}
			reqs := got()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			g := reqs[0]
			if g.path != c.path {
				t.Errorf("path %s, want %s", g.path, c.path)
			}
			if !json.Valid(g.body) {
				t.Fatalf("invalid JSON body: %s", g.body)
			}
			if keys := testutil.ObjectKeys(t, g.body, ""); strings.Join(keys, ",") != strings.Join(c.keys, ",") {
				t.Errorf("keys %v, want %v", keys, c.keys)
			}
			var gotV, wantV any
			json.Unmarshal(g.body, &gotV)
			if err := json.Unmarshal([]byte(c.want), &wantV); err != nil {
				t.Fatal(err)
			}
			if a, b := mustJSON(gotV), mustJSON(wantV); a != b {
				t.Errorf("body\n got %s\nwant %s", a, b)
			}
			if ct := g.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("content type %q", ct)
			}
			if _, ok := g.header["Authorization"]; ok {
				t.Errorf("Authorization sent without a key")
			}
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestInvalidRequest(t *testing.T) {
	srv, got := streamServer(t, simple)
	c := newClient(t, srv, Options{})
	nan := 0.0
	nan = nan / nan
	for name, req := range map[string]*Request{
		"NaN temperature":   {Temperature: nan},
		"unknown endpoint":  {Endpoint: "embeddings"},
		"unencodable extra": {ExtraBody: map[string]any{"f": func() {}}},
	} {
		r := c.Do(context.Background(), req)
		if errCode(r) != ErrInvalidRequest || r.Successful {
			t.Errorf("%s: %q", name, errCode(r))
		}
	}
	if n := len(got()); n != 0 {
		t.Errorf("%d invalid requests reached the server", n)
	}
	if r := c.Do(context.Background(), nil); r.Error == nil && !r.Successful {
		t.Errorf("nil request: %+v", r)
	}
}

const secret = "sk-test-7c1d2e3f4a5b"

func TestAPIKey(t *testing.T) {
	srv, got := streamServer(t, simple)
	c := newClient(t, srv, Options{APIKey: secret})
	if r := c.Do(context.Background(), &Request{}); !r.Successful {
		t.Fatalf("%v", r.ErrorDetail)
	}
	c.Models(context.Background()) // only its header matters here
	for _, g := range got() {
		if h := g.header.Get("Authorization"); h != "Bearer "+secret {
			t.Errorf("%s: Authorization %q", g.path, h)
		}
	}
}

// authServer refuses every request with 401 and echoes the key it got.
func authServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"invalid key %q","type":"invalid_request_error","code":"invalid_api_key"}}`,
			strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestUnauthorized(t *testing.T) {
	srv := authServer(t)
	for _, key := range []string{secret, ""} {
		c := newClient(t, srv, Options{APIKey: key})
		r := c.Do(context.Background(), &Request{Messages: []Message{{"user", "hi"}}})
		if errCode(r) != "http_401" || r.HTTPStatus != 401 || r.Successful {
			t.Fatalf("key %q: %q status %d", key, errCode(r), r.HTTPStatus)
		}
		if !strings.Contains(*r.ErrorDetail, "--api-key-env NAME") || !strings.Contains(*r.ErrorDetail, "invalid_api_key") {
			t.Errorf("detail %q", *r.ErrorDetail)
		}
		line, _ := json.Marshal(r)
		_, err := c.Models(context.Background())
		if err == nil || !strings.Contains(err.Error(), "--api-key-env NAME") || !strings.Contains(err.Error(), srv.URL+"/v1/models") {
			t.Errorf("models error %v", err)
		}
		if key != "" {
			for what, text := range map[string]string{"result": string(line), "detail": *r.ErrorDetail, "models": err.Error()} {
				if strings.Contains(text, key) {
					t.Errorf("the key leaks into the %s: %s", what, text)
				}
			}
		}
	}
}

func TestHTTPErrors(t *testing.T) {
	cases := []struct {
		status int
		body   string
		want   []string
	}{
		{503, `{"error":{"message":"Engine overloaded, try later","type":"ServiceUnavailable","code":503}}`,
			[]string{"Engine overloaded, try later", "type: ServiceUnavailable", "code: 503"}},
		{400, `{"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}}`,
			[]string{"exceeds the available context size", "exceed_context_size_error"}},
		{404, `{"object":"error","message":"The model x does not exist.","type":"NotFoundError","param":null,"code":404}`,
			[]string{"The model x does not exist.", "NotFoundError"}},
		{422, `{"detail":[{"loc":["body","messages"],"msg":"field required"}]}`, []string{"field required"}},
		{500, "Internal Server Error\nstack trace line 1\nline 2", []string{"Internal Server Error stack trace line 1 line 2"}},
		{502, "", []string{"HTTP 502 Bad Gateway"}},
		{500, `{"error":{"message":"` + strings.Repeat("long ", 200) + `"}}`, []string{"long long", "..."}},
	}
	for _, c := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(c.status)
			io.WriteString(w, c.body)
		}))
		cl := newClient(t, srv, Options{})
		r := cl.Do(context.Background(), &Request{})
		srv.Close()
		if errCode(r) != fmt.Sprintf("http_%d", c.status) || r.HTTPStatus != c.status || r.Complete || r.Successful || reason(r) != ReasonError {
			t.Errorf("%d: %q status %d", c.status, errCode(r), r.HTTPStatus)
			continue
		}
		d := *r.ErrorDetail
		for _, w := range c.want {
			if !strings.Contains(d, w) {
				t.Errorf("%d: detail %q lacks %q", c.status, d, w)
			}
		}
		if strings.ContainsAny(d, "\n\r") || len(d) > maxDetailLen+3 {
			t.Errorf("%d: detail not one short line: %q", c.status, d)
		}
	}
}

// stallServer sends the headers and what first writes, flushes, then holds
// the stream open until the client goes away or the test ends.
func stallServer(t *testing.T, first string, tick time.Duration) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, first)
		w.(http.Flusher).Flush()
		var ping <-chan time.Time
		if tick > 0 {
			tk := time.NewTicker(tick)
			defer tk.Stop()
			ping = tk.C
		}
		for {
			select {
			case <-release:
				return
			case <-r.Context().Done():
				return
			case <-ping:
				io.WriteString(w, ": ping\n\n")
				w.(http.Flusher).Flush()
			}
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	return srv
}

func TestIdleTimeout(t *testing.T) {
	srv := stallServer(t, roleChunk+chatChunk("a"), 0)
	c := newClient(t, srv, Options{IdleTimeout: 100 * time.Millisecond, RequestTimeout: 20 * time.Second})
	start := time.Now()
	r := c.Do(context.Background(), &Request{})
	took := time.Since(start)
	if errCode(r) != ErrIdleTimeout || r.Complete || reason(r) != ReasonError {
		t.Fatalf("%q %v", errCode(r), r.ErrorDetail)
	}
	if took < 100*time.Millisecond || took > 5*time.Second {
		t.Errorf("idle timeout after %v", took)
	}
	if r.Chunks != 1 || r.TTFT == nil || r.HTTPStatus != 200 {
		t.Errorf("what arrived before the stall is kept: chunks %d ttft %v", r.Chunks, r.TTFT)
	}
	if !strings.Contains(*r.ErrorDetail, "100ms") {
		t.Errorf("detail %q", *r.ErrorDetail)
	}
}

func TestKeepAlivesAreNotIdle(t *testing.T) {
	// Keep-alive comments every 20ms keep a 1s idle timer from firing
	// through a 3s stream that carries no event; the request timeout ends
	// the stream instead. The idle timeout is fifty keep-alive periods: on
	// a loaded machine the server process itself is descheduled for
	// hundreds of milliseconds between two pings (220ms seen under -race),
	// so a timeout of five periods fired although every ping was read. It
	// is still a third of the stream, so a timer that only comments did not
	// reset would fire long before the request timeout.
	//
	// The test's premise is that this process runs: when the machine
	// stops it for half an idle period or more (seen at load 14 under
	// -race), no read can happen and an idle timeout says nothing about
	// the client. A stall watch measures that; an attempt under such a
	// stall is run again (at most three times), an idle timeout without
	// one fails at once.
	const (
		keepAlive = 20 * time.Millisecond
		idle      = time.Second
		length    = 3 * time.Second
	)
	for attempt := 1; ; attempt++ {
		srv := stallServer(t, roleChunk, keepAlive)
		c := newClient(t, srv, Options{IdleTimeout: idle, RequestTimeout: length})
		stalled := watchStalls(t)
		start := time.Now()
		r := c.Do(context.Background(), &Request{})
		worst := stalled()
		if errCode(r) == ErrIdleTimeout && worst >= idle/2 && attempt < 3 {
			t.Logf("attempt %d: this process was stopped for %v; the idle timeout is not the client's", attempt, worst)
			continue
		}
		if errCode(r) != ErrTimeout {
			detail := ""
			if r.ErrorDetail != nil {
				detail = *r.ErrorDetail
			}
			t.Fatalf("%q %q (longest stall of this process %v)", errCode(r), detail, worst)
		}
		if took := time.Since(start); took < length || took > length+30*time.Second {
			t.Errorf("timeout after %v", took)
		}
		return
	}
}

// watchStalls ticks every 5ms until the returned func is called, which
// gives the longest gap between two ticks beyond the period: how long
// this process could not run.
func watchStalls(t *testing.T) func() time.Duration {
	t.Helper()
	const period = 5 * time.Millisecond
	done := make(chan struct{})
	worst := make(chan time.Duration, 1)
	go func() {
		var max time.Duration
		last := time.Now()
		tk := time.NewTicker(period)
		defer tk.Stop()
		for {
			select {
			case <-done:
				worst <- max
				return
			case <-tk.C:
				now := time.Now()
				if gap := now.Sub(last) - period; gap > max {
					max = gap
				}
				last = now
			}
		}
	}()
	var once sync.Once
	stop := func() time.Duration {
		var w time.Duration
		once.Do(func() { close(done); w = <-worst })
		return w
	}
	t.Cleanup(func() { stop() })
	return stop
}

func TestTimeoutBeforeHeaders(t *testing.T) {
	// A queued request (no headers yet) is bound by the request timeout
	// only, not by the idle timeout.
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	c := newClient(t, srv, Options{IdleTimeout: 50 * time.Millisecond, RequestTimeout: 300 * time.Millisecond})
	r := c.Do(context.Background(), &Request{})
	if errCode(r) != ErrTimeout || r.HTTPStatus != 0 {
		t.Fatalf("%q %v status %d", errCode(r), r.ErrorDetail, r.HTTPStatus)
	}
	if r.RequestLatency < 0.3 {
		t.Errorf("latency %v", r.RequestLatency)
	}
}

func TestCanceled(t *testing.T) {
	sent := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, roleChunk+chatChunk("a"))
		w.(http.Flusher).Flush()
		sent <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	c := newClient(t, srv, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-sent; cancel() }()
	r := c.Do(ctx, &Request{})
	if errCode(r) != ErrCanceled {
		t.Fatalf("%q %v", errCode(r), r.ErrorDetail)
	}
	// Already canceled before sending.
	if r := c.Do(ctx, &Request{}); errCode(r) != ErrCanceled {
		t.Errorf("pre-canceled: %q", errCode(r))
	}
	// The caller's deadline is a timeout.
	dctx, dcancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer dcancel()
	if r := c.Do(dctx, &Request{}); errCode(r) != ErrTimeout {
		t.Errorf("caller deadline: %q", errCode(r))
	}
}

func TestConnectError(t *testing.T) {
	addr := testutil.ClosedAddr(t)
	base, _ := NormalizeURL(addr)
	c := New(Options{BaseURL: base, Model: "m", APIKey: secret})
	defer c.Close()
	r := c.Do(context.Background(), &Request{})
	if errCode(r) != ErrConnect || r.HTTPStatus != 0 || r.Complete || reason(r) != ReasonError {
		t.Fatalf("%q %v", errCode(r), r.ErrorDetail)
	}
	if d := *r.ErrorDetail; !strings.Contains(d, "http://"+addr+"/v1/chat/completions") || strings.Contains(d, secret) {
		t.Errorf("detail %q", d)
	}
	if _, err := c.Models(context.Background()); err == nil || !strings.Contains(err.Error(), "http://"+addr+"/v1/models") {
		t.Errorf("models: %v", err)
	}
}

func TestNotAnEventStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","choices":[{"message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":1}}`)
	}))
	t.Cleanup(srv.Close)
	r := newClient(t, srv, Options{}).Do(context.Background(), &Request{})
	if errCode(r) != ErrIncomplete || !strings.Contains(*r.ErrorDetail, "application/json") {
		t.Errorf("%q %v", errCode(r), r.ErrorDetail)
	}
}

func TestDoFixtures(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/streams/*.sse")
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		srv, _ := streamServer(t, string(raw))
		r := newClient(t, srv, Options{}).Do(context.Background(), &Request{ID: filepath.Base(f), KeepText: true})
		want := fixtures[filepath.Base(f)]
		checkFixture(t, r, want, string(raw))
		if r.HTTPStatus != 200 || r.RequestID != filepath.Base(f) {
			t.Errorf("%s: status %d id %q", f, r.HTTPStatus, r.RequestID)
		}
	}
}

func TestConnectionReuse(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, simple)
		// The end of the chunked body comes a moment after [DONE], as
		// from a real engine: the client has to read it to keep the
		// connection.
		w.(http.Flusher).Flush()
		time.Sleep(2 * time.Millisecond)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c := newClient(t, srv, Options{})
	for range 20 {
		if r := c.Do(context.Background(), &Request{Messages: []Message{{"user", "hi"}}}); !r.Successful {
			t.Fatalf("%v", r.ErrorDetail)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 20 sequential requests, want 1", n)
	}
}

func TestConcurrentDo(t *testing.T) {
	// Each reply echoes its prompt: a pooled buffer handed to two requests
	// at once would show up as a mismatch.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []Message `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Messages) != 1 {
			w.WriteHeader(400)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, vllmStream(10, 0, body.Messages[0].Content))
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv, Options{})
	var wg sync.WaitGroup
	errs := make(chan string, 200)
	for i := range 200 {
		wg.Go(func() {
			prompt := fmt.Sprintf("prompt %d %s", i, strings.Repeat("x", i*37))
			r := c.Do(context.Background(), &Request{ID: itoa(i), Messages: []Message{{"user", prompt}}, KeepText: true})
			if !r.Successful || r.Text != prompt || r.RequestID != itoa(i) {
				errs <- fmt.Sprintf("%d: successful %v text %.20q", i, r.Successful, r.Text)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestModels(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			io.WriteString(w, `{"models":[{"name":"zzz","model":"zzz"}],"object":"list","data":[{"id":"tiny-llama","object":"model"},{"id":"second","object":"model"}]}`)
		case "/empty/v1/models":
			io.WriteString(w, `{"object":"list","data":[]}`)
		case "/html/v1/models":
			io.WriteString(w, `<html>`)
		default:
			w.WriteHeader(404)
			io.WriteString(w, `{"error":{"message":"no such route","type":"not_found"}}`)
		}
	}))
	t.Cleanup(srv.Close)
	client := func(path string) *Client {
		base, _ := NormalizeURL(srv.URL + path)
		c := New(Options{BaseURL: base})
		t.Cleanup(c.Close)
		return c
	}
	ids, err := client("").Models(context.Background())
	if err != nil || strings.Join(ids, ",") != "tiny-llama,second" {
		t.Errorf("ids %v err %v", ids, err)
	}
	for path, want := range map[string]string{
		"/empty": "lists no models",
		"/html":  "not an OpenAI model list",
		"/nope":  "HTTP 404",
	} {
		_, err := client(path).Models(context.Background())
		if err == nil || !strings.Contains(err.Error(), srv.URL+path+"/v1/models") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", path, err)
		}
	}
}

func TestNormalizeURL(t *testing.T) {
	for in, want := range map[string]string{
		"localhost:8000":               "http://localhost:8000/v1",
		"http://localhost:8000":        "http://localhost:8000/v1",
		"http://localhost:8000/":       "http://localhost:8000/v1",
		"http://localhost:8000/v1":     "http://localhost:8000/v1",
		"http://localhost:8000/v1/":    "http://localhost:8000/v1",
		"https://gpu.example.com/x/v1": "https://gpu.example.com/x/v1",
		"https://gpu.example.com/x//":  "https://gpu.example.com/x/v1",
		"HTTP://Box:1/":                "http://Box:1/v1",
		"10.0.0.5:30000/api":           "http://10.0.0.5:30000/api/v1",
		" 127.0.0.1:8080 ":             "http://127.0.0.1:8080/v1",
		"http://[::1]:8000":            "http://[::1]:8000/v1",
		"http://host/v1x":              "http://host/v1x/v1",
		"http://gpubox":                "http://gpubox/v1",
		"gpubox:8000":                  "http://gpubox:8000/v1",
		"gpu.example.com":              "http://gpu.example.com/v1",
	} {
		got, err := NormalizeURL(in)
		if err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "ftp://host", "http://", "http://host:port/", "http://host/?q=1",
		"notaurl", "not a url", "gpu box:8000", "-q"} {
		_, err := NormalizeURL(bad)
		if err == nil || !strings.Contains(err.Error(), "--engine-url") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := NormalizeURL("http://user:hunter2@host:8000/"); err != nil {
		t.Errorf("userinfo: %v", err)
	}
	if _, err := NormalizeURL("ftp://user:hunter2@host"); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("password in error: %v", err)
	}
}

func TestBodyBufferRefs(t *testing.T) {
	bb := getBodyBuf()
	r1, r2 := bb.reader(), bb.reader()
	r1.Close()
	r1.Close() // the transport may close twice
	r2.Close()
	if n := bb.refs.Load(); n != 1 {
		t.Fatalf("refs %d after the readers closed, want 1 (Do's own)", n)
	}
	bb.release()
	if n := bb.refs.Load(); n != 0 {
		t.Fatalf("refs %d", n)
	}
}

// roundTripFunc lets a test answer requests without a network.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestCustomTransport(t *testing.T) {
	var sawLen int64
	c := New(Options{BaseURL: "http://engine.invalid/v1", Model: "m", Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sawLen = r.ContentLength
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if int64(len(b)) != sawLen || r.URL.String() != "http://engine.invalid/v1/chat/completions" {
			return nil, fmt.Errorf("body %d/%d bytes to %s", len(b), sawLen, r.URL)
		}
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(strings.NewReader(simple))}, nil
	})})
	defer c.Close()
	r := c.Do(context.Background(), &Request{Messages: []Message{{"user", "hi"}}})
	if !r.Successful || r.CacheState != StateReused || sawLen <= 0 {
		t.Fatalf("%v %v", errCode(r), r.ErrorDetail)
	}
}
