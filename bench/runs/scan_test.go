package runs

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/kvbench/kvbench/bench/sender"
)

func sampleLines() []string {
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

// The fast scanner agrees with encoding/json on every field the index
// reads, and on which lines are corrupt.
func TestParseLineMatchesDecoder(t *testing.T) {
	for _, line := range sampleLines() {
		checkLine(t, line)
	}
}

func checkLine(t *testing.T, line string) {
	t.Helper()
	var want indexLine
	wantOK := json.Unmarshal([]byte(line), &want) == nil && want.RequestID != ""
	var got indexLine
	var sc scratch
	gotOK := parseLine([]byte(line), &got, &sc)
	if gotOK != wantOK {
		t.Fatalf("%s: ok %v, encoding/json %v", line, gotOK, wantOK)
	}
	if !gotOK {
		return
	}
	same := got.Phase == want.Phase && got.Successful == want.Successful && got.SubmitTime == want.SubmitTime &&
		got.FinishTime == want.FinishTime && got.CacheState == want.CacheState &&
		sameFloat(got.TTFT, want.TTFT) && sameInt(got.PromptTokens, want.PromptTokens) &&
		sameInt(got.CachedTokens, want.CachedTokens) && sameInt(got.CompletionTokens, want.CompletionTokens) &&
		got.Chunks == want.Chunks
	if !same {
		t.Errorf("%s:\n got %+v\nwant %+v", line, got, want)
	}
}

func sameFloat(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
func sameInt(a, b *int) bool       { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func FuzzParseLine(f *testing.F) {
	for _, l := range sampleLines() {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		checkLine(t, line)
	})
}

func ExampleFilter_String() {
	for _, f := range Filters {
		fmt.Print(f, " ")
	}
	// Output: all failed cold reused unverified
}
