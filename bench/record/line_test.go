package record

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/internal/textclean"
)

// decodeWant is the reference: encoding/json over the cleaned line, with
// the record's rule that a line without a request_id is corrupt.
func decodeWant(line []byte) (sender.Result, bool) {
	var r sender.Result
	if json.Unmarshal(textclean.JSON(line), &r) != nil || r.RequestID == "" {
		return sender.Result{}, false
	}
	return r, true
}

func fullLine() []byte {
	f := func(x float64) *float64 { return &x }
	i := func(x int) *int { return &x }
	s := func(x string) *string { return &x }
	b := true
	r := sender.Result{
		RequestID: "req-000017", Phase: sender.PhaseMeasured, Successful: true,
		ScheduledTime: f(1.7e9 + 0.25), SubmitTime: 1700000000.123456, FirstTokenTime: f(1700000000.2),
		FinishTime: 1700000001.5, TTFT: f(0.076544), RequestLatency: 1.376544, DispatchLagMs: f(0.31),
		PromptTokens: i(1024), CachedTokens: i(768), CompletionTokens: i(64), CacheN: i(768),
		CacheState: sender.StateReused, UnverifiedReason: nil, Complete: true, FinishReason: s("length"),
		Chunks: 64, DecodeSpeed: f(48.2), ITLMeanMs: f(20.1), ITLP50Ms: f(19.9), ITLP95Ms: f(25),
		RoundGapP50Ms: f(19.8), RoundGapP95Ms: f(26), TokensPerChunk: f(1), PrefillTPS: f(13377.5),
		OutputSHA256: s("ab12"), TokenSHA: s("cd34"), Retries: 1, SLOMet: &b,
		DecodeUnmeasured: s(sender.DecodeOneRead),
		TraceExpectation: &sender.TraceExpectation{ExpectedCachedTokens: 512, ExpectedCachedTokensLRU: i(256)},
		Documents:        []int{3, 1, 4}, Shard: i(2),
	}
	bs, _ := json.Marshal(&r)
	return bs
}

func sampleRecordLines() []string {
	full := string(fullLine())
	failed, _ := json.Marshal(&sender.Result{RequestID: "w-1", Phase: sender.PhaseWarmup, CacheState: sender.StateCold,
		Error: new("http_503"), ErrorDetail: new("engine said \x1b[31mno\x1b[0m"), SubmitTime: 1, FinishTime: 2})
	return []string{
		full,
		string(failed),
		`{"request_id":"a","submit_time":1e3,"finish_time":-0,"chunks":-0,"ttft_s":null}`,
		`  {"request_id":"a","phase":"measured"}  `,
		`{"REQUEST_ID":"a","Submit_Time":2,"request_id":"b"}`,
		`{"request_id":"a","ſhard":3,"KEY":1,"cache_n":null}`,      // long s folds onto s
		`{"request_id":"a","chunks":1.0}`,                          // wrong type
		`{"request_id":"a","chunks":9223372036854775808}`,          // too large
		`{"request_id":"a","prompt_tokens":-9223372036854775808}`,  // the smallest int
		`{"request_id":"a","submit_time":1e400}`,                   // out of range
		`{"request_id":"a","submit_time":12345678901234567890123}`, // beyond 2^53
		`{"request_id":"a","successful":"true"}`,
		`{"request_id":"a","documents":[1,null,2]}`,
		`{"request_id":"a","documents":[]}`,
		`{"request_id":"a","documents":null}`,
		`{"request_id":"a","documents":[1.5]}`,
		`{"request_id":"a","expected_cached_tokens":null}`,
		`{"request_id":"a","expected_cached_tokens_lru":7}`,
		`{"request_id":"a","error":"x","error":null}`,
		`{"request_id":"a","ttft_s":1,"ttft_s":2}`,
		`{"request_id":"a\u0007\ud800\u0085","error_detail":"\b\r\t\n"}`,
		"{\"request_id\":\"a\x7f\xff\xc2\x85\"}",
		`{"request_id":"","phase":"measured"}`,
		`{"phase":"measured"}`,
		`null`,
		`[1]`,
		`"x"`,
		`{"request_id":"a"} x`,
		`{"request_id":"a",}`,
		`{"request_id":"a","extra":{"deep":[1,{"x":null}]}}`,
		`{"request_id":"a","slo_met":false,"complete":null}`,
		`{"request_id":"a","submit_time":"1"}`,
		`{"request_id":1}`,
		`{"request_id":"a","cache_state":"reused","phase":"warmup","decode_unmeasured":"one_read"}`,
		full[:len(full)/2],
	}
}

