package sender

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// rawServer is a loopback HTTP/1.1 server written on raw connections, so a
// test decides exactly when a connection dies. serve is called for every
// request read, with the connection's index (0 for the first connection
// accepted) and the request's index on it; it writes whatever it likes
// and returns false to close the connection.
type rawServer struct {
	ln   net.Listener
	mu   sync.Mutex
	seen []rawSeen
	wg   sync.WaitGroup
}

type rawSeen struct {
	conn, nth int
	at        time.Time
}

func startRaw(t *testing.T, serve func(w *bufio.Writer, conn, nth int, req *http.Request) bool) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for i := 0; ; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func(c net.Conn, idx int) {
				defer s.wg.Done()
				defer c.Close()
				c.SetDeadline(time.Now().Add(30 * time.Second))
				br, bw := bufio.NewReader(c), bufio.NewWriter(c)
				for nth := 0; ; nth++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					s.mu.Lock()
					s.seen = append(s.seen, rawSeen{idx, nth, time.Now()})
					s.mu.Unlock()
					if !serve(bw, idx, nth, req) {
						bw.Flush()
						return
					}
					if bw.Flush() != nil || req.Close {
						return
					}
				}
			}(c, i)
		}
	}()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *rawServer) url() string { return "http://" + s.ln.Addr().String() + "/v1" }

func (s *rawServer) requests() []rawSeen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]rawSeen(nil), s.seen...)
}

// writeStream writes a complete SSE response advertising keep-alive the
// way llama.cpp's server does.
func writeStream(w *bufio.Writer, body string) {
	w.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n" +
		"Keep-Alive: timeout=5, max=100\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
	w.WriteString(body)
}

var connTestStream = vllmStream(20, 0, "Hello", " there")

func rawClient(t *testing.T, s *rawServer) *Client {
	t.Helper()
	c := New(Options{BaseURL: s.url(), Model: "m", RequestTimeout: 20 * time.Second})
	t.Cleanup(c.Close)
	return c
}

// A server that answers a request and then drops the connection the
// moment the next request arrives on it (the deterministic form of
// llama.cpp's close after every streamed response): every request sent
// on the reused connection goes once more on a fresh one, succeeds, and
// says so in retries; TTFT and latency run from the first submit.
func TestRetryOnClosedKeptAliveConnection(t *testing.T) {
	s := startRaw(t, func(w *bufio.Writer, conn, nth int, req *http.Request) bool {
		if nth > 0 {
			return false // EOF before the status line
		}
		writeStream(w, connTestStream)
		return true
	})
	c := rawClient(t, s)
	const n = 6
	var results []Result
	for i := range n {
		r := c.Do(context.Background(), &Request{ID: "r" + strconv.Itoa(i), Messages: []Message{{"user", "hi"}}, MaxTokens: 4})
		if !r.Successful || r.Error != nil {
			t.Fatalf("request %d failed: %s %s", i, errCode(r), ptrStr(r.ErrorDetail))
		}
		results = append(results, r)
	}
	// Request 0 opens a connection; request 1 reuses it, meets EOF and
	// goes again on a connection of its own (closed after it); request 2
	// finds no idle connection and opens one; and so on.
	total := 0
	for i, r := range results {
		if want := i % 2; r.Retries != want {
			t.Errorf("request %d: retries %d, want %d", i, r.Retries, want)
		}
		total += r.Retries
	}
	seen := s.requests()
	if len(seen) != n+total {
		t.Fatalf("server saw %d requests, want %d sent + %d retried", len(seen), n, total)
	}
	// The retried request's submit precedes the first attempt's arrival.
	var firstAttempt time.Time
	for _, sn := range seen {
		if sn.nth == 1 {
			firstAttempt = sn.at
			break
		}
	}
	if firstAttempt.IsZero() {
		t.Fatal("no request arrived on a reused connection")
	}
	if got := results[1].Submit; !got.Before(firstAttempt) {
		t.Errorf("retried request's submit %v is not before its first attempt arrived (%v)", got, firstAttempt)
	}
	if results[1].TTFT == nil || results[1].RequestLatency < results[1].Finish.Sub(firstAttempt).Seconds() {
		t.Errorf("retried request's latency %v does not cover the first attempt", results[1].RequestLatency)
	}
}

// llama.cpp's own pattern: Keep-Alive advertised, the connection closed
// right after each response. Whatever the race between the close and the
// next request, nothing fails and no request reaches the server more
// than twice.
func TestServerClosesAfterEveryResponse(t *testing.T) {
	s := startRaw(t, func(w *bufio.Writer, conn, nth int, req *http.Request) bool {
		writeStream(w, connTestStream)
		return false
	})
	c := rawClient(t, s)
	const n = 20
	total := 0
	for i := range n {
		r := c.Do(context.Background(), &Request{ID: "r", Messages: []Message{{"user", "hi"}}, MaxTokens: 4})
		if !r.Successful {
			t.Fatalf("request %d failed: %s %s", i, errCode(r), ptrStr(r.ErrorDetail))
		}
		if r.Retries < 0 || r.Retries > 1 {
			t.Fatalf("retries %d", r.Retries)
		}
		total += r.Retries
	}
	// A first attempt may die before the server read it (write on a
	// reset connection), so the server sees between n and n+retries.
	if got := len(s.requests()); got < n || got > n+total {
		t.Errorf("server saw %d requests, want %d..%d", got, n, n+total)
	}
}

