package sender

import (
	"strings"
	"testing"
	"time"
)

// simple is a complete reused stream used by the framing tests.
var simple = vllmStream(20, 16, "Hello", ",", " world")

func TestLineEndings(t *testing.T) {
	want := measureString(simple)
	if !want.Successful || want.Chunks != 3 || want.OutputSHA256 == nil {
		t.Fatalf("baseline: %+v", want)
	}
	crlf := strings.ReplaceAll(simple, "\n", "\r\n")
	cr := strings.ReplaceAll(simple, "\n", "\r")
	mixed := strings.Replace(strings.Replace(simple, "\n\n", "\r\n\r\n", 1), "\n\n", "\r\r", 1)
	for name, s := range map[string]string{"CRLF": crlf, "CR": cr, "mixed": mixed} {
		for _, body := range []interface{ Read([]byte) (int, error) }{
			strings.NewReader(s), &byteReader{[]byte(s)},
		} {
			r := Measure(body, &Request{}, testSubmit, fixedClock, 0)
			if !r.Complete || r.Chunks != 3 || r.OutputSHA256 == nil || *r.OutputSHA256 != *want.OutputSHA256 ||
				r.CacheState != StateReused || intp(r.CachedTokens) != "16" {
				t.Errorf("%s: complete %v chunks %d hash %v state %s err %v", name, r.Complete, r.Chunks,
					r.OutputSHA256, r.CacheState, r.ErrorDetail)
			}
		}
	}
	// A CR ending one read and its LF starting the next are one line end:
	// an extra empty line would cut this two-line event in half.
	multi := "data: {\"choices\":[{\"delta\":\r\ndata: {\"content\":\"x\"}}]}\r\n\r\n" + doneEvent
	r := Measure(&sizedReader{b: []byte(multi), sizes: []int{strings.Index(multi, "\n")}}, &Request{}, testSubmit, fixedClock, 0)
	if !r.Complete || r.Chunks != 1 {
		t.Errorf("CRLF split between reads inside an event: complete %v chunks %d %v", r.Complete, r.Chunks, r.ErrorDetail)
	}
}

func TestBOM(t *testing.T) {
	// The BOM is followed by a content chunk: were it not skipped, the
	// field name would be "\uFEFFdata" and the chunk lost.
	noRole := simple[len(roleChunk):]
	want := measureString(noRole)
	withBOM := "\xEF\xBB\xBF" + noRole
	for _, body := range []interface{ Read([]byte) (int, error) }{
		strings.NewReader(withBOM), &byteReader{[]byte(withBOM)},
	} {
		r := Measure(body, &Request{}, testSubmit, fixedClock, 0)
		if !r.Complete || r.Chunks != 3 || *r.OutputSHA256 != *want.OutputSHA256 {
			t.Errorf("BOM: complete %v chunks %d %v", r.Complete, r.Chunks, r.ErrorDetail)
		}
	}
	// Only a leading BOM is skipped: inside the stream it makes the line's
	// field name "\uFEFFdata", which is ignored.
	r := measureString(roleChunk + "\xEF\xBB\xBF" + chatChunk("a") + chatChunk("b") + usageChunk(1, 0, 2) + doneEvent)
	if r.Chunks != 1 || *r.OutputSHA256 != outputSHA("b", "") {
		t.Errorf("BOM mid-stream: chunks %d", r.Chunks)
	}
}

func TestCommentsAndUnknownFields(t *testing.T) {
	s := ": keep-alive\n\n" + roleChunk +
		": comment inside an event\n" + "id: 7\nretry: 1000\n" + strings.TrimPrefix(chatChunk("a"), "") +
		":\n\n" + chatChunk("b") + finishChunk + usageChunk(5, 0, 2) + ": bye\n\n" + doneEvent
	r := measureString(s)
	if !r.Complete || r.Chunks != 2 || r.CacheState != StateCold || *r.OutputSHA256 != outputSHA("ab", "") {
		t.Errorf("comments: complete %v chunks %d state %s err %v", r.Complete, r.Chunks, r.CacheState, r.ErrorDetail)
	}
}

func TestEmptyData(t *testing.T) {
	// "data:" and a bare "data" line carry an empty value: an event whose
	// data is empty, or a blank line inside multi-line data.
	for _, s := range []string{"data:\n\n", "data\n\n", "data: \n\n", "data:\ndata:\n\n", "event: error\ndata:\n\n"} {
		r := measureString(s + simple)
		if s == "event: error\ndata:\n\n" {
			if errCode(r) != ErrStreamError {
				t.Errorf("%q: %q", s, errCode(r))
			}
			continue
		}
		if !r.Complete || r.Chunks != 3 {
			t.Errorf("%q: complete %v chunks %d %v", s, r.Complete, r.Chunks, r.ErrorDetail)
		}
	}
}

func TestMultiLineData(t *testing.T) {
	s := roleChunk +
		"data: {\"choices\":[{\"index\":0,\n" +
		"data:  \"delta\":{\"content\":\"two\\nlines\"}}]}\n\n" +
		"data:{\"choices\":[{\"delta\":{\"content\":\"!\"}}]}\n\n" + // no space after the colon
		usageChunk(3, 0, 2) + doneEvent
	r := measureString(s)
	if !r.Complete || r.Chunks != 2 || *r.OutputSHA256 != outputSHA("two\nlines!", "") {
		t.Errorf("multi-line data: complete %v chunks %d err %v", r.Complete, r.Chunks, r.ErrorDetail)
	}
	// Lines are joined with a newline: a string split over two data lines
	// holds a raw newline, which JSON forbids.
	bad := "data: {\"choices\":[{\"delta\":{\"content\":\"a\ndata: b\"}}]}\n\n" + doneEvent
	if r := measureString(bad); errCode(r) != ErrInvalidJSON {
		t.Errorf("newline-joined string: error %q, want invalid_json", errCode(r))
	}
}

