// Package hostileengine is an OpenAI-compatible engine that misbehaves on
// purpose, for tests of what kvbench does with what engines send
// (ARCHITECTURE.md, Hostile inputs): model ids and error bodies laden with
// terminal escapes, the request's Authorization header echoed back in
// every place a reply can carry text, streams that never end, token counts
// near 2^62, and whole replies in one write.
//
// It listens on 127.0.0.1 only; every reply is bounded in time
// (Config.MaxReply) and the engine is stopped when the test ends:
//
//	e := hostileengine.Start(t, hostileengine.Config{
//		Replies: []hostileengine.Reply{hostileengine.ErrorEvent, hostileengine.Endless},
//	})
//	// --engine-url e.URL; request k gets Replies[k % len(Replies)]
//
// Routes: GET /v1/models lists Config.ModelIDs; POST /v1/chat/completions
// and /v1/completions answer with the next Reply (chat or completions
// chunks); every other path is a 404 whose body holds escapes.
package hostileengine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

// Reply is what one completion request gets.
type Reply int

const (
	// Normal is a well-formed stream: a role chunk, Config.Chunks content
	// chunks Config.ChunkGap apart (each flushed), a finish chunk, a usage
	// chunk (prompt 16, explicit cached 0, completion Config.Chunks) and
	// [DONE]. With EchoInContent the Authorization header and Escapes are
	// in the text.
	Normal Reply = iota
	// OneWrite is Normal's reply written with one Write and one flush:
	// every token arrives in the same read. The reply stays under 2 KiB.
	OneWrite
	// ErrorObject is a 200 stream whose second event is a JSON error
	// object; its message, type and code hold escapes (JSON-escaped ESC,
	// raw C1) and the Authorization header.
	ErrorObject
	// ErrorEvent is a 200 stream with an `event: error` frame whose data
	// is raw text (not JSON) holding raw escapes and the header.
	ErrorEvent
	// MalformedChunk is a 200 stream with a data line that is not JSON,
	// holding raw escapes and the header.
	MalformedChunk
	// HTTPError is HTTP 503 with an OpenAI-style JSON error body whose
	// message holds escapes and the header.
	HTTPError
	// HTTPErrorText is HTTP 500 with a text/plain body of raw escapes and
	// the header.
	HTTPErrorText
	// Endless streams the smallest content chunks (34 bytes each) until
	// the client goes away or Config.MaxReply passes: never a
	// finish_reason, usage or [DONE].
	Endless
	// HugeCounts is a complete stream whose usage says prompt_tokens,
	// completion_tokens and cached_tokens near 2^62 (HugeCount) and whose
	// timings say cache_n HugeCount.
	HugeCounts
)

var replyNames = [...]string{"Normal", "OneWrite", "ErrorObject", "ErrorEvent", "MalformedChunk", "HTTPError", "HTTPErrorText", "Endless", "HugeCounts"}

func (r Reply) String() string {
	if r >= 0 && int(r) < len(replyNames) {
		return replyNames[r]
	}
	return fmt.Sprintf("Reply(%d)", int(r))
}

// HugeCount is the token count HugeCounts reports: 2^62, far past the
// 2^40 a valid count may reach (spec/record.md), and twice of it
// overflows an int64.
const HugeCount = 1 << 62

// Authorization in a model id or in Escapes-bearing text is replaced by
// the Authorization header of the request being answered ("" without
// one).
const Authorization = "{{authorization}}"

// Escapes is the terminal-control text the engine puts in error bodies
// and model ids: OSC 52 (set the clipboard), OSC 0 (set the title), CSI
// 2J (clear the screen), and a C1 CSI (U+009B) starting SGR 31.
const Escapes = "\x1b]52;c;aGFja2Vk\x07 \x1b]0;pwned\x07 \x1b[2J \xc2\x9b31m"

// EscapeModelIDs are the default model ids: each carries escapes; the
// first (the one a run picks by default) also carries the Authorization
// header.
var EscapeModelIDs = []string{
	"hostile\x1b]52;c;aGFja2Vk\x07-" + Authorization,
	"title\x1b]0;pwned\x07",
	"\x1b[2Jclear",
	"c1\xc2\x9b31m-red",
}

// Config describes an engine.
type Config struct {
	// Replies are answered in turn: completion request k (counted from 0
	// in arrival order) gets Replies[k % len(Replies)]. Empty: Normal.
	Replies []Reply
	// ModelIDs is what GET /v1/models lists (nil: EscapeModelIDs).
	ModelIDs []string
	// EchoInContent puts the Authorization header and Escapes in the
	// content of Normal, OneWrite and HugeCounts replies (a client passes
	// text through; where it is printed or stored it must be clean and
	// hold no key).
	EchoInContent bool
	// Chunks is the number of content chunks of Normal, OneWrite and
	// HugeCounts replies (default 4); ChunkGap the pause before each
	// (default 2ms; Normal and HugeCounts only).
	Chunks   int
	ChunkGap time.Duration
	// MaxReply bounds every reply (default 60s): an Endless stream ends
	// then, without [DONE], if the client has not gone.
	MaxReply time.Duration
}

