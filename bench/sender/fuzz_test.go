package sender

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kvbench/kvbench/internal/textclean"
)

func seedStreams(f *testing.F) [][]byte {
	files, _ := filepath.Glob("../../testdata/streams/*.sse")
	var out [][]byte
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	for _, s := range []string{
		simple, "\xEF\xBB\xBF" + simple, doneEvent, "", "data:\n\n" + simple, "data\r\rdata: [DONE]",
		roleChunk + "event: error\ndata: {\"error\":{\"message\":\"x\"}}\n\n",
		roleChunk + "data: {\"choices\":[{\"delta\":\r\ndata: {\"content\":\"x\"}}]}\r\r" + doneEvent,
		roleChunk + `data: {"choices":[{"delta":{"reasoning_content":"a\u00e9\ud83d\ude00","reasoning":"b"}}],"tensorfold":{"token_sha":"0123456789ab"}}` + "\n\n" + usageChunk(3, 1, 2) + doneEvent,
		roleChunk + "event: error\ndata: boom \x1b]52;c;eA==\x07 \xc2\x9b31m\n\n",
		roleChunk + "data: {\"choices\": \x1b[2J\x9b\n\n",
		roleChunk + `data: {"error":{"message":"\u001b]0;t\u0007\u009b","code":"\u0000"}}` + "\n\n",
		roleChunk + chatChunk("a") + `data: {"choices":[{"delta":{},"finish_reason":"st\u001bop"}],"usage":{"prompt_tokens":4611686018427387904,"completion_tokens":1099511627777,"prompt_tokens_details":{"cached_tokens":1099511627776}},"timings":{"cache_n":18446744073709551616}}` + "\n\n" + doneEvent,
	} {
		out = append(out, []byte(s))
	}
	return out
}

// FuzzParse feeds arbitrary bytes through the SSE parser, whole and in
// reads of a fuzzed size, and checks the record's invariants.
func FuzzParse(f *testing.F) {
	for _, s := range seedStreams(f) {
		f.Add(s, uint8(0), false)
		f.Add(s, uint8(3), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, step uint8, smallLimit bool) {
		limit := 0
		if smallLimit {
			limit = 256
		}
		whole := Measure(bytes.NewReader(data), &Request{KeepText: true, KeepGaps: true}, testSubmit, fixedClock, limit)
		checkInvariants(t, whole)
		var body interface{ Read([]byte) (int, error) } = &byteReader{data}
		if step > 0 {
			body = &sizedReader{b: data, sizes: []int{int(step), 1, int(step) * 7}}
		}
		pieces := Measure(body, &Request{KeepText: true, KeepGaps: true}, testSubmit, fixedClock, limit)
		checkInvariants(t, pieces)
		a, _ := json.Marshal(whole)
		b, _ := json.Marshal(pieces)
		if !bytes.Equal(a, b) || whole.Text != pieces.Text || whole.ReasoningField != pieces.ReasoningField {
			t.Fatalf("read boundaries changed the result:\nwhole  %s\npieces %s", a, b)
		}
	})
}

func checkInvariants(t *testing.T, r Result) {
	t.Helper()
	if !r.Complete {
		if r.OutputSHA256 != nil || r.TokenSHA != nil {
			t.Fatalf("fingerprint on an incomplete stream: %v %v", r.OutputSHA256, r.TokenSHA)
		}
		if r.CacheState != StateUnverified || r.UnverifiedReason == nil {
			t.Fatalf("cache state %s on an incomplete stream", r.CacheState)
		}
		if r.Error == nil {
			t.Fatalf("incomplete stream without an error")
		}
		if r.ITLMeanMs != nil || r.RoundGapP50Ms != nil || r.TokensPerChunk != nil || r.Successful {
			t.Fatalf("figures on an incomplete stream")
		}
	} else if r.Error != nil {
		t.Fatalf("complete stream with error %s", *r.Error)
	}
	switch r.CacheState {
	case StateCold, StateReused:
		if !r.Complete || r.UnverifiedReason != nil || r.PromptTokens == nil || r.CachedTokens == nil {
			t.Fatalf("%s without a complete stream and valid counts", r.CacheState)
		}
		if (r.CacheState == StateCold) != (*r.CachedTokens == 0) || *r.CachedTokens > *r.PromptTokens {
			t.Fatalf("%s with cached %d prompt %d", r.CacheState, *r.CachedTokens, *r.PromptTokens)
		}
	case StateUnverified:
		if r.UnverifiedReason == nil {
			t.Fatalf("unverified without a reason")
		}
	default:
		t.Fatalf("cache state %q", r.CacheState)
	}
	if r.TokenSHA != nil && r.OutputSHA256 == nil {
		t.Fatalf("token_sha without text")
	}
	if (r.OutputSHA256 != nil) != (r.Complete && r.Chunks > 0) {
		t.Fatalf("output_sha256 %v with complete %v and %d chunks", r.OutputSHA256, r.Complete, r.Chunks)
	}
	if r.ITLMeanMs != nil && (r.Chunks < 2 || r.CompletionTokens == nil || *r.CompletionTokens < r.Chunks) {
		t.Fatalf("ITL with %d chunks", r.Chunks)
	}
	if (r.TTFT != nil) != (r.Chunks > 0) {
		t.Fatalf("TTFT %v with %d chunks", r.TTFT, r.Chunks)
	}
	for what, p := range map[string]*string{"error_detail": r.ErrorDetail, "finish_reason": r.FinishReason} {
		if p != nil && (textclean.Line(*p) != *p || len(*p) > maxDetailLen+3) {
			t.Fatalf("%s is not one clean short line: %q", what, *p)
		}
	}
	if r.DecodeUnmeasured != nil && (!r.Successful || r.DecodeSpeed != nil || r.ITLMeanMs != nil || r.RoundGapP50Ms != nil) {
		t.Fatalf("decode_unmeasured with decode figures")
	}
	for _, c := range []*int{r.PromptTokens, r.CachedTokens, r.CompletionTokens, r.CacheN} {
		if c != nil && (*c < 0 || *c > MaxCount) {
			t.Fatalf("count %d kept", *c)
		}
	}
}