func TestEventError(t *testing.T) {
	s := roleChunk + chatChunk("hi") +
		"event: error\ndata: {\"error\":{\"message\":\"worker died\",\"type\":\"server_error\",\"code\":\"E42\"}}\n\n" +
		usageChunk(3, 0, 1) + doneEvent
	r := measureString(s)
	if errCode(r) != ErrStreamError || r.Complete || r.Successful || reason(r) != ReasonError {
		t.Fatalf("event: error: %s complete %v reason %s", errCode(r), r.Complete, reason(r))
	}
	if d := *r.ErrorDetail; !strings.Contains(d, "worker died") || !strings.Contains(d, "server_error") || !strings.Contains(d, "E42") {
		t.Errorf("detail %q", d)
	}
	if r.OutputSHA256 != nil || r.ITLMeanMs != nil {
		t.Errorf("failed stream has figures: %v %v", r.OutputSHA256, r.ITLMeanMs)
	}
	// A plain-text error event keeps its text as the detail.
	r = measureString(roleChunk + "event: error\ndata: overloaded, retry later\n\n")
	if errCode(r) != ErrStreamError || *r.ErrorDetail != "overloaded, retry later" {
		t.Errorf("text error event: %s %q", errCode(r), *r.ErrorDetail)
	}
	// The event type applies to one event only.
	r = measureString("event: error\n\n" + simple)
	if errCode(r) != "" {
		t.Errorf("an event: error without data must not fail later events: %s", errCode(r))
	}
}

func TestErrorObjectIn200Stream(t *testing.T) {
	for name, ev := range map[string]string{
		"error object": `data: {"error":{"message":"boom","type":"server_error","code":500}}`,
		"error string": `data: {"error":"boom"}`,
		"vllm object":  `data: {"object":"error","message":"boom","type":"BadRequestError","param":null,"code":400}`,
	} {
		r := measureString(roleChunk + chatChunk("x") + ev + "\n\n" + usageChunk(3, 0, 1) + doneEvent)
		if errCode(r) != ErrStreamError || !strings.Contains(*r.ErrorDetail, "boom") || r.Complete || r.Successful {
			t.Errorf("%s: %s %v complete %v", name, errCode(r), r.ErrorDetail, r.Complete)
		}
	}
	// "error": null is no error.
	r := measureString(strings.Replace(simple, `"choices":[]`, `"error":null,"choices":[]`, 1))
	if errCode(r) != "" || !r.Successful {
		t.Errorf("error: null: %s", errCode(r))
	}
}

func TestMalformedJSON(t *testing.T) {
	for _, bad := range []string{
		`{"choices":[{"delta":{"content":"a"}}]`, // unterminated
		`{"choices":[{"delta":{"content":"a"}}]}}`,
		`{"choices":[{"delta":{"content":"a\q"}}]}`,
		`{"choices":[],"usage":{"prompt_tokens":01}}`,
		`{"choices":[] "x":1}`,
		`[1,2]`,
		`"just a string"`,
		`{"choices":[{"delta":{"content":"tab	inside"}}]}`,
	} {
		r := measureString(roleChunk + "data: " + bad + "\n\n" + usageChunk(3, 0, 1) + doneEvent)
		if errCode(r) != ErrInvalidJSON || r.Complete || reason(r) != ReasonError {
			t.Errorf("%s: error %q complete %v", bad, errCode(r), r.Complete)
		}
		if r.ErrorDetail == nil || !strings.Contains(*r.ErrorDetail, "malformed JSON") {
			t.Errorf("%s: detail %v", bad, r.ErrorDetail)
		}
	}
}

func TestEOFWithoutDone(t *testing.T) {
	s := roleChunk + chatChunk("a") + chatChunk("b") + finishChunk + usageChunk(4, 0, 2)
	r := measureString(s)
	if r.Complete || errCode(r) != ErrIncomplete || r.Successful || reason(r) != ReasonIncomplete {
		t.Fatalf("complete %v error %q reason %s", r.Complete, errCode(r), reason(r))
	}
	if !strings.Contains(*r.ErrorDetail, "finish_reason") {
		t.Errorf("detail %q should say the stream ended after finish_reason", *r.ErrorDetail)
	}
	if r.OutputSHA256 != nil || r.TokenSHA != nil || r.ITLMeanMs != nil || r.RoundGapP50Ms != nil || r.TokensPerChunk != nil || r.DecodeSpeed != nil {
		t.Errorf("incomplete stream has figures")
	}
	if intp(r.PromptTokens) != "4" || intp(r.CompletionTokens) != "2" {
		t.Errorf("usage must stay recorded: %s %s", intp(r.PromptTokens), intp(r.CompletionTokens))
	}
	// A truncated last chunk at EOF is incomplete, not invalid JSON.
	r = measureString(roleChunk + chatChunk("a") + `data: {"choices":[{"delta":{"cont`)
	if errCode(r) != ErrIncomplete {
		t.Errorf("truncated chunk: %q", errCode(r))
	}
	// [DONE] without the final blank line still completes.
	r = measureString(strings.TrimSuffix(simple, "\n\n"))
	if !r.Complete || errCode(r) != "" {
		t.Errorf("[DONE] at EOF without blank line: %v %v", r.Complete, r.ErrorDetail)
	}
	// An empty body.
	r = measureString("")
	if r.Complete || errCode(r) != ErrIncomplete || reason(r) != ReasonIncomplete {
		t.Errorf("empty body: %v %q", r.Complete, errCode(r))
	}
}

func TestDoneWithNothingBefore(t *testing.T) {
	for _, s := range []string{
		doneEvent,
		": ping\n\n" + doneEvent,
		`data: {"id":"x","choices":[]}` + "\n\n" + doneEvent, // neither a choice nor usage
		`data: {"id":"x","choices":[],"usage":null}` + "\n\n" + doneEvent,
	} {
		r := measureString(s)
		if r.Complete || errCode(r) != ErrIncomplete || reason(r) != ReasonIncomplete {
			t.Errorf("%q: complete %v error %q", s, r.Complete, errCode(r))
		}
	}
	// A usage-only chunk before [DONE] is enough.
	r := measureString(usageChunk(7, 0, 0) + doneEvent)
	if !r.Complete || r.CacheState != StateCold || r.Successful {
		t.Errorf("usage-only: complete %v state %s successful %v", r.Complete, r.CacheState, r.Successful)
	}
	if r.OutputSHA256 != nil || r.TTFT != nil {
		t.Errorf("usage-only reply has a fingerprint or TTFT")
	}
}

