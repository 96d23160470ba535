package jsonscan

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// decode walks a whole document with the scanner and builds what
// encoding/json's decoder (with UseNumber) builds: objects as maps (the
// last of a repeated key wins), arrays, strings decoded, numbers as their
// text.
func decode(b []byte) (v any, ok bool) {
	var s Scanner
	s.Reset(b)
	v, ok = value(&s)
	return v, ok && s.End()
}

func value(s *Scanner) (any, bool) {
	switch c := s.Peek(); {
	case c == '"':
		b, ok := s.AppendStr(nil)
		return string(b), ok
	case c == '{':
		m := map[string]any{}
		ok := s.Object(func(k []byte) bool {
			key := string(k)
			v, ok := value(s)
			m[key] = v
			return ok
		})
		return m, ok
	case c == '[':
		l := []any{}
		ok := s.Array(func() bool {
			v, ok := value(s)
			l = append(l, v)
			return ok
		})
		return l, ok
	case c == 't':
		return true, s.Lit("true")
	case c == 'f':
		return false, s.Lit("false")
	case c == 'n':
		return nil, s.Lit("null")
	case c == '-' || '0' <= c && c <= '9':
		raw, ok := s.NumText()
		return json.Number(raw), ok
	}
	return nil, false
}

func reference(b []byte) (any, bool) {
	if !json.Valid(b) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

var seeds = []string{
	`{"choices":[{"delta":{"content":"hi"}}]}`, `{"a":[1,2.5e3,-0,true,false,null,"x\u00e9"]}`,
	`{"a":"\ud800"}`, `{"a":"\ud83d\ude00 \ud83d"}`, `"\udc00\ud800\udc00"`, `[]`, `{}`, ` {"a":{}} `,
	`{"a":01}`, `{"a":1,}`, `{"a" 1}`, `[1,]`, `{"x":"\/\b\f\n\r\t\\\""}`, `{"x":1e}`, `{"x":-}`,
	`{"x":.5}`, `{"x":tru}`, `{"x":nul}`, "\"\xff\xfe\"", "\"a\x01\"", "\"\u2028\"", `"\u00"`, `"\x"`,
	`{"k\u0065y":1,"key":2}`, `{"a":1}{}`, `1`, `-0.0e+0`, `1E-7`, `123456789012345678901234567890`,
	"\t\r\n [ 1 , \"a\" ] \n", `"abcdefghijklmnopq\"rstuvwxyz"`, "\"abcdefgh\xc3\xa9ijklmnop\"", ``,
	strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth),
	strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
}

// The scanner accepts exactly the documents encoding/json accepts and
// reads from them the same values.
func TestScannerMatchesEncodingJSON(t *testing.T) {
	for _, s := range seeds {
		compare(t, []byte(s))
	}
}

func FuzzScanner(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { compare(t, b) })
}

func compare(t *testing.T, b []byte) {
	t.Helper()
	want, wantOK := reference(b)
	got, gotOK := decode(b)
	if gotOK != wantOK {
		t.Fatalf("%q: scanner ok %v, encoding/json ok %v", b, gotOK, wantOK)
	}
	if gotOK && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n scanner %#v\n encoding/json %#v", b, got, want)
	}
	// Skip validates the same way without decoding.
	var s Scanner
	s.Reset(b)
	if ok := s.Skip() && s.End(); ok != wantOK {
		t.Fatalf("%q: Skip ok %v, encoding/json ok %v", b, ok, wantOK)
	}
}

