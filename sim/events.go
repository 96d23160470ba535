package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"
)

// eventWriter writes one response's server-sent events, each flushed as
// soon as it is written. Chunks are assembled by hand from a prebuilt
// head: the hot path of --zero-latency runs allocates almost nothing.
type eventWriter struct {
	w     http.ResponseWriter
	flush http.Flusher
	kind  endpoint
	id    string
	head  []byte // `{"id":...,"object":...,"created":...,"model":...`
	buf   []byte
	err   error
}

func newEventWriter(w http.ResponseWriter, s *Server, kind endpoint) *eventWriter {
	n := s.seq.Add(1)
	e := &eventWriter{w: w, kind: kind}
	e.flush, _ = w.(http.Flusher)
	object := "chat.completion.chunk"
	e.id = fmt.Sprintf("chatcmpl-sim%016x", mix(n))
	if kind == endpointCompletions {
		object = "text_completion"
		e.id = fmt.Sprintf("cmpl-sim%016x", mix(n))
	}
	h := []byte(`{"id":`)
	h = appendJSONString(h, e.id)
	h = append(h, `,"object":`...)
	h = appendJSONString(h, object)
	h = append(h, `,"created":`...)
	h = strconv.AppendInt(h, time.Now().Unix(), 10)
	h = append(h, `,"model":`...)
	h = appendJSONString(h, s.cfg.Model)
	e.head = h
	return e
}

func (e *eventWriter) startStream() {
	h := e.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	e.w.WriteHeader(http.StatusOK)
	e.doFlush()
}

func (e *eventWriter) doFlush() {
	if e.flush != nil {
		e.flush.Flush()
	}
}

// send writes buf as one `data:` event.
func (e *eventWriter) send() {
	if e.err != nil {
		return
	}
	e.buf = append(e.buf, "\n\n"...)
	if _, err := e.w.Write(e.buf); err != nil {
		e.err = err
		return
	}
	e.doFlush()
}

// choice starts an event with one choice and leaves the choice open.
func (e *eventWriter) choice() {
	e.buf = append(e.buf[:0], "data: "...)
	e.buf = append(e.buf, e.head...)
	e.buf = append(e.buf, `,"choices":[{"index":0,`...)
}

func (e *eventWriter) endChoice(finish string) {
	e.buf = append(e.buf, `,"logprobs":null,"finish_reason":`...)
	if finish == "" {
		e.buf = append(e.buf, "null"...)
	} else {
		e.buf = appendJSONString(e.buf, finish)
	}
	e.buf = append(e.buf, "}]}"...)
	e.send()
}

func (e *eventWriter) roleChunk() {
	e.choice()
	e.buf = append(e.buf, `"delta":{"role":"assistant","content":""}`...)
	e.endChoice("")
}

func (e *eventWriter) textChunk(p piece) {
	e.choice()
	switch {
	case e.kind == endpointCompletions:
		e.buf = append(e.buf, `"text":`...)
	case p.reasoning:
		e.buf = append(e.buf, `"delta":{"reasoning_content":`...)
	default:
		e.buf = append(e.buf, `"delta":{"content":`...)
	}
	e.buf = appendJSONString(e.buf, p.text)
	if e.kind == endpointChat {
		e.buf = append(e.buf, '}')
	}
	e.endChoice("")
}

// finishChunk carries finish_reason and no text.
func (e *eventWriter) finishChunk(finish string) {
	e.choice()
	if e.kind == endpointCompletions {
		e.buf = append(e.buf, `"text":""`...)
	} else {
		e.buf = append(e.buf, `"delta":{}`...)
	}
	e.endChoice(finish)
}

func (e *eventWriter) usageChunk(u wireUsage) {
	raw, _ := json.Marshal(u)
	e.buf = append(e.buf[:0], "data: "...)
	e.buf = append(e.buf, e.head...)
	e.buf = append(e.buf, `,"choices":[],"usage":`...)
	e.buf = append(e.buf, raw...)
	e.buf = append(e.buf, '}')
	e.send()
}

// errorEvent is the JSON error object an engine sends inside a 200 stream
// when it fails after the headers went out.
func (e *eventWriter) errorEvent(msg string) {
	e.buf = append(e.buf[:0], "data: "...)
	e.buf = append(e.buf, errorBody(http.StatusInternalServerError, "InternalServerError", msg)...)
	e.send()
}

// malformedChunk is a chunk cut off in the middle of its JSON.
func (e *eventWriter) malformedChunk() {
	e.choice()
	e.buf = append(e.buf, `"delta":{"content":"`...)
	e.send()
}

func (e *eventWriter) done() {
	e.buf = append(e.buf[:0], "data: [DONE]"...)
	e.send()
}

// appendJSONString appends s as a JSON string (no HTML escaping).
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