// Engine is a running hostile engine.
type Engine struct {
	// URL is the engine's base URL, http://127.0.0.1:PORT (no /v1).
	URL string

	cfg      Config
	srv      *httptest.Server
	next     atomic.Int64
	requests atomic.Int64
	sent     atomic.Int64
	mu       sync.Mutex
	auths    map[string]bool
}

// Start starts an engine on a free port of 127.0.0.1 and stops it when
// the test ends.
func Start(t testing.TB, cfg Config) *Engine {
	t.Helper()
	if cfg.Chunks <= 0 {
		cfg.Chunks = 4
	}
	if cfg.ChunkGap <= 0 {
		cfg.ChunkGap = 2 * time.Millisecond
	}
	if cfg.MaxReply <= 0 {
		cfg.MaxReply = 60 * time.Second
	}
	if cfg.ModelIDs == nil {
		cfg.ModelIDs = EscapeModelIDs
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("hostileengine: listen: %v", err)
	}
	e := &Engine{cfg: cfg, auths: map[string]bool{}}
	e.srv = httptest.NewUnstartedServer(http.HandlerFunc(e.serve))
	e.srv.Listener.Close()
	e.srv.Listener = ln
	e.srv.Start()
	e.URL = e.srv.URL
	t.Cleanup(e.Close)
	return e
}

// Close stops the engine: open streams are cut and Close waits for their
// handlers. It is safe to call more than once.
func (e *Engine) Close() {
	e.srv.CloseClientConnections()
	e.srv.Close()
}

// Requests is the number of completion requests received.
func (e *Engine) Requests() int64 { return e.requests.Load() }

// BytesSent is the number of reply body bytes written so far, all
// replies together.
func (e *Engine) BytesSent() int64 { return e.sent.Load() }

// Authorizations lists the distinct Authorization headers received, in
// no particular order (to prove a key was sent).
func (e *Engine) Authorizations() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, len(e.auths))
	for a := range e.auths {
		out = append(out, a)
	}
	return out
}

func (e *Engine) serve(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	if auth != "" {
		e.mu.Lock()
		e.auths[auth] = true
		e.mu.Unlock()
	}
	io.Copy(io.Discard, io.LimitReader(r.Body, 64<<20))
	switch r.URL.Path {
	case "/v1/models", "/models":
		data := make([]map[string]any, len(e.cfg.ModelIDs))
		for i, id := range e.cfg.ModelIDs {
			data[i] = map[string]any{"id": strings.ReplaceAll(id, Authorization, auth), "object": "model", "owned_by": Escapes}
		}
		e.writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
	case "/v1/chat/completions", "/chat/completions":
		e.complete(w, r, true, auth)
	case "/v1/completions", "/completions":
		e.complete(w, r, false, auth)
	default:
		e.writeJSON(w, http.StatusNotFound, errorBody("no route "+Escapes+" "+auth))
	}
}

func errorBody(msg string) map[string]any {
	return map[string]any{"error": map[string]any{"message": msg, "type": "hostile" + Escapes, "code": Escapes}}
}

func (e *Engine) writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	n, _ := w.Write(b)
	e.sent.Add(int64(n))
}