func TestLineTooLong(t *testing.T) {
	long := chatChunk(strings.Repeat("x", 200))
	for name, body := range map[string]string{
		"in one read":    roleChunk + long + doneEvent,
		"never finished": roleChunk + "data: " + strings.Repeat("y", 500),
		"joined data":    roleChunk + "data: {\"choices\":\ndata: " + strings.Repeat(" ", 90) + "\ndata: []}\n\n" + doneEvent,
	} {
		for _, rd := range []interface{ Read([]byte) (int, error) }{strings.NewReader(body), &byteReader{[]byte(body)}} {
			r := Measure(rd, &Request{}, testSubmit, fixedClock, 128)
			if errCode(r) != ErrLineTooLong || r.Complete || !strings.Contains(*r.ErrorDetail, "128") {
				t.Errorf("%s: error %q", name, errCode(r))
			}
		}
	}
	// At the limit is fine, and the buffer grows past its initial size.
	line := chatChunk(strings.Repeat("z", 40<<10))
	r := Measure(strings.NewReader(roleChunk+line+usageChunk(1, 0, 1)+doneEvent), &Request{}, testSubmit, fixedClock, len(line)-2)
	if errCode(r) != "" || r.Chunks != 1 {
		t.Errorf("line at the limit: %q %v", errCode(r), r.ErrorDetail)
	}
	r = Measure(strings.NewReader(roleChunk+line+doneEvent), &Request{}, testSubmit, fixedClock, len(line)-3)
	if errCode(r) != ErrLineTooLong {
		t.Errorf("line one byte over: %q", errCode(r))
	}
}

func TestUsageKeptLast(t *testing.T) {
	// Split over two chunks: the later usage replaces the earlier whole.
	split := roleChunk + chatChunk("a") +
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":0,"prompt_tokens_details":{"cached_tokens":0}}}` + "\n\n" +
		`data: {"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":4}}}` + "\n\n" +
		`data: {"choices":[],"usage":null}` + "\n\n" + doneEvent
	r := measureString(split)
	if r.CacheState != StateReused || intp(r.CachedTokens) != "4" || intp(r.CompletionTokens) != "3" {
		t.Errorf("split usage: %s cached %s completion %s", r.CacheState, intp(r.CachedTokens), intp(r.CompletionTokens))
	}
	// Not merged: a last usage without details is details_absent even
	// though an earlier one had them.
	r = measureString(roleChunk + chatChunk("a") + usageChunk(10, 0, 1) +
		`data: {"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":1}}` + "\n\n" + doneEvent)
	if reason(r) != ReasonDetailsAbsent || r.CachedTokens != nil {
		t.Errorf("last usage wins whole: %s %s", reason(r), intp(r.CachedTokens))
	}
	// Running totals on every chunk.
	var b strings.Builder
	b.WriteString(roleChunk)
	for i := 1; i <= 5; i++ {
		b.WriteString(`data: {"choices":[{"delta":{"content":"t"}}],"usage":{"prompt_tokens":9,"completion_tokens":` + itoa(i) +
			`,"prompt_tokens_details":{"cached_tokens":0}}}` + "\n\n")
	}
	b.WriteString(doneEvent)
	r = measureString(b.String())
	if intp(r.CompletionTokens) != "5" || r.CacheState != StateCold || r.Chunks != 5 {
		t.Errorf("running totals: completion %s state %s chunks %d", intp(r.CompletionTokens), r.CacheState, r.Chunks)
	}
}

func TestCountValidity(t *testing.T) {
	withUsage := func(u string) Result {
		return measureString(roleChunk + chatChunk("a") + `data: {"choices":[],"usage":` + u + "}\n\n" + doneEvent)
	}
	cases := []struct {
		usage  string
		state  string
		reason string
		prompt string
		cached string
	}{
		{`{"prompt_tokens":8,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":0}}`, StateCold, "", "8", "0"},
		{`{"prompt_tokens":8,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":8}}`, StateReused, "", "8", "8"},
		{`{"prompt_tokens":8,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":true}}`, StateUnverified, ReasonInvalidCount, "8", "null"},
		{`{"prompt_tokens":8,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":8.0}}`, StateUnverified, ReasonInvalidCount, "8", "null"},
		{`{"prompt_tokens":8,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":"8"}}`, StateUnverified, ReasonInvalidCount, "8", "null"},
		{`{"prompt_tokens":8,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":-1}}`, StateUnverified, ReasonInvalidCount, "8", "null"},
		{`{"prompt_tokens":8,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":8e0}}`, StateUnverified, ReasonInvalidCount, "8", "null"},
		{`{"prompt_tokens":8,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":99999999999999999999}}`, StateUnverified, ReasonInvalidCount, "8", "null"},
		{`{"prompt_tokens":8,"completion_tokens":1,"prompt_tokens_details":{}}`, StateUnverified, ReasonDetailsAbsent, "8", "null"},
		{`{"prompt_tokens":8,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":null}}`, StateUnverified, ReasonDetailsAbsent, "8", "null"},
		{`{"prompt_tokens":8,"completion_tokens":1,"prompt_tokens_details":null}`, StateUnverified, ReasonDetailsAbsent, "8", "null"},
		{`{"prompt_tokens":8,"completion_tokens":1}`, StateUnverified, ReasonDetailsAbsent, "8", "null"},
		{`{"prompt_tokens":8,"completion_tokens":1,"prompt_tokens_details":7}`, StateUnverified, ReasonInvalidCount, "8", "null"},
		{`{"prompt_tokens":true,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":0}}`, StateUnverified, ReasonInvalidCount, "null", "0"},
		{`{"prompt_tokens":8.0,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":0}}`, StateUnverified, ReasonInvalidCount, "null", "0"},
		{`{"prompt_tokens":"8","completion_tokens":1,"prompt_tokens_details":{"cached_tokens":0}}`, StateUnverified, ReasonInvalidCount, "null", "0"},
		{`{"prompt_tokens":-1,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":0}}`, StateUnverified, ReasonInvalidCount, "null", "0"},
		{`{"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":0}}`, StateUnverified, ReasonInvalidCount, "null", "0"},
		{`{"prompt_tokens":8,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":9}}`, StateUnverified, ReasonCachedGtPrompt, "8", "9"},
		{`"lots"`, StateUnverified, ReasonInvalidCount, "null", "null"},
	}
	for _, c := range cases {
		r := withUsage(c.usage)
		if r.CacheState != c.state || reason(r) != c.reason || intp(r.PromptTokens) != c.prompt || intp(r.CachedTokens) != c.cached {
			t.Errorf("%s: %s/%s prompt %s cached %s, want %s/%s %s %s", c.usage, r.CacheState, reason(r),
				intp(r.PromptTokens), intp(r.CachedTokens), c.state, c.reason, c.prompt, c.cached)
		}
	}
	// No usage at all.
	r := measureString(roleChunk + chatChunk("a") + finishChunk + doneEvent)
	if reason(r) != ReasonUsageMissing || !r.Successful {
		t.Errorf("no usage: %s successful %v", reason(r), r.Successful)
	}
	// llama.cpp cache_n follows the same validity rule.
	r = measureString(roleChunk + chatChunk("a") + `data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":2}},"timings":{"cache_n":2.5}}` + "\n\n" + doneEvent)
	if r.CacheN != nil || r.CacheState != StateReused {
		t.Errorf("cache_n 2.5: %s %s", intp(r.CacheN), r.CacheState)
	}
}