// FuzzChunkJSON checks the chunk scanner against encoding/json: a data
// line is invalid_json exactly when it is not a valid JSON object. Each
// input is tried alone, after a template chunk, and spliced into the
// template's content string (the fast path).
func FuzzChunkJSON(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"delta":{"content":"hi"}}]}`, `{"a":[1,2.5e3,-0,true,false,null,"x\u00e9"]}`,
		`{"usage":{"prompt_tokens":8.0}}`, `{"a":"\ud800"}`, `[]`, `{"a":01}`, `{"a":1,}`, `{"a" 1}`,
		`{"choices":[{"text":"a\tb"}]}`, `{"choices":[],"usage":{"prompt_tokens_details":{"cached_tokens":-0}}}`,
		" {\"a\":{}} ", `{"x":"\/\b\f\n\r\t\\\""}`, `{"x":1e}`, `{"x":-}`, `{"x":.5}`, `{"x":tru}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, x []byte) {
		if bytes.ContainsAny(x, "\r\n") {
			return
		}
		trimmed := bytes.TrimSpace(x)
		if len(trimmed) == 0 || string(trimmed) == "[DONE]" {
			return
		}
		check := func(lead string, doc []byte) Result {
			stream := lead + "data: " + string(doc) + "\n\n" + usageChunk(1, 0, 1) + doneEvent
			r := Measure(bytes.NewReader([]byte(stream)), &Request{}, testSubmit, fixedClock, 0)
			tr := bytes.TrimSpace(doc)
			object := json.Valid(doc) && len(tr) > 0 && tr[0] == '{'
			if got := errCode(r) == ErrInvalidJSON; got == object {
				t.Fatalf("%q after %q: invalid_json %v, encoding/json says valid object %v", doc, lead, got, object)
			}
			return r
		}
		check("", x)
		check(templateChunk, x)
		spliced := []byte(templatePrefix + string(x) + templateSuffix)
		r := check(templateChunk, spliced)
		if json.Valid(spliced) && bytes.IndexByte(x, '"') < 0 {
			var doc struct {
				Choices []struct {
					Delta struct {
						Content string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
			}
			json.Unmarshal(spliced, &doc)
			want := outputSHA("t"+doc.Choices[0].Delta.Content, "")
			if r.OutputSHA256 == nil || *r.OutputSHA256 != want {
				t.Fatalf("%q: spliced content decoded differently from encoding/json", x)
			}
		}
	})
}

const (
	templatePrefix = `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"`
	templateSuffix = `"},"logprobs":null,"finish_reason":null}]}`
	templateChunk  = "data: " + templatePrefix + "t" + templateSuffix + "\n\n"
)

// FuzzJSONString checks the request body's string encoder against
// encoding/json: same decoded value, invalid UTF-8 included.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "q\"b\\s/", "\x00\x1f\x7f", "é日本😀", "\xff\xfe", "\u2028\u2029", "<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ours := appendJSONString(nil, s)
		var got, want string
		if err := json.Unmarshal(ours, &got); err != nil {
			t.Fatalf("%q encodes to invalid JSON %s: %v", s, ours, err)
		}
		ref, _ := json.Marshal(s)
		json.Unmarshal(ref, &want)
		if got != want {
			t.Fatalf("%q: decodes to %q, encoding/json's to %q", s, got, want)
		}
	})
}
