package sender

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math"
	"strings"
	"testing"
	"time"
)

// seg is a piece of a stream that arrives at a given time after submit.
type seg struct {
	at   time.Duration
	data string
}

// timedBody replays segments; its clock reads the arrival time of the
// segment last returned, so chunk times are exact.
type timedBody struct {
	segs []seg
	i    int
	cur  time.Duration
	base time.Time
}

func (b *timedBody) Read(p []byte) (int, error) {
	if b.i >= len(b.segs) {
		return 0, io.EOF
	}
	s := &b.segs[b.i]
	n := copy(p, s.data)
	b.cur = s.at
	if n < len(s.data) {
		s.data = s.data[n:]
	} else {
		b.i++
	}
	return n, nil
}

func (b *timedBody) now() time.Time { return b.base.Add(b.cur) }

var testSubmit = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// measureSegs measures segments with an exact clock.
func measureSegs(req *Request, maxLine int, segs ...seg) Result {
	b := &timedBody{segs: segs, base: testSubmit}
	if req == nil {
		req = &Request{ID: "r"}
	}
	return Measure(b, req, testSubmit, b.now, maxLine)
}

// eventsEvery splits a stream into its events (blank-line separated) and
// delivers event k at (k+1)*step.
func eventsEvery(stream string, step time.Duration) []seg {
	var segs []seg
	rest := stream
	for k := 0; rest != ""; k++ {
		i := len(rest)
		if j := strings.Index(rest, "\n\n"); j >= 0 {
			i = j + 2
		}
		if j := strings.Index(rest, "\r\n\r\n"); j >= 0 && j+4 < i {
			i = j + 4
		}
		segs = append(segs, seg{time.Duration(k+1) * step, rest[:i]})
		rest = rest[i:]
	}
	return segs
}

// measureString measures a stream delivered in one read at 10ms.
func measureString(stream string) Result {
	return measureSegs(nil, 0, seg{10 * time.Millisecond, stream})
}

// byteReader returns one byte per read.
type byteReader struct{ b []byte }

func (r *byteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	p[0] = r.b[0]
	r.b = r.b[1:]
	return 1, nil
}

// sizedReader returns reads of the given sizes in turn.
type sizedReader struct {
	b     []byte
	sizes []int
	k     int
}

func (r *sizedReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(r.sizes) > 0 {
		n = max(1, r.sizes[r.k%len(r.sizes)])
		r.k++
	}
	n = min(n, len(r.b), len(p))
	copy(p, r.b[:n])
	r.b = r.b[n:]
	return n, nil
}

func fixedClock() time.Time { return testSubmit.Add(time.Millisecond) }

// refOutputSHA is an independent oracle for output_sha256: it decodes each
// data line with encoding/json (single-line events only).
func refOutputSHA(t *testing.T, stream string) string {
	t.Helper()
	var content, reasoning bytes.Buffer
	for _, line := range strings.Split(strings.ReplaceAll(stream, "\r\n", "\n"), "\n") {
		data, ok := strings.CutPrefix(line, "data:")
		data = strings.TrimSpace(data)
		if !ok || data == "[DONE]" || data == "" {
			continue
		}
		var doc struct {
			Choices []struct {
				Text  *string `json:"text"`
				Delta struct {
					Content          any `json:"content"`
					ReasoningContent any `json:"reasoning_content"`
					Reasoning        any `json:"reasoning"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &doc); err != nil {
			t.Fatalf("oracle: %v in %s", err, data)
		}
		for _, c := range doc.Choices {
			if s, ok := c.Delta.Content.(string); ok {
				content.WriteString(s)
			}
			if c.Text != nil {
				content.WriteString(*c.Text)
			}
			if s, ok := c.Delta.ReasoningContent.(string); ok && s != "" {
				reasoning.WriteString(s)
			} else if s, ok := c.Delta.Reasoning.(string); ok {
				reasoning.WriteString(s)
			}
		}
	}
	return outputSHA(content.String(), reasoning.String())
}

func outputSHA(content, reasoning string) string {
	a := sha256.Sum256([]byte(content))
	b := sha256.Sum256([]byte(reasoning))
	s := sha256.Sum256(append(a[:], b[:]...))
	return hex.EncodeToString(s[:])
}

func errCode(r Result) string {
	if r.Error == nil {
		return ""
	}
	return *r.Error
}

func reason(r Result) string {
	if r.UnverifiedReason == nil {
		return ""
	}
	return *r.UnverifiedReason
}

func intp(p *int) string {
	if p == nil {
		return "null"
	}
	return itoa(*p)
}

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }

func checkFloat(t *testing.T, name string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s = null, want %v", name, want)
		return
	}
	if !approx(*got, want) {
		t.Errorf("%s = %v, want %v", name, *got, want)
	}
}

func checkNull(t *testing.T, name string, got *float64) {
	t.Helper()
	if got != nil {
		t.Errorf("%s = %v, want null", name, *got)
	}
}

// chatChunk is a vLLM-style content chunk.
func chatChunk(content string) string {
	b, _ := json.Marshal(content)
	return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":` + string(b) + `},"logprobs":null,"finish_reason":null}]}` + "\n\n"
}

func usageChunk(prompt, cached, completion int) string {
	return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":` + itoa(prompt) +
		`,"total_tokens":` + itoa(prompt+completion) + `,"completion_tokens":` + itoa(completion) +
		`,"prompt_tokens_details":{"cached_tokens":` + itoa(cached) + `}}}` + "\n\n"
}

const (
	roleChunk   = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n"
	finishChunk = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop"}]}` + "\n\n"
	doneEvent   = "data: [DONE]\n\n"
)

// vllmStream is a complete chat stream with the given content chunks.
func vllmStream(prompt, cached int, pieces ...string) string {
	var b strings.Builder
	b.WriteString(roleChunk)
	for _, p := range pieces {
		b.WriteString(chatChunk(p))
	}
	b.WriteString(finishChunk)
	b.WriteString(usageChunk(prompt, cached, len(pieces)))
	b.WriteString(doneEvent)
	return b.String()
}
