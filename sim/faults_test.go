package sim

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"
)

var faultBody = map[string]any{"max_tokens": 20, "ignore_eos": true}

func TestFaultHTTP500(t *testing.T) {
	r := startSim(t, func(c *Config) { c.FaultHTTP500 = 1 })
	for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
		body := chat("hi", faultBody)
		if path == "/v1/completions" {
			body = completion("hi", faultBody)
		}
		resp := post(t, r.URL(), path, body)
		e := decodeError(t, resp)
		if resp.StatusCode != 500 || e.Code != 500 || e.Type != "InternalServerError" || e.Message == "" {
			t.Errorf("%s: status %d, error %+v", path, resp.StatusCode, e)
		}
	}
}

func TestFaultMidstreamError(t *testing.T) {
	r := startSim(t, func(c *Config) { c.FaultMidstreamError = 1 })
	res := streamChat(t, r.URL(), "hi", faultBody)
	if res.ErrorEvents != 1 || res.Done || res.ContentChunks == 0 {
		t.Fatalf("error events %d, done %v, chunks %d", res.ErrorEvents, res.Done, res.ContentChunks)
	}
	var ev struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    int    `json:"code"`
		} `json:"error"`
	}
	last := res.Events[len(res.Events)-1]
	if err := json.Unmarshal([]byte(last), &ev); err != nil || ev.Error.Message == "" || ev.Error.Code != 500 {
		t.Errorf("last event %s is not the error object", last)
	}
}

func TestFaultTruncate(t *testing.T) {
	r := startSim(t, func(c *Config) { c.FaultTruncate = 1 })
	res := streamChat(t, r.URL(), "hi", faultBody)
	if res.Done || res.ContentChunks == 0 || res.Usage != nil {
		t.Errorf("done %v, chunks %d, usage %v", res.Done, res.ContentChunks, res.Usage)
	}
}

func TestFaultStall(t *testing.T) {
	const stall = 150 * time.Millisecond
	r := startSim(t, func(c *Config) { c.FaultStall = stall })
	res := streamChat(t, r.URL(), "hi", faultBody)
	if !res.Done || res.MaxGap < stall*8/10 { // the chunk before may have arrived late
		t.Errorf("done %v, longest gap between chunks %v, want >= %v", res.Done, res.MaxGap, stall)
	}
	// A stall rate of 0 never stalls; zero latency then leaves no gap near it.
	quick := startSim(t, func(c *Config) { c.FaultStall = time.Hour; c.FaultStallRate = 0 })
	res = streamChat(t, quick.URL(), "hi", faultBody)
	if !res.Done || res.MaxGap >= stall {
		t.Errorf("rate 0: done %v, max gap %v", res.Done, res.MaxGap)
	}
}

func TestFaultMalformed(t *testing.T) {
	r := startSim(t, func(c *Config) { c.FaultMalformed = 1 })
	res := streamChat(t, r.URL(), "hi", faultBody)
	if res.InvalidJSON != 1 || !res.Done {
		t.Errorf("invalid chunks %d, done %v", res.InvalidJSON, res.Done)
	}
	if res.Usage == nil || res.Usage.CompletionTokens != 20 || res.ContentChunks != 20 {
		t.Errorf("the rest of the stream is not intact: %d chunks, usage %v", res.ContentChunks, res.Usage)
	}
}

func TestFaultDropUsage(t *testing.T) {
	r := startSim(t, func(c *Config) { c.FaultDropUsage = 1 })
	res := streamChat(t, r.URL(), "hi", faultBody)
	if res.Usage != nil || !res.Done || res.ContentChunks != 20 {
		t.Errorf("usage %v, done %v, chunks %d", res.Usage, res.Done, res.ContentChunks)
	}
}

func TestFaultsNonStreaming(t *testing.T) {
	nonStream := chat("hi", map[string]any{"stream": false, "stream_options": nil, "max_tokens": 8})

	r := startSim(t, func(c *Config) { c.FaultMidstreamError = 1 })
	resp := post(t, r.URL(), "/v1/chat/completions", nonStream)
	if e := decodeError(t, resp); resp.StatusCode != 500 || e.Code != 500 {
		t.Errorf("mid-stream error without streaming: %d %+v", resp.StatusCode, e)
	}

	r = startSim(t, func(c *Config) { c.FaultMalformed = 1 })
	resp = post(t, r.URL(), "/v1/chat/completions", nonStream)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || json.Valid(b) {
		t.Errorf("malformed: %d %s", resp.StatusCode, b)
	}

	r = startSim(t, func(c *Config) { c.FaultTruncate = 1 })
	resp = post(t, r.URL(), "/v1/chat/completions", nonStream)
	_, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated body: read error %v, want unexpected EOF", err)
	}

	r = startSim(t, func(c *Config) { c.FaultDropUsage = 1 })
	resp = post(t, r.URL(), "/v1/chat/completions", nonStream)
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if _, ok := out["usage"]; ok || out["choices"] == nil {
		t.Errorf("drop usage: %v", out)
	}
}

// The n-th request's faults depend only on --fault-seed and n.
func TestFaultDrawsFollowTheSeed(t *testing.T) {
	pattern := func(seed int64) (fails []bool) {
		r := startSim(t, func(c *Config) { c.FaultHTTP500 = 0.5; c.FaultSeed = seed })
		for i := 0; i < 24; i++ {
			resp := post(t, r.URL(), "/v1/completions", completion(ids(i, 3), nil))
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			fails = append(fails, resp.StatusCode == http.StatusInternalServerError)
		}
		return fails
	}
	a, b, c := pattern(7), pattern(7), pattern(8)
	count := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 7 twice: request %d differs", i)
		}
		if a[i] {
			count++
		}
	}
	if count == 0 || count == len(a) {
		t.Errorf("rate 0.5 failed %d of %d", count, len(a))
	}
	same := true
	for i := range a {
		same = same && a[i] == c[i]
	}
	if same {
		t.Error("seeds 7 and 8 give the same pattern")
	}
}

type errorJSON struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    int    `json:"code"`
}

// decodeError reads an OpenAI-shaped error body.
func decodeError(t *testing.T, resp *http.Response) errorJSON {
	t.Helper()
	defer resp.Body.Close()
	var out struct {
		Error *errorJSON `json:"error"`
	}
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &out); err != nil || out.Error == nil {
		t.Fatalf("status %d: body %q is not an error object", resp.StatusCode, b)
	}
	return *out.Error
}