// Num reports integers and their magnitude as strconv reads them, and
// overflow past int64.
func TestNum(t *testing.T) {
	for _, c := range []struct {
		in                         string
		neg, integer, overflow, ok bool
		v                          uint64
	}{
		{in: "0", integer: true, ok: true},
		{in: "-0", neg: true, integer: true, ok: true},
		{in: "42", integer: true, v: 42, ok: true},
		{in: "-17", neg: true, integer: true, v: 17, ok: true},
		{in: "9223372036854775807", integer: true, v: 1<<63 - 1, ok: true},
		{in: "9223372036854775808", integer: true, overflow: true, ok: true},
		{in: "8.0", ok: true},
		{in: "1e3", ok: true},
		{in: "-2.5E-3", neg: true, ok: true},
		{in: "01"}, // reads 0; End then fails
		{in: "-", neg: true},
		{in: "1."},
		{in: "1e+"},
	} {
		var s Scanner
		s.Reset([]byte(c.in))
		neg, integer, v, overflow, ok := s.Num()
		ok = ok && s.End()
		if ok != c.ok || ok && (neg != c.neg || integer != c.integer || overflow != c.overflow) {
			t.Errorf("%s: neg %v integer %v overflow %v ok %v", c.in, neg, integer, overflow, ok)
		}
		if ok && integer && !overflow {
			n, err := strconv.ParseUint(strings.TrimPrefix(c.in, "-"), 10, 64)
			if err != nil || n != v || v != c.v {
				t.Errorf("%s: magnitude %d, strconv %d", c.in, v, n)
			}
		}
	}
}

// Str hands back the raw bytes with flags; only flagged strings need
// decoding, and decoding a flagged string is what encoding/json gives.
func TestStrFlags(t *testing.T) {
	for _, c := range []struct {
		in    string
		flags Flags
	}{
		{`"plain text"`, 0},
		{`"tab\tescaped"`, Escaped},
		{"\"caf\xc3\xa9\"", High},
		{"\"bad \xff and \\n\"", Escaped | High},
	} {
		var s Scanner
		s.Reset([]byte(c.in))
		raw, flags, ok := s.Str()
		if !ok || flags != c.flags || string(raw) != c.in[1:len(c.in)-1] || s.Pos() != len(c.in) {
			t.Errorf("%s: raw %q flags %b ok %v pos %d", c.in, raw, flags, ok, s.Pos())
		}
		var want string
		json.Unmarshal([]byte(c.in), &want)
		if got := string(AppendDecoded(nil, raw, flags)); got != want {
			t.Errorf("%s: decoded %q, encoding/json %q", c.in, got, want)
		}
	}
}

// Seek resumes inside a document: the client's template path reads one
// string in the middle of a chunk.
func TestSeek(t *testing.T) {
	doc := []byte(`{"a":"xyz","b":1}`)
	var s Scanner
	s.Reset(doc)
	s.Seek(bytes.IndexByte(doc, 'x') - 1)
	raw, _, ok := s.Str()
	if !ok || string(raw) != "xyz" || string(doc[s.Pos():]) != `,"b":1}` {
		t.Fatalf("raw %q ok %v rest %q", raw, ok, doc[s.Pos():])
	}
}

// Reading a document costs no allocation: keys, strings needing no
// decoding and skipped values are all slices of the input.
func TestNoAllocation(t *testing.T) {
	doc := []byte(`{"id":"c","choices":[{"delta":{"content":"hello"},"finish_reason":null}],"usage":{"prompt_tokens":12,"x":[1.5,true]},"k\u0065y":"v"}`)
	var s Scanner
	buf := make([]byte, 0, 64)
	n := testing.AllocsPerRun(100, func() {
		s.Reset(doc)
		s.Object(func(k []byte) bool {
			if string(k) == "id" {
				var ok bool
				buf, ok = s.AppendStr(buf[:0])
				return ok
			}
			return s.Skip()
		})
	})
	if n != 0 {
		t.Fatalf("%v allocations per document", n)
	}
}

// Past MaxDepth nesting is refused, as encoding/json refuses it.
func TestDepthLimit(t *testing.T) {
	var s Scanner
	deep := strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1)
	s.Reset([]byte(deep))
	if s.Skip() {
		t.Fatal("accepted nesting past MaxDepth")
	}
	ok := strings.Repeat(`{"a":`, MaxDepth) + "1" + strings.Repeat("}", MaxDepth)
	s.Reset([]byte(ok))
	if !s.Skip() || !s.End() {
		t.Fatal("refused nesting of MaxDepth")
	}
}
