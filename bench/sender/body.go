package sender

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// field is one pre-encoded top-level member of an extra body.
type field struct {
	key string
	val []byte // JSON
}

// encodeExtra encodes an extra-body map once, keys sorted so bodies are
// byte-for-byte reproducible.
func encodeExtra(m map[string]any) ([]field, error) {
	out := make([]field, 0, len(m))
	for k, v := range m {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return nil, fmt.Errorf("extra body key %q: %v", k, err)
		}
		out = append(out, field{k, bytes.TrimRight(b.Bytes(), "\n")})
	}
	slices.SortFunc(out, func(a, b field) int { return compareStrings(a.key, b.key) })
	return out, nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// mergeExtra lays over on top of base (over wins per key).
func mergeExtra(base, over []field) []field {
	if len(base) == 0 {
		return over
	}
	out := make([]field, 0, len(base)+len(over))
	out = append(out, over...)
	for _, f := range base {
		if lookup(over, f.key) == nil {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b field) int { return compareStrings(a.key, b.key) })
	return out
}

func lookup(fs []field, key string) []byte {
	for i := range fs {
		if fs[i].key == key {
			return fs[i].val
		}
	}
	return nil
}

// bodyWriter appends the fixed members by hand; a member an extra body
// also names takes the extra value in place.
type bodyWriter struct {
	b     []byte
	extra []field
	n     int // members written
}

func (w *bodyWriter) key(k string) (override bool) {
	if w.n > 0 {
		w.b = append(w.b, ',')
	}
	w.n++
	w.b = appendJSONString(w.b, k)
	w.b = append(w.b, ':')
	if v := lookup(w.extra, k); v != nil {
		w.b = append(w.b, v...)
		return true
	}
	return false
}

// appendBody encodes the request body (see Options for the members).
func (c *Client) appendBody(dst []byte, req *Request, ep Endpoint, extra []field) ([]byte, error) {
	w := bodyWriter{b: append(dst, '{'), extra: extra}
	fixed := [8]string{}
	nf := 0
	put := func(k string) bool { fixed[nf] = k; nf++; return !w.key(k) }

	if put("model") {
		w.b = appendJSONString(w.b, c.opts.Model)
	}
	if ep == Completions {
		if put("prompt") {
			if req.PromptIDs != nil {
				w.b = append(w.b, '[')
				for i, id := range req.PromptIDs {
					if i > 0 {
						w.b = append(w.b, ',')
					}
					w.b = strconv.AppendUint(w.b, uint64(id), 10)
				}
				w.b = append(w.b, ']')
			} else {
				w.b = appendJSONString(w.b, req.Prompt)
			}
		}
	} else if put("messages") {
		w.b = append(w.b, '[')
		for i, m := range req.Messages {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, `{"role":`...)
			w.b = appendJSONString(w.b, m.Role)
			w.b = append(w.b, `,"content":`...)
			w.b = appendJSONString(w.b, m.Content)
			w.b = append(w.b, '}')
		}
		w.b = append(w.b, ']')
	}
	if req.MaxTokens > 0 && put("max_tokens") {
		w.b = strconv.AppendInt(w.b, int64(req.MaxTokens), 10)
	}
	if put("temperature") {
		t := req.Temperature
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return dst, fmt.Errorf("temperature %v is not a JSON number", t)
		}
		w.b = appendFloat(w.b, t)
	}
	if put("stream") {
		w.b = append(w.b, "true"...)
	}
	if put("stream_options") {
		w.b = append(w.b, `{"include_usage":true}`...)
	}
	if c.opts.IgnoreEOS && put("ignore_eos") {
		w.b = append(w.b, "true"...)
	}
	if req.Seed != nil && put("seed") {
		w.b = strconv.AppendInt(w.b, *req.Seed, 10)
	}
	for _, f := range extra {
		if slices.Contains(fixed[:nf], f.key) {
			continue
		}
		w.key(f.key)
	}
	return append(w.b, '}'), nil
}

// appendFloat formats like encoding/json.
func appendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		return strconv.AppendFloat(b, f, 'e', -1, 64)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD, U+2028
// and U+2029 escaped (as encoding/json does).
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// bodyBuf is a pooled request body. The transport may read and close the
// body after Do returns (http.RoundTripper), so the buffer goes back to
// the pool only when Do and every reader handed out are done with it.
type bodyBuf struct {
	b    []byte
	refs atomic.Int32
}

const maxPooledBody = 4 << 20

// initialBody fits a short chat body (model, one message, options); a
// long prompt grows its buffer once, and the grown buffer is pooled.
const initialBody = 1 << 10

var bodyPool = sync.Pool{New: func() any { return &bodyBuf{b: make([]byte, 0, initialBody)} }}

func getBodyBuf() *bodyBuf {
	bb := bodyPool.Get().(*bodyBuf)
	bb.b = bb.b[:0]
	bb.refs.Store(1)
	return bb
}

func (bb *bodyBuf) release() {
	if bb.refs.Add(-1) == 0 && cap(bb.b) <= maxPooledBody {
		bodyPool.Put(bb)
	}
}

// reader hands out a new reader over the body, holding a reference.
func (bb *bodyBuf) reader() *bodyReader {
	bb.refs.Add(1)
	r := &bodyReader{buf: bb}
	r.Reset(bb.b)
	return r
}

type bodyReader struct {
	bytes.Reader
	buf    *bodyBuf
	closed atomic.Bool
}

func (r *bodyReader) Close() error {
	if r.closed.CompareAndSwap(false, true) {
		r.buf.release()
	}
	return nil
}