func TestReceiptPrecedence(t *testing.T) {
	// An error outranks everything, incompleteness outranks usage.
	r := measureString(roleChunk + chatChunk("a") + `data: {"choices":[],"usage":{"prompt_tokens":1,"prompt_tokens_details":{"cached_tokens":9}}}` + "\n\n" + "data: {bad\n\n")
	if reason(r) != ReasonError {
		t.Errorf("error first: %s", reason(r))
	}
	r = measureString(roleChunk + chatChunk("a"))
	if reason(r) != ReasonIncomplete {
		t.Errorf("incomplete before usage_missing: %s", reason(r))
	}
	// details_absent before invalid_count.
	r = measureString(roleChunk + `data: {"choices":[],"usage":{"prompt_tokens":"x"}}` + "\n\n" + doneEvent)
	if reason(r) != ReasonDetailsAbsent {
		t.Errorf("details_absent before invalid_count: %s", reason(r))
	}
	// invalid_count before cached_gt_prompt.
	r = measureString(roleChunk + `data: {"choices":[],"usage":{"prompt_tokens":-5,"prompt_tokens_details":{"cached_tokens":9}}}` + "\n\n" + doneEvent)
	if reason(r) != ReasonInvalidCount {
		t.Errorf("invalid_count before cached_gt_prompt: %s", reason(r))
	}
}

func TestFirstTokenClock(t *testing.T) {
	ms := time.Millisecond
	r := measureSegs(nil, 0,
		seg{5 * ms, roleChunk},
		seg{10 * ms, `data: {"choices":[{"delta":{"role":"assistant","content":null}}]}` + "\n\n"},
		seg{15 * ms, `data: {"choices":[{"delta":{"content":""}}]}` + "\n\n"},
		seg{20 * ms, `data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":0}}` + "\n\n"},
		seg{25 * ms, `data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}` + "\n\n"},
		seg{30 * ms, `data: {"choices":[{"delta":{"reasoning_content":""}}]}` + "\n\n"},
		seg{35 * ms, `data: {"choices":[{"text":""}]}` + "\n\n"},
		seg{40 * ms, `data: {"choices":[{"delta":{"reasoning":"hmm"}}]}` + "\n\n"},
		seg{50 * ms, chatChunk("x")},
		seg{60 * ms, usageChunk(3, 0, 2) + doneEvent},
	)
	checkFloat(t, "ttft_s", r.TTFT, 0.040)
	checkFloat(t, "first_token_time", r.FirstTokenTime, UnixSeconds(testSubmit)+0.040)
	if r.Chunks != 2 || r.ReasoningField != "reasoning" {
		t.Errorf("chunks %d field %q", r.Chunks, r.ReasoningField)
	}
	if !r.FirstToken.Equal(testSubmit.Add(40*ms)) || !r.Finish.Equal(testSubmit.Add(60*ms)) {
		t.Errorf("monotonic instants %v %v", r.FirstToken, r.Finish)
	}
	// Completions text.
	r = measureSegs(nil, 0, seg{5 * ms, `data: {"choices":[{"text":"","index":0}]}` + "\n\n"},
		seg{9 * ms, `data: {"choices":[{"text":"a","index":0}]}` + "\n\n" + usageChunk(1, 0, 1) + doneEvent})
	checkFloat(t, "ttft_s (text)", r.TTFT, 0.009)
}

func TestToolCallOnly(t *testing.T) {
	s := roleChunk +
		`data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":""}}]}}]}` + "\n\n" +
		`data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":1}"}}]}}]}` + "\n\n" +
		`data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":6,"prompt_tokens_details":{"cached_tokens":0}},"tensorfold":{"token_sha":"0123456789ab"}}` + "\n\n" + doneEvent
	r := measureString(s)
	if r.TTFT != nil || r.FirstTokenTime != nil || r.Chunks != 0 {
		t.Errorf("tool calls stopped the clock: %v chunks %d", r.TTFT, r.Chunks)
	}
	if r.OutputSHA256 != nil || r.TokenSHA != nil {
		t.Errorf("tool-call-only reply has fingerprints %v %v", r.OutputSHA256, r.TokenSHA)
	}
	if !r.Complete || !r.Successful || r.CacheState != StateCold {
		t.Errorf("complete %v successful %v state %s", r.Complete, r.Successful, r.CacheState)
	}
	if r.PrefillTPS != nil || r.DecodeSpeed != nil || r.ITLMeanMs != nil {
		t.Errorf("no first token: no prefill rate, decode speed or ITL")
	}
	// A mixed reply hashes only its text.
	mixed := roleChunk + chatChunk("Sure.") +
		`data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{}"}}]}}]}` + "\n\n" +
		usageChunk(5, 0, 4) + doneEvent
	if r := measureString(mixed); r.OutputSHA256 == nil || *r.OutputSHA256 != outputSHA("Sure.", "") || r.Chunks != 1 {
		t.Errorf("mixed reply: %v chunks %d", r.OutputSHA256, r.Chunks)
	}
}

