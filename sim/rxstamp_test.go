package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"
)

type stampedAt time.Time

func (s stampedAt) requestArrival() time.Time { return time.Time(s) }

// In measuring mode a request's TTFT counts from when its bytes came in
// (the connection's receive time), so a request the server reached late
// gets its first token that much sooner after; an implausible stamp (in
// the future) is not taken.
func TestFixedTTFTCountsFromTheReceiveTime(t *testing.T) {
	s, err := New(testConfig(func(c *Config) {
		c.ZeroLatency = false
		c.FixedTTFT, c.FixedITL = 2*time.Second, time.Millisecond
	}))
	if err != nil {
		t.Fatal(err)
	}
	var ttft time.Duration
	s.trace = func(tr requestTrace) { ttft = tr.TTFT }
	body, _ := json.Marshal(chat("hello there", map[string]any{"max_tokens": 1}))
	serve := func(stamp time.Time) time.Duration {
		req := httptest.NewRequest("POST", "/v1/chat/completions", bytes.NewReader(body))
		req = req.WithContext(context.WithValue(req.Context(), arrivalKey{}, arrivalConn(stampedAt(stamp))))
		w := httptest.NewRecorder()
		start := time.Now()
		s.ServeHTTP(w, req)
		if w.Code != 200 {
			t.Fatalf("status %d: %s", w.Code, w.Body.String())
		}
		return time.Since(start)
	}
	took := serve(time.Now().Add(-1500 * time.Millisecond))
	if took > 1900*time.Millisecond || ttft < 2*time.Second {
		t.Fatalf("received 1.5 s before it was served: the handler took %v and counted a TTFT of %v; want about 0.5 s and 2 s", took, ttft)
	}
	took = serve(time.Now().Add(time.Hour))
	if took < 2*time.Second {
		t.Fatalf("a stamp in the future was taken: the handler took %v, want the full 2 s", took)
	}
}