// explorerLines are the lines the explorer's index was held to.
func explorerLines() []string {
	f := func(v float64) *float64 { return &v }
	s := func(v string) *string { return &v }
	n := func(v int) *int { return &v }
	rs := []sender.Result{
		{RequestID: "req-1", Phase: "measured", Successful: true, SubmitTime: 1772366400.25, FinishTime: 1772366401.5,
			TTFT: f(0.123), CacheState: "cold", Complete: true, Chunks: 4,
			PromptTokens: n(1000), CachedTokens: n(0), CompletionTokens: n(64)},
		{RequestID: "w-0", Phase: "warmup", SubmitTime: 1e9, FinishTime: 1e9 + 1, Error: s("http_503"),
			ErrorDetail: s(`server said "no" \ twice`), CacheState: "unverified", UnverifiedReason: s("error")},
		{RequestID: `odd "id"`, Phase: "first", Successful: true, TTFT: f(1.5e-3), CacheState: "reused"},
	}
	var out []string
	for _, r := range rs {
		b, _ := json.Marshal(r)
		out = append(out, string(b))
	}
	return append(out,
		`{"request_id":"x","phase":"measured","successful":true,"submit_time":2,"finish_time":3,"ttft_s":null,"cache_state":null}`,
		`{"request_id":"x","prompt_tokens":12,"cached_tokens":null,"completion_tokens":-1,"chunks":3}`,
		`{"request_id":"x","prompt_tokens":8.0}`,
		`{"request_id":"x","prompt_tokens":1e3}`,
		`{"request_id":"x","chunks":"3"}`,
		`  {"request_id" : "n", "nested": {"a": [1, {"b": "}"}], "c": "]"}, "ttft_s": -1.5E+2, "successful": false}  `,
		`{"request_id":"esc\u0041","phase":"meas\"ured"}`,
		`{"request_id":"","phase":"measured"}`,
		`{"phase":"measured"}`,
		`{"request_id":"torn","phase":"meas`,
		`{"request_id":"t","successful":tru}`,
		`[1,2]`,
		`{"request_id":"a"} trailing`,
		`{"request_id":"a",}`,
		`{"request_id":"a" "b":1}`,
		`not json`,
		``,
		`{"request_id":"x","successful":"yes"}`,
		`{"request_id":"x","successful":1}`,
		`{"request_id":"x","phase":7}`,
		`{"request_id":"x","ttft_s":[1]}`,
		`{"request_id":"x","submit_time":1e400}`,
		`{"request_id":"x","chunks":99999999999999999999}`,
		`{"request_id":"x","completion_tokens":-0}`,
		`{"request_id":"a","request_id":null}`,
		`{"request_id":"a","ttft_s":1.5,"ttft_s":null}`,
		`{"Request_ID":"x","PHASE":"warmup"}`,
		`{"request_\u0069d":"x","cache\u005fstate":"re\u0075sed"}`,
		"{\"request_id\":\"x\",\"chun\u212as\":3}",
		"{\"request_id\":\"x\",\"phase\":\"me\xffasured\"}",
		`{"request_id":"x","phase":"warmup"`,
		`{"request_id":"x","phase":`,
		`{"request_id":"x","nested":[[[[{"a":[]}]]]],"successful":true}`,
		`null`,
		`{"request_id":"x","successful":true,"x":1.2.3}`,
	)
}

