package textclean

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"
)

func TestJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":"plain","n":1.50}`, `{"a":"plain","n":1.50}`},
		{`{"m":"x\u001b]52;c;aGk=\u0007y"}`, `{"m":"x\ufffd]52;c;aGk=\ufffdy"}`},
		{`{"m":"\u001B[2J\b\f\r\t\n\"\\\/"}`, `{"m":"\ufffd[2J\ufffd\ufffd\ufffd\t\n\"\\\/"}`},
		{`{"c1":"` + "\u009b" + `31m\u009B\u0085\u00a0"}`, `{"c1":"` + "\uFFFD" + `31m\ufffd\ufffd\u00a0"}`},
		{"{\"raw\":\"\x9b\x7f ok\"}", "{\"raw\":\"\uFFFD\uFFFD ok\"}"},
		{`{"k\u001bey":["\u0000",true,null]}`, `{"k\ufffdey":["\ufffd",true,null]}`},
		// Surrogates decode as before (a pair is one rune, a lone one U+FFFD).
		{`["\ud83d\ude00","\ud800"]`, `["\ud83d\ude00","\ud800"]`},
		// What a decoder refuses stays refused: a raw control character
		// in a string, a short escape at the end.
		{"{\"a\":\"\x1b\"}", "{\"a\":\"\x1b\"}"},
		{`"\u00`, `"\u00`},
		{"\x1b{}", "\x1b{}"},
	} {
		got := string(JSON([]byte(tc.in)))
		if got != tc.want {
			t.Errorf("JSON(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestJSONKeepsCleanInput(t *testing.T) {
	b := []byte(`{"model":"llama-3","note":"tab\there, line\nthere, ü 日本"}`)
	if got := JSON(b); &got[0] != &b[0] {
		t.Error("clean JSON was copied")
	}
	if n := testing.AllocsPerRun(100, func() { JSON(b) }); n != 0 {
		t.Errorf("%v allocations for clean JSON", n)
	}
}

// tokens is the token stream of a valid document, numbers as written.
func tokens(t *testing.T, b []byte) []json.Token {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out []json.Token
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		out = append(out, tok)
	}
}

// A valid document stays valid and decodes to what it decoded to with
// every string cleaned; nothing a decoder refused becomes accepted.
func FuzzJSON(f *testing.F) {
	f.Add([]byte(`{"a":"x\u001b]52;c;aGk=\u0007","b":[1,"\u009b\u007f"],"c":{"d\r":"` + "\u0085\x9b" + `"}}`))
	f.Add([]byte(`["\ud800\udc00\u0008", "\\u001b"]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out := JSON(b)
		valid := json.Valid(b)
		if json.Valid(out) != valid {
			t.Fatalf("JSON(%q) = %q: valid %v, was %v", b, out, !valid, valid)
		}
		if !valid {
			return
		}
		before, after := tokens(t, b), tokens(t, out)
		for i := range before {
			if s, ok := before[i].(string); ok {
				before[i] = Clean(s)
			}
		}
		if !reflect.DeepEqual(after, before) {
			t.Fatalf("JSON(%q) decodes to %#v, want %#v", b, after, before)
		}
		if string(JSON(out)) != string(out) {
			t.Fatalf("JSON is not idempotent on %q", b)
		}
	})
}
