package sim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestStalledBodyClosesTheConnection: a body that stops arriving gets a
// 408 and the connection is closed after the idle time, instead of being
// held forever.
func TestStalledBodyClosesTheConnection(t *testing.T) {
	s, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	s.bodyIdle = 100 * time.Millisecond
	srv := httptest.NewServer(s)
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"messages\":")
	conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // a bound on the test, not the check
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("status %d, want 408", resp.StatusCode)
	}
	resp.Body.Close()
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Fatal("the connection stays open after a stalled body")
	}
}

// TestBigBodyMemory: a valid 30 MB body is served, and what the process
// holds afterwards (heap not given back to the system) grows by well
// under the 175 MB it used to keep.
func TestBigBodyMemory(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ZeroLatency = true
	cfg.MaxModelLen = 1 << 24
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	const size = 30 << 20
	content := strings.Repeat("hi ", size/3-40)
	body := `{"messages":[{"role":"user","content":"` + content + `"}],"max_tokens":1}`
	content = ""
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d for a valid 30 MB body", resp.StatusCode)
	}
	runtime.ReadMemStats(&after)
	peak := after.TotalAlloc - before.TotalAlloc
	for s.releasing.Load() {
		runtime.Gosched()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapSys-after.HeapReleased) - int64(before.HeapSys-before.HeapReleased)
	// What serving allocates depends on the runtime (the race detector
	// adds its own); what stays held afterwards must not.
	t.Logf("30 MB body: %d MB allocated while serving it, %d MB still held after", peak>>20, held>>20)
	if held > 2*size {
		t.Fatalf("%d MB still held after a 30 MB body, want under 60", held>>20)
	}
}

// TestContentTokenizedWhereItLies: a message's content and a completions
// prompt tokenized inside the body give the ids of the decoded text,
// escapes, non-ASCII and invalid UTF-8 (which decoding replaces) included.
func TestContentTokenizedWhereItLies(t *testing.T) {
	for _, text := range []string{
		"hi tell help", "", " ", "Document 7: naïve café, 東京!", "tab\there \"quoted\" back\\slash",
		"line\nbreak\u2028sep", "bad \xff\xfe utf8", "emoji 🙂🙂 end",
	} {
		raw, err := json.Marshal(text)
		if err != nil {
			t.Fatal(err)
		}
		var decoded string
		if err := json.Unmarshal(raw, &decoded); err != nil {
			t.Fatal(err)
		}
		want := tokenize(nil, decoded)
		var p promptField
		if err := json.Unmarshal(raw, &p); err != nil || p.err != nil {
			t.Fatalf("%q: %v %v", text, err, p.err)
		}
		if !slices.Equal(p.ids, want) && len(want)+len(p.ids) > 0 {
			t.Errorf("prompt %q: ids %v, want %v", text, p.ids, want)
		}
		var c messageContent
		if err := json.Unmarshal(raw, &c); err != nil || c.err != nil {
			t.Fatalf("%q: %v %v", text, err, c.err)
		}
		if got := contentIDs(c.ids); !slices.Equal(got, want) && len(want)+len(got) > 0 {
			t.Errorf("content %q: ids %v, want %v", text, got, want)
		}
	}
}
