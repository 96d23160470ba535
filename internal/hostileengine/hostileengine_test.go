package hostileengine

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func post(t *testing.T, e *Engine, path, auth string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.URL+path, strings.NewReader(`{"stream":true}`))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Every reply carries what its name promises, in turn, and echoes the
// request's Authorization header where it says it does.
func TestReplies(t *testing.T) {
	const auth = "Bearer sk-planted-1234"
	e := Start(t, Config{Replies: []Reply{Normal, OneWrite, ErrorObject, ErrorEvent, MalformedChunk, HTTPError, HTTPErrorText, HugeCounts}, EchoInContent: true})
	want := []struct {
		status int
		has    []string
	}{
		{200, []string{`"content":"tok Bearer sk-planted-1234 \u001b]52;c;aGFja2Vk\u0007`, `"cached_tokens":0`, "data: [DONE]"}},
		{200, []string{`"completion_tokens":4`, "data: [DONE]"}},
		{200, []string{`data: {"error":{"code":"\u001b]52;`, "sk-planted-1234"}},
		{200, []string{"event: error\ndata: engine failed \x1b]52;", "Authorization: Bearer sk-planted-1234"}},
		{200, []string{`data: {"choices": [{"delta": {"content": "` + Escapes, "sk-planted-1234"}},
		{503, []string{`"message":"overloaded \u001b]52;c;aGFja2Vk\u0007`, "sk-planted-1234"}},
		{500, []string{"internal error \x1b]52;", "Authorization: Bearer sk-planted-1234"}},
		{200, []string{`"prompt_tokens":4611686018427387904`, `"total_tokens":9223372036854775808`, `"cached_tokens":4611686018427387903`, `"cache_n":4611686018427387904`, "data: [DONE]"}},
	}
	for i, w := range want {
		resp := post(t, e, "/v1/chat/completions", auth)
		got := body(t, resp)
		if resp.StatusCode != w.status {
			t.Errorf("reply %d (%v): status %d, want %d", i, e.cfg.Replies[i], resp.StatusCode, w.status)
		}
		for _, h := range w.has {
			if !strings.Contains(got, h) {
				t.Errorf("reply %d (%v) lacks %q:\n%s", i, e.cfg.Replies[i], h, got)
			}
		}
		if Unsafe([]byte(got)) < 0 && i >= 2 && i <= 6 {
			t.Errorf("reply %d (%v) carries no raw control byte nor escaped one: %q", i, e.cfg.Replies[i], got)
		}
	}
	if e.Requests() != int64(len(want)) {
		t.Errorf("Requests() = %d, want %d", e.Requests(), len(want))
	}
	if a := e.Authorizations(); len(a) != 1 || a[0] != auth {
		t.Errorf("Authorizations() = %q", a)
	}
}

// OneWrite arrives in one read of a large buffer; Normal arrives spread
// over several.
func TestOneWrite(t *testing.T) {
	e := Start(t, Config{Replies: []Reply{OneWrite}, Chunks: 8})
	resp := post(t, e, "/v1/completions", "")
	buf := make([]byte, 64<<10)
	n, _ := io.ReadAtLeast(resp.Body, buf, 1)
	if got := string(buf[:n]); !strings.HasSuffix(got, "data: [DONE]\n\n") || strings.Count(got, `"text":"tok`) != 8 {
		t.Fatalf("the first read is not the whole reply (%d bytes):\n%s", n, got)
	}
	if n >= 2<<10 {
		t.Errorf("OneWrite reply is %d bytes, want < 2 KiB", n)
	}
}

// Endless keeps streaming content and never a [DONE]; it stops when the
// client goes, and the engine closes with the stream open.
func TestEndless(t *testing.T) {
	e := Start(t, Config{Replies: []Reply{Endless}})
	resp := post(t, e, "/v1/chat/completions", "")
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 4<<20))
	events := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "[DONE]") || strings.Contains(line, "finish_reason\":\"") || strings.Contains(line, "usage") {
			t.Fatalf("an endless stream sent %q", line)
		}
		if strings.HasPrefix(line, "data:") {
			events++
		}
	}
	if events < 100000 || e.BytesSent() < 4<<20 {
		t.Fatalf("%d events, %d bytes sent: the stream stopped", events, e.BytesSent())
	}
	resp.Body.Close()
	e.Close() // must not wait for the stream's time limit
}

// The reply's time limit ends an endless stream the client keeps open.
func TestMaxReply(t *testing.T) {
	e := Start(t, Config{Replies: []Reply{Endless}, MaxReply: 50 * time.Millisecond})
	resp := post(t, e, "/v1/chat/completions", "")
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got), "[DONE]") || len(got) == 0 {
		t.Fatalf("%d bytes, [DONE] %v", len(got), strings.Contains(string(got), "[DONE]"))
	}
}

func TestModels(t *testing.T) {
	e := Start(t, Config{})
	req, _ := http.NewRequest(http.MethodGet, e.URL+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer k-123")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got := body(t, resp)
	for _, h := range []string{`"id":"hostile\u001b]52;c;aGFja2Vk\u0007-Bearer k-123"`, `"id":"\u001b[2Jclear"`, "c1\xc2\x9b31m-red"} {
		if !strings.Contains(got, h) {
			t.Errorf("models lack %q:\n%s", h, got)
		}
	}
}

func TestUnsafe(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"plain\ttext\r\n", -1},
		{"ünïcødé 日本 \u00a0", -1},
		{"a\x1b[2J", 1},
		{"ab\xc2\x9b31m", 2},
		{"abc\x9b31m", 3},
		{"\x07", 0},
		{"x\x7f", 1},
		{"\xff is not C1 but invalid", -1},
	} {
		if got := Unsafe([]byte(c.in)); got != c.want {
			t.Errorf("Unsafe(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}