// Once a response byte has arrived nothing is retried: not a status line
// cut short, not a stream cut after its first chunk.
func TestNoRetryAfterResponseBytes(t *testing.T) {
	for name, partial := range map[string]func(w *bufio.Writer){
		"status line": func(w *bufio.Writer) { w.WriteString("HTTP/1.1 20") },
		"stream": func(w *bufio.Writer) {
			w.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 100000\r\n\r\n")
			w.WriteString(chatChunk("Hel"))
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := startRaw(t, func(w *bufio.Writer, conn, nth int, req *http.Request) bool {
				if nth == 0 {
					writeStream(w, connTestStream)
					return true
				}
				partial(w)
				return false
			})
			c := rawClient(t, s)
			if r := c.Do(context.Background(), &Request{ID: "a", MaxTokens: 4}); !r.Successful {
				t.Fatalf("first request: %s", ptrStr(r.ErrorDetail))
			}
			r := c.Do(context.Background(), &Request{ID: "b", MaxTokens: 4})
			if r.Successful || r.Error == nil {
				t.Fatalf("a cut response succeeded")
			}
			if r.Retries != 0 {
				t.Errorf("retries %d after a response byte, want 0", r.Retries)
			}
			if got := len(s.requests()); got != 2 {
				t.Errorf("server saw %d requests, want 2 (no retry)", got)
			}
		})
	}
}

// A fresh connection that fails is not retried: only a reused one can be
// stale.
func TestNoRetryOnFreshConnection(t *testing.T) {
	s := startRaw(t, func(w *bufio.Writer, conn, nth int, req *http.Request) bool { return false })
	c := rawClient(t, s)
	r := c.Do(context.Background(), &Request{ID: "a", MaxTokens: 4})
	if r.Successful || errCode(r) != ErrConnect {
		t.Fatalf("got %s, want connect", errCode(r))
	}
	if r.Retries != 0 {
		t.Errorf("retries %d on a fresh connection", r.Retries)
	}
	if got := len(s.requests()); got != 1 {
		t.Errorf("server saw %d requests, want 1", got)
	}
}

// The retry happens once: a retry that fails too is the request's error.
func TestRetryAtMostOnce(t *testing.T) {
	s := startRaw(t, func(w *bufio.Writer, conn, nth int, req *http.Request) bool {
		if conn == 0 && nth == 0 {
			writeStream(w, connTestStream)
			return true
		}
		return false
	})
	c := rawClient(t, s)
	c.Do(context.Background(), &Request{ID: "a", MaxTokens: 4})
	r := c.Do(context.Background(), &Request{ID: "b", MaxTokens: 4})
	if r.Successful || errCode(r) != ErrConnect || r.Retries != 1 {
		t.Fatalf("got %s retries %d, want connect with 1 retry", errCode(r), r.Retries)
	}
	if got := len(s.requests()); got != 3 {
		t.Errorf("server saw %d requests, want 3 (a, b, b again)", got)
	}
}

func ptrStr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Prewarm opens one connection per planned stream before the run: n
// streams sent at once afterwards all find an idle connection and dial
// none of their own.
func TestPrewarmOpensOneConnectionPerStream(t *testing.T) {
	const n = 8
	release := make(chan struct{})
	s := startRaw(t, func(w *bufio.Writer, conn, nth int, req *http.Request) bool {
		if req.Method == http.MethodGet {
			body := `{"object":"list","data":[{"id":"m"}]}`
			w.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
			return true
		}
		<-release // every stream in flight at once
		writeStream(w, connTestStream)
		return true
	})
	c := rawClient(t, s)
	if got := c.Prewarm(context.Background(), n); got != n {
		t.Fatalf("Prewarm opened %d connections, want %d", got, n)
	}
	conns := func() map[int]bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		m := map[int]bool{}
		for _, x := range s.seen {
			m[x.conn] = true
		}
		return m
	}
	if got := len(conns()); got != n {
		t.Fatalf("the server saw %d connections after Prewarm, want %d", got, n)
	}
	var wg sync.WaitGroup
	results := make([]Result, n)
	for i := range n {
		wg.Go(func() {
			results[i] = c.Do(context.Background(), &Request{ID: "r" + strconv.Itoa(i), Messages: []Message{{"user", "hi"}}, MaxTokens: 4})
		})
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		s.mu.Lock()
		posts := len(s.seen) - n
		s.mu.Unlock()
		if posts == n {
			break
		}
		if time.Now().After(deadline) {
			close(release)
			t.Fatalf("%d of %d streams reached the server", posts, n)
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	for i, r := range results {
		if !r.Successful || r.Retries != 0 {
			t.Errorf("request %d: successful %v, retries %d", i, r.Successful, r.Retries)
		}
	}
	if got := len(conns()); got != n {
		t.Errorf("%d streams at once used %d connections in all, want the %d opened ahead", n, got, n)
	}
	if got := c.Prewarm(context.Background(), 1); got != 0 {
		t.Errorf("Prewarm(1) opened %d connections: one stream needs none ahead", got)
	}
}
