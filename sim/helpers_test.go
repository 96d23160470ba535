package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// testConfig is a fast configuration on a free loopback port.
func testConfig(mutate func(*Config)) Config {
	cfg := DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.ZeroLatency = true
	if mutate != nil {
		mutate(&cfg)
	}
	return cfg
}

// startSim runs a real listening simulator, closed when the test ends.
func startSim(t testing.TB, mutate func(*Config)) *Running {
	t.Helper()
	r, err := Start(testConfig(mutate))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

// fakeClock is virtual time: sleeping moves it forward at once.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_800_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) SleepUntil(ctx context.Context, t time.Time) error {
	c.mu.Lock()
	if t.After(c.now) {
		c.now = t
	}
	c.mu.Unlock()
	return ctx.Err()
}

// tracedSim is a simulator on virtual time whose model decisions the test
// can read.
type tracedSim struct {
	*Server
	URL    string
	mu     sync.Mutex
	traces []requestTrace
}

func startTraced(t *testing.T, mutate func(*Config)) *tracedSim {
	t.Helper()
	cfg := testConfig(func(c *Config) {
		c.ZeroLatency = false
		if mutate != nil {
			mutate(c)
		}
	})
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	s.clock = newFakeClock()
	ts := &tracedSim{Server: s}
	s.trace = func(tr requestTrace) {
		ts.mu.Lock()
		ts.traces = append(ts.traces, tr)
		ts.mu.Unlock()
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	ts.URL = hs.URL
	return ts
}

func (ts *tracedSim) last(t *testing.T) requestTrace {
	t.Helper()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.traces) == 0 {
		t.Fatal("no request was traced")
	}
	return ts.traces[len(ts.traces)-1]
}

// post sends body as JSON and returns the response.
func post(t testing.TB, base, path string, body any) *http.Response {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		raw, err = json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.Post(base+path, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	return resp
}

func get(t testing.TB, base, path string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read: %v", path, err)
	}
	return resp.StatusCode, b
}

// usageJSON mirrors the wire usage; Details stays nil when absent.
type usageJSON struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens *int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func (u *usageJSON) cached(t testing.TB) int {
	t.Helper()
	if u == nil {
		t.Fatal("no usage")
	}
	if u.PromptTokensDetails == nil || u.PromptTokensDetails.CachedTokens == nil {
		t.Fatal("usage has no prompt_tokens_details.cached_tokens")
	}
	return *u.PromptTokensDetails.CachedTokens
}

// streamResult is what a test client saw on one SSE stream.
type streamResult struct {
	Events        []string // every data payload, in order
	Content       string
	Reasoning     string
	ContentChunks int
	ReasonChunks  int
	Finish        string
	Usage         *usageJSON
	UsageRaw      json.RawMessage
	Done          bool
	ErrorEvents   int
	InvalidJSON   int
	MaxGap        time.Duration // longest gap between two text chunks
	RoleFirst     bool          // the first event is the role chunk
}

type chunkJSON struct {
	Choices []struct {
		Text  *string `json:"text"`
		Delta *struct {
			Role             *string `json:"role"`
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage json.RawMessage `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// readStream reads an SSE body to its end, event by event.
func readStream(t testing.TB, resp *http.Response) streamResult {
	t.Helper()
	res, err := parseStream(resp)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// parseStream is readStream for goroutines other than the test's.
func parseStream(resp *http.Response) (streamResult, error) {
	defer resp.Body.Close()
	var res streamResult
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return res, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return res, fmt.Errorf("Content-Type %q", ct)
	}
	var pending []byte
	buf := make([]byte, 32<<10)
	var lastText time.Time
	handle := func(ev string) error {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok {
			return fmt.Errorf("event without data: %q", ev)
		}
		res.Events = append(res.Events, data)
		if data == "[DONE]" {
			res.Done = true
			return nil
		}
		if !json.Valid([]byte(data)) {
			res.InvalidJSON++
			return nil
		}
		var c chunkJSON
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return fmt.Errorf("chunk %q: %v", data, err)
		}
		if c.Error != nil {
			res.ErrorEvents++
			return nil
		}
		if len(c.Usage) > 0 && string(c.Usage) != "null" {
			res.UsageRaw = c.Usage
			res.Usage = new(usageJSON)
			if err := json.Unmarshal(c.Usage, res.Usage); err != nil {
				return fmt.Errorf("usage %s: %v", c.Usage, err)
			}
		}
		for _, ch := range c.Choices {
			text := ""
			isReason := false
			switch {
			case ch.Text != nil:
				text = *ch.Text
			case ch.Delta != nil && ch.Delta.Content != nil:
				text = *ch.Delta.Content
				if ch.Delta.Role != nil && len(res.Events) == 1 {
					res.RoleFirst = true
				}
			case ch.Delta != nil && ch.Delta.ReasoningContent != nil:
				text = *ch.Delta.ReasoningContent
				isReason = true
			}
			if text != "" {
				now := time.Now()
				if !lastText.IsZero() && now.Sub(lastText) > res.MaxGap {
					res.MaxGap = now.Sub(lastText)
				}
				lastText = now
				if isReason {
					res.Reasoning += text
					res.ReasonChunks++
				} else {
					res.Content += text
					res.ContentChunks++
				}
			}
			if ch.FinishReason != nil {
				res.Finish = *ch.FinishReason
			}
		}
		return nil
	}
	for {
		n, err := resp.Body.Read(buf)
		pending = append(pending, buf[:n]...)
		for {
			i := bytes.Index(pending, []byte("\n\n"))
			if i < 0 {
				break
			}
			if herr := handle(string(pending[:i])); herr != nil {
				return res, herr
			}
			pending = pending[i+2:]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return res, fmt.Errorf("read stream: %v", err)
		}
	}
	if len(bytes.TrimSpace(pending)) > 0 {
		return res, fmt.Errorf("stream ended inside an event: %q", pending)
	}
	return res, nil
}

// chat is a streaming chat request body with one user message.
func chat(text string, extra map[string]any) map[string]any {
	body := map[string]any{
		"model":          "kvbench-sim",
		"messages":       []map[string]any{{"role": "user", "content": text}},
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
		"max_tokens":     16,
		"temperature":    0,
	}
	for k, v := range extra {
		body[k] = v
	}
	return body
}

// completion is a streaming completions request body; prompt is a string
// or token ids.
func completion(prompt any, extra map[string]any) map[string]any {
	body := map[string]any{
		"model":          "kvbench-sim",
		"prompt":         prompt,
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
		"max_tokens":     4,
		"temperature":    0,
	}
	for k, v := range extra {
		body[k] = v
	}
	return body
}

// words is "hi" repeated n times: n tokens.
func words(word string, n int) string {
	return strings.TrimSpace(strings.Repeat(word+" ", n))
}

// ids returns n token ids starting at first.
func ids(first, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = first + i
	}
	return out
}

func streamChat(t testing.TB, base, text string, extra map[string]any) streamResult {
	t.Helper()
	return readStream(t, post(t, base, "/v1/chat/completions", chat(text, extra)))
}

func streamCompletion(t testing.TB, base string, prompt any, extra map[string]any) streamResult {
	t.Helper()
	return readStream(t, post(t, base, "/v1/completions", completion(prompt, extra)))
}