func TestReasoningHash(t *testing.T) {
	ev := func(delta string) string { return `data: {"choices":[{"delta":` + delta + `}]}` + "\n\n" }
	s := roleChunk +
		ev(`{"reasoning_content":"Let me ","reasoning":"Let me "}`) + // both: counted once
		ev(`{"reasoning":"think","reasoning_content":""}`) + // empty reasoning_content: reasoning
		ev(`{"reasoning_content":"."}`) +
		ev(`{"reasoning_content":null,"reasoning":"!"}`) +
		ev(`{"content":"Answer"}`) +
		usageChunk(4, 0, 5) + doneEvent
	r := measureString(s)
	want := outputSHA("Answer", "Let me think.!")
	if r.OutputSHA256 == nil || *r.OutputSHA256 != want {
		t.Errorf("output_sha256 %v, want %s", r.OutputSHA256, want)
	}
	if r.ReasoningField != "reasoning_content" || r.Chunks != 5 {
		t.Errorf("field %q chunks %d", r.ReasoningField, r.Chunks)
	}
	// Reasoning and content are hashed apart: moving text from one to the
	// other changes the fingerprint.
	other := measureString(roleChunk + ev(`{"content":"Let me think.!"}`) + ev(`{"reasoning_content":"Answer"}`) + usageChunk(4, 0, 2) + doneEvent)
	if *other.OutputSHA256 == *r.OutputSHA256 {
		t.Errorf("content and reasoning must not be interchangeable")
	}
	// A reasoning-only reply has a fingerprint.
	ro := measureString(roleChunk + ev(`{"reasoning":"only"}`) + usageChunk(1, 0, 1) + doneEvent)
	if ro.OutputSHA256 == nil || *ro.OutputSHA256 != outputSHA("", "only") || !ro.Successful {
		t.Errorf("reasoning-only: %v", ro.OutputSHA256)
	}
	// KeepText keeps content only.
	kt := Measure(strings.NewReader(s), &Request{KeepText: true}, testSubmit, fixedClock, 0)
	if kt.Text != "Answer" {
		t.Errorf("text %q", kt.Text)
	}
}

func TestChunkBoundaryIndependence(t *testing.T) {
	text := "Hello, wörld — “quotes” \\ back\nslash 日本語 😀 \u2028 end"
	splits := [][]string{
		{text},
		{"Hel", "lo, wö", "rld — “quo", "tes” \\ back\nsl", "ash 日本", "語 😀 \u2028", " end"},
		strings.Split(text, ""),
	}
	var first string
	for i, parts := range splits {
		r := measureString(vllmStream(10, 0, parts...))
		if r.OutputSHA256 == nil {
			t.Fatalf("split %d: no hash: %v", i, r.ErrorDetail)
		}
		if i == 0 {
			first = *r.OutputSHA256
			if first != outputSHA(text, "") {
				t.Errorf("hash of %q is not sha256(sha256(text)||sha256(\"\"))", text)
			}
		} else if *r.OutputSHA256 != first {
			t.Errorf("split %d: %s != %s", i, *r.OutputSHA256, first)
		}
	}
	// Escaped forms decode to the same text: \u escapes, surrogate pairs.
	esc := roleChunk + `data: {"choices":[{"delta":{"content":"H\u0065llo \ud83d\ude00 \"q\" \/"}}]}` + "\n\n" + usageChunk(1, 0, 1) + doneEvent
	if r := measureString(esc); r.OutputSHA256 == nil || *r.OutputSHA256 != outputSHA("Hello 😀 \"q\" /", "") {
		t.Errorf("escapes decode wrong")
	}
	// Invalid UTF-8 and lone surrogates become U+FFFD, as encoding/json does.
	bad := roleChunk + "data: {\"choices\":[{\"delta\":{\"content\":\"a\xffb\\ud800c\"}}]}\n\n" + usageChunk(1, 0, 1) + doneEvent
	if r := measureString(bad); r.OutputSHA256 == nil || *r.OutputSHA256 != outputSHA("a\uFFFDb\uFFFDc", "") {
		t.Errorf("invalid UTF-8 handling")
	}
}

// chunkTimes builds a stream whose content chunks arrive at the given
// offsets (ms), then usage with completion tokens and [DONE] at done.
func chunkTimes(completion string, done time.Duration, at ...time.Duration) []seg {
	segs := []seg{{time.Millisecond, roleChunk}}
	for i, a := range at {
		segs = append(segs, seg{a * time.Millisecond, chatChunk("c" + itoa(i))})
	}
	usage := `data: {"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":` + completion + `,"prompt_tokens_details":{"cached_tokens":0}}}` + "\n\n"
	return append(segs, seg{done * time.Millisecond, usage + doneEvent})
}