func TestLineDecoderMatchesEncodingJSON(t *testing.T) {
	for _, line := range append(sampleRecordLines(), explorerLines()...) {
		checkDecodedLine(t, []byte(line))
	}
}

func checkDecodedLine(t *testing.T, line []byte) {
	t.Helper()
	want, wantOK := decodeWant(line)
	var d LineDecoder
	var got sender.Result
	ok := d.Decode(line, &got)
	if ok != wantOK {
		t.Fatalf("%q: Decode ok=%v, encoding/json ok=%v", line, ok, wantOK)
	}
	if ok && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %+v\nwant %+v", line, got, want)
	}
	var sk sender.Result
	if skOK := d.Skim(line, &sk); skOK != wantOK {
		t.Fatalf("%q: Skim ok=%v, encoding/json ok=%v", line, skOK, wantOK)
	}
	if !ok {
		return
	}
	// Skim keeps the figures and the few texts a reader looks at.
	want.Error, want.ErrorDetail, want.UnverifiedReason, want.FinishReason, want.OutputSHA256, want.TokenSHA = nil, nil, nil, nil, nil, nil
	if !reflect.DeepEqual(sk, want) {
		t.Fatalf("%q: Skim\n got %+v\nwant %+v", line, sk, want)
	}
}

// The switch finds every field of the table, and nothing else.
func TestExactFieldIsTheTable(t *testing.T) {
	for k, want := range lineFields {
		if got, ok := exactField([]byte(k)); !ok || got != want {
			t.Errorf("%s: %v %v, want %v", k, got, ok, want)
		}
	}
	if _, ok := exactField([]byte("request_idx")); ok {
		t.Error("an unknown key found a field")
	}
}

// exactFloat agrees with strconv where it answers.
func TestExactFloat(t *testing.T) {
	for _, s := range []string{"0", "-0", "0.5", "-1.25", "1700000000.123456", "0.076544", "4503599627370495", "4503599627370496",
		"0.0000000000000000000001", "0.00000000000000000000001", "123.456e7", "1e3", "-0.0", "17.000000000000004"} {
		got, ok := exactFloat([]byte(s))
		want, err := strconv.ParseFloat(s, 64)
		if ok && (err != nil || got != want || math.Signbit(got) != math.Signbit(want)) {
			t.Errorf("%s: %v, strconv %v", s, got, want)
		}
	}
	if _, ok := exactFloat([]byte("0.5")); !ok {
		t.Error("the common case fell back to strconv")
	}
}

func TestLineDecoderResultsOwnTheirValues(t *testing.T) {
	var d LineDecoder
	var a, b sender.Result
	if !d.Decode([]byte(`{"request_id":"a","ttft_s":1}`), &a) || !d.Decode([]byte(`{"request_id":"b","ttft_s":2}`), &b) {
		t.Fatal("valid lines refused")
	}
	if a.RequestID != "a" || *a.TTFT != 1 || *b.TTFT != 2 {
		t.Fatalf("a later line changed an earlier result: %v %v", *a.TTFT, *b.TTFT)
	}
}

func FuzzLineDecoder(f *testing.F) {
	for _, l := range append(sampleRecordLines(), explorerLines()...) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.IndexByte(line, '\n') >= 0 {
			return // one line at a time
		}
		checkDecodedLine(t, []byte(line))
	})
}

// BenchmarkLineDecoder reads one full record line.
func BenchmarkLineDecoder(b *testing.B) {
	line := fullLine()
	var d LineDecoder
	var r sender.Result
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if !d.Decode(line, &r) {
			b.Fatal("refused")
		}
	}
}

func BenchmarkLineEncodingJSON(b *testing.B) {
	line := fullLine()
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		var r sender.Result
		if json.Unmarshal(textclean.JSON(line), &r) != nil {
			b.Fatal("refused")
		}
	}
}
