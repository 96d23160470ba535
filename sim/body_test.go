package sim

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
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