func TestChunkOfKITL(t *testing.T) {
	// 10 tokens in 4 chunks at 100, 130, 150, 210 ms: gaps 30, 20, 60.
	// ITL samples: the 3 gaps and 6 zeros. Sorted: 0 x6, 20, 30, 60.
	r := measureSegs(&Request{KeepGaps: true}, 0, chunkTimes("10", 250, 100, 130, 150, 210)...)
	checkFloat(t, "itl_mean_ms", r.ITLMeanMs, 110.0/9)
	checkFloat(t, "itl_p50_ms", r.ITLP50Ms, 0)  // rank ceil(4.5)=5: a zero
	checkFloat(t, "itl_p95_ms", r.ITLP95Ms, 60) // rank ceil(8.55)=9
	checkFloat(t, "round_gap_p50_ms", r.RoundGapP50Ms, 30)
	checkFloat(t, "round_gap_p95_ms", r.RoundGapP95Ms, 60)
	checkFloat(t, "tokens_per_chunk", r.TokensPerChunk, 2.5)
	checkFloat(t, "prefill_tps", r.PrefillTPS, 50/0.100)
	checkFloat(t, "decode_speed", r.DecodeSpeed, 10/0.150)
	if len(r.RoundGapsMs) != 3 || r.RoundGapsMs[0] != 30 || r.RoundGapsMs[1] != 20 || r.RoundGapsMs[2] != 60 {
		t.Errorf("round gaps %v, want arrival order [30 20 60]", r.RoundGapsMs)
	}
	if !approx(r.RequestLatency, 0.250) || !approx(r.FinishTime-r.SubmitTime, 0.250) {
		t.Errorf("latency %v finish-submit %v", r.RequestLatency, r.FinishTime-r.SubmitTime)
	}

	// 5 tokens in 4 chunks: samples 0, 20, 30, 60.
	r = measureSegs(nil, 0, chunkTimes("5", 250, 100, 130, 150, 210)...)
	checkFloat(t, "itl_mean_ms", r.ITLMeanMs, 110.0/4)
	checkFloat(t, "itl_p50_ms", r.ITLP50Ms, 20)
	checkFloat(t, "itl_p95_ms", r.ITLP95Ms, 60)
	checkFloat(t, "tokens_per_chunk", r.TokensPerChunk, 1.25)

	// 8 tokens in 4 chunks: samples 0 x4, 20, 30, 60; the p50 rank (4)
	// is the last zero.
	r = measureSegs(nil, 0, chunkTimes("8", 250, 100, 130, 150, 210)...)
	checkFloat(t, "itl_p50_ms", r.ITLP50Ms, 0)
	checkFloat(t, "itl_p95_ms", r.ITLP95Ms, 60)
	checkFloat(t, "itl_mean_ms", r.ITLMeanMs, 110.0/7)
	if r.RoundGapsMs != nil {
		t.Errorf("gaps kept without KeepGaps")
	}

	// One token per chunk: 20 chunks 10ms apart, then one 200ms stall.
	at := make([]time.Duration, 0, 21)
	for i := range 20 {
		at = append(at, time.Duration(100+10*i))
	}
	at = append(at, 490)
	r = measureSegs(nil, 0, chunkTimes("21", 500, at...)...)
	checkFloat(t, "itl_p50_ms", r.ITLP50Ms, 10)
	checkFloat(t, "itl_p95_ms", r.ITLP95Ms, 10) // rank ceil(19)=19 of 20
	checkFloat(t, "round_gap_p95_ms", r.RoundGapP95Ms, 10)
	checkFloat(t, "itl_mean_ms", r.ITLMeanMs, 390.0/20)

	// Null ITL and round gaps: more chunks than tokens, one chunk, no
	// token count, incomplete.
	for name, segs := range map[string][]seg{
		"chunks > tokens": chunkTimes("3", 250, 100, 130, 150, 210),
		"one chunk":       chunkTimes("10", 250, 100),
		"no count":        chunkTimes("null", 250, 100, 130),
		"float count":     chunkTimes("4.0", 250, 100, 130),
		"incomplete":      chunkTimes("10", 250, 100, 130)[:3],
	} {
		r := measureSegs(&Request{KeepGaps: true}, 0, segs...)
		for _, p := range []*float64{r.ITLMeanMs, r.ITLP50Ms, r.ITLP95Ms, r.RoundGapP50Ms, r.RoundGapP95Ms} {
			if p != nil {
				t.Errorf("%s: ITL/round-gap figure %v, want null", name, *p)
			}
		}
		if r.RoundGapsMs != nil {
			t.Errorf("%s: gaps kept", name)
		}
	}
	// Decode speed falls back to the chunk count without completion tokens.
	r = measureSegs(nil, 0, chunkTimes("null", 300, 100, 200)...)
	checkFloat(t, "decode speed from chunks", r.DecodeSpeed, 2/0.2)
	if r.TokensPerChunk != nil {
		t.Errorf("decode speed from chunks: tpc %v", *r.TokensPerChunk)
	}
	// ... and completion_tokens 0 counts as absent there.
	r = measureSegs(nil, 0, chunkTimes("0", 300, 100, 200)...)
	checkFloat(t, "decode speed with completion 0", r.DecodeSpeed, 2/0.2)
	// One output token has no decode span: decode speed is null, not the
	// token over the [DONE] latency (spec/record.md).
	r = measureSegs(nil, 0, chunkTimes("1", 300, 100)...)
	if !r.Successful || r.DecodeSpeed != nil {
		t.Errorf("one token: successful %v decode speed %v, want null", r.Successful, r.DecodeSpeed)
	}
}

func TestPrefillOnlyCold(t *testing.T) {
	ms := time.Millisecond
	cold := measureSegs(nil, 0, seg{20 * ms, roleChunk + chatChunk("a")}, seg{30 * ms, usageChunk(400, 0, 1) + doneEvent})
	checkFloat(t, "prefill_tps", cold.PrefillTPS, 400/0.020)
	reused := measureSegs(nil, 0, seg{20 * ms, roleChunk + chatChunk("a")}, seg{30 * ms, usageChunk(400, 16, 1) + doneEvent})
	checkNull(t, "prefill_tps (reused)", reused.PrefillTPS)
	absent := measureSegs(nil, 0, seg{20 * ms, roleChunk + chatChunk("a")},
		seg{30 * ms, `data: {"choices":[],"usage":{"prompt_tokens":400,"completion_tokens":1}}` + "\n\n" + doneEvent})
	checkNull(t, "prefill_tps (details absent)", absent.PrefillTPS)
}

func TestDispatchLagAndTimes(t *testing.T) {
	req := &Request{ID: "q", Phase: PhaseWarmup, Scheduled: testSubmit.Add(-7 * time.Millisecond)}
	r := measureSegs(req, 0, seg{10 * time.Millisecond, simple})
	checkFloat(t, "dispatch_lag_ms", r.DispatchLagMs, 7)
	checkFloat(t, "scheduled_time", r.ScheduledTime, UnixSeconds(testSubmit)-0.007)
	if r.RequestID != "q" || r.Phase != PhaseWarmup || r.Measured() {
		t.Errorf("id/phase not carried: %q %q", r.RequestID, r.Phase)
	}
	if !approx(r.SubmitTime, float64(testSubmit.UnixNano())/1e9) {
		t.Errorf("submit_time %v", r.SubmitTime)
	}
	r = measureSegs(nil, 0, seg{10 * time.Millisecond, simple})
	if r.DispatchLagMs != nil || r.ScheduledTime != nil {
		t.Errorf("no schedule: lag %v", r.DispatchLagMs)
	}
}

func TestTokenSHA(t *testing.T) {
	hex64 := strings.Repeat("0123456789abcdef", 4)
	with := func(v string) Result {
		return measureString(roleChunk + chatChunk("a") +
			`data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":0}},"tensorfold":{"token_sha":` + v + `}}` + "\n\n" + doneEvent)
	}
	for v, want := range map[string]string{
		`"0123456789ab"`:                   "0123456789ab",
		`"` + hex64 + `"`:                  hex64,
		`"0123456789AB"`:                   "",
		`"0123456789abc"`:                  "",
		`"0123456789ag"`:                   "",
		`12`:                               "",
		`null`:                             "",
		`"` + strings.ToUpper(hex64) + `"`: "",
	} {
		r := with(v)
		got := ""
		if r.TokenSHA != nil {
			got = *r.TokenSHA
		}
		if got != want {
			t.Errorf("token_sha %s: %q, want %q", v, got, want)
		}
	}
	// Only on complete streams.
	r := measureString(roleChunk + chatChunk("a") + `data: {"choices":[],"tensorfold":{"token_sha":"0123456789ab"}}` + "\n\n")
	if r.TokenSHA != nil {
		t.Errorf("token_sha on an incomplete stream")
	}
}