func (e *Engine) complete(w http.ResponseWriter, r *http.Request, chat bool, auth string) {
	e.requests.Add(1)
	reply := Normal
	if n := len(e.cfg.Replies); n > 0 {
		reply = e.cfg.Replies[int((e.next.Add(1)-1)%int64(n))]
	}
	switch reply {
	case HTTPError:
		e.writeJSON(w, http.StatusServiceUnavailable, errorBody("overloaded "+Escapes+" Authorization: "+auth))
		return
	case HTTPErrorText:
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusInternalServerError)
		n, _ := io.WriteString(w, "internal error "+Escapes+"\r\nAuthorization: "+auth+"\r\n")
		e.sent.Add(int64(n))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	s := &sse{w: w, f: w.(http.Flusher), e: e, stop: time.Now().Add(e.cfg.MaxReply), ctx: r.Context().Done()}
	c := chunker{chat: chat}
	text := "tok"
	if e.cfg.EchoInContent {
		text = "tok " + auth + " " + Escapes + " "
	}
	switch reply {
	case OneWrite:
		var b bytes.Buffer
		b.WriteString(c.role())
		for i := range e.cfg.Chunks {
			b.WriteString(c.content(fmt.Sprintf("%s%d ", text, i)))
		}
		b.WriteString(c.finish())
		b.WriteString(usage(16, uint64(e.cfg.Chunks), 0))
		b.WriteString("data: [DONE]\n\n")
		s.send(b.String())
	case ErrorObject:
		s.send(c.role())
		s.send(c.content("partial "))
		b, _ := json.Marshal(errorBody("invalid key " + Escapes + " " + auth))
		s.send("data: " + string(b) + "\n\n")
	case ErrorEvent:
		s.send(c.role())
		s.send("event: error\ndata: engine failed " + Escapes + " Authorization: " + auth + "\n\n")
	case MalformedChunk:
		s.send(c.role())
		s.send(`data: {"choices": [{"delta": {"content": "` + Escapes + ` Authorization: ` + auth + "\n\n")
	case Endless:
		// The smallest chunk a client must count: the most chunks per
		// byte, as a hostile engine would send.
		var b bytes.Buffer
		for b.Len() < 32<<10 {
			b.WriteString(`data:{"choices":[{"text":"x"}]}` + "\n\n")
		}
		block := b.String()
		s.send(c.role())
		for s.send(block) {
		}
	case HugeCounts:
		s.send(c.role())
		for i := range e.cfg.Chunks {
			if !s.pause(e.cfg.ChunkGap) || !s.send(c.content(fmt.Sprintf("%s%d ", text, i))) {
				return
			}
		}
		s.send(c.finish())
		s.send(usage(HugeCount, HugeCount, HugeCount-1) + `data: {"choices":[],"timings":{"cache_n":` + fmt.Sprint(HugeCount) + "}}\n\n")
		s.send("data: [DONE]\n\n")
	default: // Normal
		s.send(c.role())
		for i := range e.cfg.Chunks {
			if !s.pause(e.cfg.ChunkGap) || !s.send(c.content(fmt.Sprintf("%s%d ", text, i))) {
				return
			}
		}
		s.send(c.finish())
		s.send(usage(16, uint64(e.cfg.Chunks), 0))
		s.send("data: [DONE]\n\n")
	}
}

// sse writes events, each flushed, until the client goes, a write fails
// or the reply's time is up.
type sse struct {
	w    http.ResponseWriter
	f    http.Flusher
	e    *Engine
	stop time.Time
	ctx  <-chan struct{}
	dead bool
}

func (s *sse) send(ev string) bool {
	if s.dead || time.Now().After(s.stop) {
		s.dead = true
		return false
	}
	select {
	case <-s.ctx:
		s.dead = true
		return false
	default:
	}
	n, err := io.WriteString(s.w, ev)
	s.e.sent.Add(int64(n))
	if err != nil {
		s.dead = true
		return false
	}
	s.f.Flush()
	return true
}

// pause waits d unless the client goes first.
func (s *sse) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return !s.dead
	case <-s.ctx:
		s.dead = true
		return false
	}
}

// chunker builds chat or completions chunks.
type chunker struct{ chat bool }

const chunkHead = `{"id":"hostile-1","object":"chat.completion.chunk","created":1764450000,"model":"hostile","choices":[{"index":0,`

func (c chunker) content(text string) string {
	b, _ := json.Marshal(text)
	if c.chat {
		return "data: " + chunkHead + `"delta":{"content":` + string(b) + `},"finish_reason":null}]}` + "\n\n"
	}
	return "data: " + chunkHead + `"text":` + string(b) + `,"finish_reason":null}]}` + "\n\n"
}

func (c chunker) role() string {
	if c.chat {
		return "data: " + chunkHead + `"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n"
	}
	return ""
}

func (c chunker) finish() string {
	if c.chat {
		return "data: " + chunkHead + `"delta":{},"finish_reason":"length"}]}` + "\n\n"
	}
	return "data: " + chunkHead + `"text":"","finish_reason":"length"}]}` + "\n\n"
}

func usage(prompt, completion, cached uint64) string {
	return fmt.Sprintf(`data: {"id":"hostile-1","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d}}}`+"\n\n",
		prompt, completion, prompt+completion, cached)
}

// Unsafe returns the offset of the first byte of b a terminal could act
// on, or -1: ESC or any other C0 control but tab, newline and carriage
// return, DEL, a C1 control encoded in UTF-8 (U+0080-U+009F), or a raw
// byte 0x80-0x9F outside valid UTF-8 (an 8-bit C1). Tests run it over
// every file and output a run produced.
func Unsafe(b []byte) int {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 && c <= 0x9f || r >= 0x80 && r <= 0x9f {
			return i
		}
		i += n
	}
	return -1
}
