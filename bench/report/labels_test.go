package report

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/stats"
)

func TestFigureForms(t *testing.T) {
	ms := Figure{"P50 TTFT", "ms", KindReal}
	tok := Figure{"Total input tokens", "", KindCount}
	hit := Figure{"Hit ratio", "%", KindRatio}
	cpu := Figure{"Machine CPU busy max", "%", KindPercent}
	cases := []struct{ got, want string }{
		{ms.TextLabel(), "P50 TTFT (ms)"},
		{tok.TextLabel(), "Total input tokens"},
		{ms.TextValue(fptr(7.924)), "7.92"},
		{ms.Show(fptr(7.924)), "7.92 ms"},
		{ms.Show(fptr(1315.41)), "1,315.4 ms"},
		{ms.Show(nil), "n/a"},
		{tok.TextValue(fptr(20290)), "20290"},
		{tok.Show(fptr(20290)), "20,290"},
		{tok.Show(fptr(1290000)), "1,290,000"},
		{tok.Show(fptr(7)), "7"},
		{hit.TextLabel(), "Hit ratio (%)"},
		{hit.TextValue(fptr(0.98571)), "98.57"},
		{hit.Show(fptr(0.98571)), "98.6%"},
		{hit.Show(nil), "n/a"},
		{cpu.Show(fptr(100)), "100.0%"},
		{Thousands(-1234567.891, 1), "-1,234,567.9"},
		{Thousands(999, 0), "999"},
		{PercentText(fptr(0.48)), "48.00%"},
		{PercentText(nil), "n/a"},
		{Requests(1), "1 request"},
		{Requests(0), "0 requests"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// richSummary has every block the text summary writes.
func mustUnmarshal(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatal(err)
	}
}

func richSummary(t *testing.T) *record.Summary {
	s := fullSummary()
	verdict := record.VerdictMet
	base := stats.BaselineWarmupCold
	s.Headline = &record.Headline{Verdict: &verdict, HitRatio: fptr(0.986), Baseline: &base,
		ColdTTFTP50ms: fptr(108), ReusedTTFTP50ms: fptr(8.2), Speedup: fptr(13.2), SpeedupCI95: &[2]float64{11.7, 13.8},
		LimitedBy: []string{"2 requests without a verified cache receipt"}}
	var b stats.ByCacheState
	mustUnmarshal(t, `{"cold":{"requests":0},"reused":{"requests":3,"ttft_ms":{"mean":8,"stdev":1,"p50":8,"p90":9,"p99":10}},"unverified":{"requests":0},"warmup":{"requests":2}}`, &b)
	s.ByCacheState = &b
	var sv stats.Serving
	mustUnmarshal(t, `{"request_throughput":1.5,"total_token_throughput":4000,"ttft_ms":{"mean":9,"median":8,"stdev":2,"p50":8,"p90":12,"p99":13},"ttfo_ms":{"mean":null,"median":null,"stdev":null,"p50":null}}`, &sv)
	s.Serving = &sv
	s.Errors = &map[string]int{"http_503": 1}
	s.Client.Overloaded, s.Client.OverloadReasons = true, []string{"machine CPU > 95% busy"}
	rate := 2.0
	s.Load = &load.Block{TargetRate: &rate, Arrival: "poisson", DegradedReasons: []string{"late"}}
	s.Goodput = &load.Goodput{GoodRequests: 3}
	return s
}

// TestShownLabelsAreTheTextSummarys: a display's sections are the text
// summary's, in its order, row for row, each label the text summary's
// without its unit, and no value a raw JSON key or "n/a%".
func TestShownLabelsAreTheTextSummarys(t *testing.T) {
	s := richSummary(t)
	text := append(append(Sections(s), ByCacheState(s)...), Serving(s)...)
	text = append(append(append(text, Expectation(s)...), Overload(s)...), KVCache(s)...)
	shown := Shown(s, true)
	if len(shown) != len(text) {
		t.Fatalf("%d sections shown, %d in the text summary", len(shown), len(text))
	}
	for i := range text {
		if shown[i].Title != text[i].Title || len(shown[i].Rows) != len(text[i].Rows) {
			t.Fatalf("section %d: %q with %d rows shown, %q with %d in the text", i, shown[i].Title, len(shown[i].Rows), text[i].Title, len(text[i].Rows))
		}
		for j, r := range text[i].Rows {
			sr := shown[i].Rows[j]
			want := r.Label
			for _, u := range []string{" (ms)", " (tok/s)", " (req/s)", " (s)", " (%)", " (GB)"} {
				want = strings.Replace(want, u, "", 1)
			}
			if !strings.EqualFold(sr.Label, want) {
				t.Errorf("%s: shown label %q for the text summary's %q", text[i].Title, sr.Label, r.Label)
			}
			if strings.Contains(sr.Value, "n/a%") || strings.Contains(sr.Value, "_ms") {
				t.Errorf("%s %s: %q", text[i].Title, sr.Label, sr.Value)
			}
		}
	}
	byLabel := map[string]string{}
	for _, sec := range shown {
		for _, r := range sec.Rows {
			if _, seen := byLabel[sec.Title+"/"+r.Label]; !seen {
				byLabel[sec.Title+"/"+r.Label] = r.Value
			}
		}
	}
	for k, want := range map[string]string{
		"Results/Total input tokens":                          "1,290,000",
		"Cache/Hit ratio":                                     "48.0%",
		"Time to First Token/P50 TTFT":                        "120.50 ms",
		"By cache state/  TTFT p50 / p99":                     "8.00 / 10.00 ms",
		"Serving/Errors: http_503":                            "1",
		"KV cache/Speedup (cold / reused)":                    "13.2x faster (95% CI 11.7-13.8x)",
		"KV cache/Cold TTFT p50 (warmup)":                     "108.00 ms",
		"Load/Target rate":                                    "2.00 req/s",
		"Goodput/SLO TTFT":                                    "not set",
		"Latency/Client CPU":                                  "3.14 s",
		"Client Overloaded: Latencies May Be Inflated/Reason": "machine CPU > 95% busy",
	} {
		if got := byLabel[k]; got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	// A summary computed from requests.jsonl knows no client CPU.
	for _, sec := range Shown(s, false) {
		for _, r := range sec.Rows {
			if r.Label == "Client CPU" && r.Value != NA {
				t.Errorf("incomplete run's client CPU: %q", r.Value)
			}
		}
	}
}

func TestKeyFigures(t *testing.T) {
	for key, want := range map[string]string{
		"first_question.requests":            "First question: requests",
		"observed.hit_ratio":                 "Observed: hit ratio (%)",
		"warmup.mean_ttft_ms":                "Warmup: mean TTFT (ms)",
		"num_documents":                      "Number of documents",
		"observed_first_round_prompt_tokens": "Observed first round prompt tokens",
		"kv_cache_volume_gb":                 "KV cache volume (GB)",
	} {
		if got := KeyFigure(key, false).TextLabel(); got != want {
			t.Errorf("%s: %q, want %q", key, got, want)
		}
	}
	w := json.RawMessage(`{"document_length":2000,"expectation":{"verdict":"met"},"first_question":{"requests":5,"hit_ratio":0.9857,"mean_ttft_ms":9.131,"cold":null},"tokens_per_word":2.5813,"ok":true,"levels":[1,4,8]}`)
	got := ShownPairs(w, "expectation")
	want := []Row{{"Document length", "2,000"}, {"First question: requests", "5"}, {"First question: hit ratio", "98.6%"},
		{"First question: mean TTFT", "9.13 ms"}, {"First question: cold", "n/a"}, {"Tokens per word", "2.581"}, {"Ok", "yes"}, {"Levels", "1, 4, 8"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ShownPairs:\n got %q\nwant %q", got, want)
	}
	if rows := ShownPairs(map[string]any{"note": "two\nlines \x1b[31mred"}); len(rows) != 1 || strings.ContainsAny(rows[0].Value, "\n\x1b") {
		t.Errorf("text from a file is not cleaned: %q", rows)
	}
	cfg := map[string]any{"engine_url": "http://u:s3cret@gpu:8000/v1?token=abc", "ldqa_document_length": 2000, "seed": 42, "export_csv": true, "psf_prefix_ratio": 0.8, "kv_cache_volume_gb": 1}
	rows := map[string]string{}
	for _, r := range ConfigShown(cfg) {
		rows[r.Label] = r.Value
	}
	for label, v := range map[string]string{"--engine-url": "http://gpu:8000/v1", "--ldqa-document-length": "2000", "--seed": "42", "Export CSV": "yes", "--psf-prefix-ratio": "0.8", "KV cache volume": "1 GB"} {
		if rows[label] != v {
			t.Errorf("config %s = %q, want %q (%v)", label, rows[label], v, rows)
		}
	}
}