func TestCompareFingerprint(t *testing.T) {
	tok := func(text, sha string) Result {
		return measureString(roleChunk + chatChunk(text) +
			`data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":0}},"tensorfold":{"token_sha":"` + sha + `"}}` + "\n\n" + doneEvent)
	}
	a := tok("same", "0123456789ab")
	b := tok("same", "0123456789ab")
	c := tok("different", "ba9876543210")
	noTok := measureString(vllmStream(3, 0, "same"))
	incomplete := measureString(roleChunk + chatChunk("same"))
	is := func(p *bool, want string) bool {
		switch want {
		case "null":
			return p == nil
		case "true":
			return p != nil && *p
		}
		return p != nil && !*p
	}
	for _, c := range []struct {
		name   string
		a, b   *Result
		tokens bool
		want   string
	}{
		{"same text", &a, &b, false, "true"},
		{"same tokens", &a, &b, true, "true"},
		{"different text", &a, &c, false, "false"},
		{"different tokens", &a, &c, true, "false"},
		{"missing token hash", &a, &noTok, true, "null"},
		{"both token hashes missing", &noTok, &noTok, true, "null"},
		{"text without token hash", &a, &noTok, false, "true"},
		{"incomplete", &a, &incomplete, false, "null"},
		{"nil", &a, nil, false, "null"},
	} {
		if got := CompareFingerprint(c.a, c.b, c.tokens); !is(got, c.want) {
			t.Errorf("%s: got %v, want %s", c.name, got, c.want)
		}
	}
	// A failed result never passes, even if it somehow carries a hash.
	failed := a
	code := ErrTimeout
	failed.Error, failed.Successful = &code, false
	if CompareFingerprint(&a, &failed, false) != nil {
		t.Errorf("failed side compared")
	}
}

func TestReadErrorIsIncomplete(t *testing.T) {
	r := Measure(&errReader{data: roleChunk + chatChunk("a")}, &Request{}, testSubmit, fixedClock, 0)
	if errCode(r) != ErrIncomplete || !strings.Contains(*r.ErrorDetail, "connection reset") {
		t.Errorf("%q %v", errCode(r), r.ErrorDetail)
	}
}

type errReader struct {
	data string
	done bool
}

func (e *errReader) Read(p []byte) (int, error) {
	if !e.done {
		e.done = true
		return copy(p, e.data), nil
	}
	return 0, errString("read tcp: connection reset by peer")
}

type errString string

func (e errString) Error() string { return string(e) }

func TestRepeatedKeysLastWins(t *testing.T) {
	ev := func(body string) string { return "data: " + body + "\n\n" }
	cases := []struct {
		name, body, content string
		usage               bool
		errored             bool
	}{
		{"content", `{"choices":[{"delta":{"content":"a","content":"b"}}]}`, "b", false, false},
		{"text", `{"choices":[{"text":"a","index":0,"text":"b"}]}`, "b", false, false},
		{"delta", `{"choices":[{"delta":{"content":"a"},"delta":{"role":"assistant"}}]}`, "", false, false},
		{"choices", `{"choices":[{"delta":{"content":"x"}}],"choices":[{"delta":{"content":"y"}}]}`, "y", false, false},
		{"usage", `{"choices":[{"delta":{"content":"a"}}],"usage":{"prompt_tokens":1},"usage":null}`, "a", false, false},
		{"error", `{"choices":[{"delta":{"content":"a"}}],"error":{"message":"x"},"error":null}`, "a", false, false},
		{"object", `{"object":"error","object":"chat.completion.chunk","choices":[{"delta":{"content":"a"}}]}`, "a", false, false},
	}
	for _, c := range cases {
		r := measureString(ev(c.body) + usageChunk(1, 0, 1) + doneEvent)
		if errCode(r) != "" {
			t.Errorf("%s: error %q", c.name, errCode(r))
			continue
		}
		want := outputSHA(c.content, "")
		if c.content == "" {
			if r.OutputSHA256 != nil {
				t.Errorf("%s: hashed %v, want no text", c.name, *r.OutputSHA256)
			}
		} else if r.OutputSHA256 == nil || *r.OutputSHA256 != want {
			t.Errorf("%s: hash %v, want that of %q", c.name, r.OutputSHA256, c.content)
		}
	}
	r := measureString(ev(`{"choices":[],"usage":{"prompt_tokens":1,"prompt_tokens_details":{"cached_tokens":0}},"usage":null}`) + doneEvent)
	if r.Complete || r.PromptTokens != nil {
		t.Errorf("a usage overridden by null in the same chunk still counted")
	}
}

func TestTemplateFastPath(t *testing.T) {
	// Chunks that repeat the previous one byte for byte but for the
	// content string take the fast path; anything else a full parse. The
	// results must not tell them apart.
	pre := `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"`
	suf := `"},"logprobs":null,"finish_reason":null}]}` + "\n\n"
	s := roleChunk +
		pre + `a` + suf +
		pre + `b\u00e9\n\ud83d\ude00` + suf + // escapes in the fast path
		pre + "r\xffaw" + suf + // invalid UTF-8 in the fast path
		pre + `c` + strings.Replace(suf, `"finish_reason":null`, `"finish_reason":"stop"`, 1) + // other suffix
		pre + `x","content":"d` + suf + // a second content key: last wins
		pre + `e` + `"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":9,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":3}}}` + "\n\n" +
		pre + `` + suf + // empty content: no chunk
		pre + `f` + suf +
		doneEvent
	r := measureString(s)
	if errCode(r) != "" || !r.Complete {
		t.Fatalf("%q %v", errCode(r), r.ErrorDetail)
	}
	if want := outputSHA("abé\n😀r\uFFFDawcdef", ""); *r.OutputSHA256 != want {
		t.Errorf("hash mismatch")
	}
	if r.Chunks != 7 || intp(r.CompletionTokens) != "7" || r.CacheState != StateReused || r.FinishReason == nil || *r.FinishReason != "stop" {
		t.Errorf("chunks %d completion %s state %s finish %v", r.Chunks, intp(r.CompletionTokens), r.CacheState, r.FinishReason)
	}
	// Invalid strings after a template are still caught.
	for _, bad := range []string{"tab\there", `bad\q`, `unterminated`} {
		body := roleChunk + pre + "ok" + suf + pre + bad
		if bad != "unterminated" {
			body += suf
		} else {
			body += "\n\n"
		}
		body += usageChunk(1, 0, 1) + doneEvent
		if r := measureString(body); errCode(r) != ErrInvalidJSON {
			t.Errorf("%q after a template: %q", bad, errCode(r))
		}
	}
	// A content string that a later member overrides is no template: the
	// same shape with another value must still decode to nothing.
	for name, shape := range map[string][2]string{
		"later delta":   {`data: {"choices":[{"delta":{"content":"`, `"},"delta":{"role":"assistant"}}]}` + "\n\n"},
		"later choices": {`data: {"choices":[{"delta":{"content":"`, `"}}],"choices":[]}` + "\n\n"},
		"later null":    {`data: {"choices":[{"delta":{"content":"`, `","content":null}}]}` + "\n\n"},
	} {
		r := measureString(roleChunk + shape[0] + "a" + shape[1] + shape[0] + "b" + shape[1] + usageChunk(1, 0, 1) + doneEvent)
		if r.Chunks != 0 || r.OutputSHA256 != nil || errCode(r) != "" {
			t.Errorf("%s: chunks %d hash %v error %q", name, r.Chunks, r.OutputSHA256, errCode(r))
		}
	}
	// Two content sources in one choice: the template must not keep only
	// the last.
	two := [2]string{`data: {"choices":[{"delta":{"content":"p"},"text":"`, `"}]}` + "\n\n"}
	r = measureString(roleChunk + two[0] + "a" + two[1] + two[0] + "b" + two[1] + usageChunk(1, 0, 2) + doneEvent)
	if r.Chunks != 2 || r.OutputSHA256 == nil || *r.OutputSHA256 != outputSHA("papb", "") {
		t.Errorf("content and text in one choice: chunks %d", r.Chunks)
	}
	// Reasoning beside the content string is not dropped either.
	rc := [2]string{`data: {"choices":[{"delta":{"reasoning_content":"r","content":"`, `"}}]}` + "\n\n"}
	r = measureString(roleChunk + rc[0] + "a" + rc[1] + rc[0] + "b" + rc[1] + usageChunk(1, 0, 2) + doneEvent)
	if r.Chunks != 2 || r.OutputSHA256 == nil || *r.OutputSHA256 != outputSHA("ab", "rr") {
		t.Errorf("reasoning beside content: chunks %d", r.Chunks)
	}
	// Completions text chunks use the template too.
	tp := `data: {"id":"x","object":"text_completion","choices":[{"text":"`
	ts := `","index":0,"logprobs":null,"finish_reason":null}]}` + "\n\n"
	r = measureString(tp + "one" + ts + tp + " two" + ts + tp + `" three` + ts + usageChunk(1, 0, 3) + doneEvent)
	if errCode(r) != ErrInvalidJSON {
		t.Errorf("a stray quote in a templated text chunk: %q", errCode(r))
	}
	r = measureString(tp + "one" + ts + tp + " two" + ts + usageChunk(1, 0, 2) + doneEvent)
	if r.Chunks != 2 || *r.OutputSHA256 != outputSHA("one two", "") {
		t.Errorf("completions template: chunks %d", r.Chunks)
	}
}

func TestNoAllocsPerChunk(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts need a normal build")
	}
	stream := func(n int) []byte {
		pieces := make([]string, n)
		for i := range pieces {
			pieces[i] = " tok" + itoa(i%7)
		}
		return []byte(vllmStream(100, 50, pieces...))
	}
	allocs := func(b []byte) float64 {
		rd := &sizedReader{}
		req := &Request{KeepGaps: false}
		Measure(&sizedReader{b: b, sizes: []int{300}}, req, testSubmit, fixedClock, 0) // grow the pooled buffers
		return testing.AllocsPerRun(50, func() {
			rd.b, rd.sizes, rd.k = b, []int{300}, 0
			Measure(rd, req, testSubmit, fixedClock, 0)
		})
	}
	small, large := allocs(stream(64)), allocs(stream(2048))
	t.Logf("allocations per request: %v for 64 chunks, %v for 2048", small, large)
	if large > small {
		t.Errorf("%v allocations for 64 chunks, %v for 2048: the per-chunk path allocates", small, large)
	}
	if small > 8 {
		t.Errorf("%v allocations per request", small)
	}
}

func TestNearestRank(t *testing.T) {
	for _, c := range []struct{ n, p, want int }{
		{1, 50, 1}, {1, 95, 1}, {2, 50, 1}, {2, 95, 2}, {4, 50, 2}, {9, 50, 5}, {9, 95, 9},
		{20, 95, 19}, {100, 95, 95}, {101, 95, 96}, {200, 50, 100}, {3, 50, 2},
		{maxInt, 95, maxInt/100*95 + (maxInt%100*95+99)/100},
	} {
		if got := nearestRank(c.n, c.p); got != c.want {
			t.Errorf("nearestRank(%d, %d) = %d, want %d", c.n, c.p, got, c.want)
		}
	}
	// The largest valid token count neither panics nor yields a wrong
	// zero share; one past it is an invalid count, so no ITL.
	r := measureSegs(nil, 0, chunkTimes("1099511627776", 300, 100, 200)...)
	checkFloat(t, "itl_p95_ms", r.ITLP95Ms, 0)
	checkFloat(t, "itl_p50_ms", r.ITLP50Ms, 0)
	r = measureSegs(nil, 0, chunkTimes("1099511627777", 300, 100, 200)...)
	if r.ITLP95Ms != nil || r.CompletionTokens != nil {
		t.Errorf("completion_tokens 2^40+1: ITL p95 %v, completion %v; want null", r.ITLP95Ms, r.CompletionTokens)
	}
}
