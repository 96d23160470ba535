package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/stats"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func fptr(v float64) *float64 { return &v }

func fullSummary() *record.Summary {
	return &record.Summary{
		SchemaVersion: 1,
		Tool:          record.Tool{Name: "kvbench", Version: "0.1.0"},
		Run: record.RunInfo{ID: "20260505-140309-long-doc-qa-nightly", Name: "nightly",
			StartedAt: "2026-05-05T14:03:09Z", FinishedAt: "2026-05-05T14:05:11Z", ExitCode: 1},
		Config: json.RawMessage(`{"engine_url":"http://gpu-box:8000/v1","model":"Qwen/Qwen3-8B",
			"served_model_name":"qwen","workload":"long-doc-qa","kv_cache_volume_gb":100,
			"tokens_per_gb_kvcache":6553,"seed":42,"output_dir":"/runs","export_csv":true,
			"export_json":true,"quiet":false,"ignore_eos":true,"ldqa_document_length":10000}`),
		Results: stats.Results{
			TotalRequests: 130, SuccessfulRequests: 129, FailedRequests: 1, ElapsedTime: 122.4567,
			MeanTTFTms: ptrF(412.345), MeanDecodeSpeed: ptrF(48.2), MeanRequestLatencyMs: ptrF(3021.5),
			InputThroughput: 10541.666, OutputThroughput: 135.01,
			TotalInputTokens: 1290000, TotalOutputTokens: 16512,
			P50TTFTms: ptrF(120.5), P90TTFTms: ptrF(1500.25), P99TTFTms: ptrF(2500.999),
			P50DecodeSpeed: ptrF(49), P90DecodeSpeed: ptrF(51.5), P99DecodeSpeed: ptrF(52.125),
			P50RequestLatencyMs: ptrF(2800), P90RequestLatencyMs: ptrF(4000.004), P99RequestLatencyMs: ptrF(5200),
		},
		Cache: stats.Cache{Cold: 65, Reused: 60, Unverified: 5,
			UnverifiedReasons: map[string]int{"error": 1, "details_absent": 4},
			PromptTokens:      1250000, CachedTokens: 600000, HitRatio: fptr(0.48)},
		Latency: stats.Latency{
			ITLms:              stats.Spread{Mean: fptr(20.7), P50: fptr(0), P95: fptr(61.25)},
			RoundGapMs:         stats.Spread{Mean: fptr(41.4), P50: fptr(40.1), P95: fptr(61.25)},
			TokensPerChunkMean: fptr(2),
			PrefillTPS:         stats.MeanP50{Mean: fptr(25000), P50: fptr(24800.5)},
		},
		Client: stats.Client{CPUSeconds: 3.14159, TimingErrorP99Ms: ptrF(0.41), TimingErrorMaxMs: ptrF(6.25), MachineCPUBusyMax: ptrF(97.5)},
		Workload: map[string]any{"documents": 65, "expectation": &record.Expectation{
			Expected: "every question reuses its document (warmed up beforehand); the 65 documents (650,000 tokens) fit the KV budget (--kv-cache-volume 100 GB, 655,300 tokens)",
			Verdict:  record.VerdictNotMet,
			Reason:   "questions: 60/125 reused their document (a hit caches at least half of its 10,000 tokens); 5 without a verified receipt",
		}},
	}
}

func extras() []Section {
	return []Section{
		{Title: "Long Doc QA", Rows: []Row{
			{"Documents", Int(65)},
			{"First pass cold / reused / unverified", "63 / 0 / 2"},
		}},
		{Title: "Server Metrics", Rows: []Row{
			{"vllm:prefix_cache_hits_total delta", Float(600000)},
			{"Prefix cache hit rate (%)", OptFloat(nil)},
		}},
	}
}

func TestTextGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Text(&buf, fullSummary(), extras()...); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "summary.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("summary differs from %s (go test -update to accept):\n%s", golden, buf.String())
	}
	checkLines(t, buf.String())
}

// checkLines asserts the layout: every line exactly Width columns, no
// escape sequence, the title and closing lines.
func checkLines(t *testing.T, out string) {
	t.Helper()
	if strings.ContainsRune(out, '\x1b') {
		t.Error("output holds an ANSI escape")
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n != Width {
			t.Errorf("line %d is %d columns: %q", i+1, n, l)
		}
	}
	if !strings.HasPrefix(lines[0], "=") || lines[len(lines)-1] != strings.Repeat("=", Width) {
		t.Errorf("title or closing line missing: %q ... %q", lines[0], lines[len(lines)-1])
	}
}

func TestSectionOrder(t *testing.T) {
	var buf bytes.Buffer
	if err := Text(&buf, fullSummary(), extras()...); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	last := -1
	for _, title := range []string{" Engine Benchmark Result (long-doc-qa) ", " Configuration ", " Results ",
		" Time to First Token ", " Decoding Speed ", " Cache ", " Latency ", " Long Doc QA ", " Server Metrics ", " Expectation "} {
		i := strings.Index(out, title)
		if i < 0 || i < last {
			t.Errorf("section %q missing or out of order", title)
		}
		last = i
	}
}

func TestNullsPrintNA(t *testing.T) {
	s := &record.Summary{} // nothing measured, no config
	var buf bytes.Buffer
	if err := Text(&buf, s); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	checkLines(t, out)
	for _, label := range []string{"Hit ratio (%):", "Mean ITL (ms):", "P95 round gap (ms):",
		"Aggregate prefill (tok/s):", "Max dispatch lag (ms):", "Model:", "Seed:"} {
		line := lineOf(out, label)
		if !strings.HasSuffix(line, " n/a") {
			t.Errorf("null %s prints %q, want n/a", label, line)
		}
	}
	// Undefined results figures (nothing succeeded) print n/a, never a
	// 0.00 that reads as a measurement; counts print as numbers.
	for _, label := range []string{"Mean TTFT (ms):", "P99 TTFT (ms):", "Mean decode (tok/s):", "P50 latency (ms):"} {
		if line := lineOf(out, label); !strings.HasSuffix(line, " n/a") {
			t.Errorf("undefined %s prints %q, want n/a", label, line)
		}
	}
	if line := lineOf(out, "Total requests:"); !strings.HasSuffix(line, " 0") {
		t.Errorf("zero total prints %q", line)
	}
	if !strings.HasPrefix(out, center(" Engine Benchmark Result (n/a) ", '=')) {
		t.Errorf("title without a workload: %q", strings.SplitN(out, "\n", 2)[0])
	}
}

func lineOf(out, label string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, label) {
			return l
		}
	}
	return ""
}

func TestCenterLikePython(t *testing.T) {
	// " Engine Benchmark Result (long-doc-qa) " is 39 columns: 17 fill
	// columns, 8 left and 9 right ("...".center(56, "=") in Python).
	got := center(" Engine Benchmark Result (long-doc-qa) ", '=')
	want := "======== Engine Benchmark Result (long-doc-qa) ========="
	if got != want {
		t.Errorf("center = %q, want %q", got, want)
	}
	if got := center(" Cache ", '-'); got != strings.Repeat("-", 24)+" Cache "+strings.Repeat("-", 25) {
		t.Errorf("center(Cache) = %q", got)
	}
}

func TestRowFitting(t *testing.T) {
	cases := []struct {
		r    Row
		want string
	}{
		{Row{"Seed", "42"}, "Seed:" + strings.Repeat(" ", 49) + "42"},
		{Row{"Engine URL", "http://a-very-long-host-name.example.internal:8000/v1/with/path"},
			"Engine URL: http://a-very-long-ho...al:8000/v1/with/path"},
		{Row{"A label far too long to leave room for its value here", "12345.67"},
			"A label far too long to leave room for its ...: 12345.67"},
		{Row{strings.Repeat("L", 60), strings.Repeat("v", 60)},
			"LLLLLLLLLLLL...: " + strings.Repeat("v", 18) + "..." + strings.Repeat("v", 18)},
		{Row{"Detail", "line one\nline two\x1b[31m"}, "Detail:" + strings.Repeat(" ", 27) + "line one line two [31m"},
		{Row{"Empty", ""}, "Empty:" + strings.Repeat(" ", 47) + "n/a"},
	}
	for _, c := range cases {
		got := row(c.r)
		if got != c.want {
			t.Errorf("row(%q, %q)\n got %q\nwant %q", c.r.Label, c.r.Value, got, c.want)
		}
		if n := utf8.RuneCountInString(got); n != Width {
			t.Errorf("row %q is %d columns", got, n)
		}
	}
}

func TestFormatHelpers(t *testing.T) {
	cases := map[string]string{
		Float(3.14159): "3.14", Float(2): "2.00", Float(-0.001): "0.00", Float(1e6): "1000000.00",
		Int(1290000): "1290000", OptFloat(nil): "n/a", OptFloat(fptr(0.125)): "0.12",
		Percent(fptr(0.48)): "48.00", Percent(nil): "n/a",
	}
	for got, want := range cases {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestTokensPerGBZeroPrintsNA(t *testing.T) {
	for cfg, want := range map[string]string{
		`{"workload":"cache-probe","tokens_per_gb_kvcache":0}`:    " n/a",
		`{"workload":"long-doc-qa","tokens_per_gb_kvcache":6553}`: " 6553",
	} {
		var buf bytes.Buffer
		if err := Text(&buf, &record.Summary{Config: json.RawMessage(cfg)}); err != nil {
			t.Fatal(err)
		}
		if line := lineOf(buf.String(), "Tokens per GB of KV cache:"); !strings.HasSuffix(line, want) {
			t.Errorf("%s: %q, want suffix %q", cfg, line, want)
		}
	}
}

func TestFailedChecks(t *testing.T) {
	base := []Section{{Title: "Cache Probe"}}
	if got := FailedChecks(base, nil); len(got) != 1 {
		t.Fatalf("no reasons must add no section: %v", got)
	}
	got := FailedChecks(base, []string{"first_0: error connect", "expected 7"})
	if len(got) != 2 || got[1].Title != "Failed checks" || len(got[1].Rows) != 2 || got[1].Rows[1].Value != "expected 7" {
		t.Fatalf("sections %+v", got)
	}
	if len(base) != 1 {
		t.Fatal("the caller's sections changed")
	}
}

// TestLoadAndGoodputSections: Goodput follows Latency, then Load; the
// verdict's reasons are wrapped whole, never cut, and every line keeps
// the table's width.
func TestLoadAndGoodputSections(t *testing.T) {
	target, achieved, frac := 4.0, 0.52, 0.75
	reason := "12 of 40 requests were held back by the workload's design, not by an overloaded client: a busy chat session (1 session(s)); to deliver the rate, give it more sessions through a larger --kv-cache-volume"
	s := &record.Summary{
		Config:  map[string]any{"workload": "multi-round-chat"},
		Load:    &load.Block{TargetRate: &target, AchievedRate: &achieved, Arrival: "constant", DegradedReasons: []string{reason}},
		Goodput: &load.Goodput{GoodRequests: 30, GoodFraction: &frac},
	}
	var b strings.Builder
	if err := Text(&b, s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lat, good, ld := strings.Index(out, " Latency "), strings.Index(out, " Goodput "), strings.Index(out, " Load ")
	if lat < 0 || good < lat || ld < good {
		t.Fatalf("section order Latency %d, Goodput %d, Load %d:\n%s", lat, good, ld, out)
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if len([]rune(l)) != Width {
			t.Fatalf("line of %d columns: %q", len([]rune(l)), l)
		}
	}
	joined := strings.Join(strings.Fields(out), " ")
	if !strings.Contains(joined, "- "+reason) {
		t.Fatalf("reason not whole in:\n%s", out)
	}
	for _, want := range []string{"Load delivered:", "NO", "Good fraction (%):", "75.00", "SLO TTFT (ms):", "not set", "Target rate (req/s):", "4.00"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q missing:\n%s", want, out)
		}
	}
}

// TestOverloadSection: an overloaded run's text summary ends with the
// warning and each reason; a quiet one has no such section.
func TestOverloadSection(t *testing.T) {
	s := &record.Summary{}
	s.Client.Overloaded = true
	s.Client.OverloadReasons = []string{"timing error p99 7.20 ms > 2.00 ms allowed"}
	s.Client.TimingErrorP99Ms, s.Client.TimingErrorMaxMs, s.Client.MachineCPUBusyMax = ptrF(7.2), ptrF(41), ptrF(100)
	var b strings.Builder
	if err := Text(&b, s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Client Overloaded: Latencies May Be Inflated", "Client overloaded:                                   yes",
		"Timing error p99 (ms):                              7.20", "Timing error max (ms):                             41.00",
		"Latencies may be inflated by up to 7.20 ms (timing", "error p99; max 41.0 ms)", "reason:       timing error p99 7.20 ms > 2.00 ms allowed"} {
		if !strings.Contains(out, want) {
			t.Fatalf("%q missing from the overloaded summary:\n%s", want, out)
		}
	}
	// The busy machine is said by the reasons, not by a note.
	if strings.Contains(out, "Note: machine busy") {
		t.Fatalf("an overloaded run has the busy-machine note:\n%s", out)
	}
	s.Client.Overloaded, s.Client.OverloadReasons = false, nil
	s.Client.TimingErrorP99Ms = ptrF(0.3)
	b.Reset()
	Text(&b, s)
	if out := b.String(); strings.Contains(out, "Client Overloaded") || !strings.Contains(out, "Note: machine busy; timing error p99 0.30 ms") {
		t.Fatalf("a run on time on a busy machine: a note and no overload section:\n%s", out)
	}
}

func ptrF(v float64) *float64 { return &v }

// TestExpectationSection: the workload's verdict, read from the summary
// as written or as read back from disk; none without a valid one.
func TestExpectationSection(t *testing.T) {
	raw := json.RawMessage(`{"n":1,"expectation":{"expected":"every request is a cold prefill","verdict":"met","reason":"requests: 8/8 cold"}}`)
	for name, w := range map[string]any{
		"written": map[string]any{"expectation": &record.Expectation{Expected: "every request is a cold prefill", Verdict: "met", Reason: "requests: 8/8 cold"}},
		"read":    raw,
	} {
		secs := Expectation(&record.Summary{Workload: w})
		if len(secs) != 1 || secs[0].Title != "Expectation" {
			t.Fatalf("%s: %+v", name, secs)
		}
		want := []Row{{"Verdict", "met"}, {"", "Expected: every request is a cold prefill"}, {"", "Observed: requests: 8/8 cold"}}
		if fmt.Sprint(secs[0].Rows) != fmt.Sprint(want) {
			t.Errorf("%s: rows %q", name, secs[0].Rows)
		}
	}
	for name, w := range map[string]any{
		"none":      map[string]any{"n": 1},
		"no block":  nil,
		"bad value": json.RawMessage(`{"expectation":{"expected":"x","verdict":"passed","reason":"y"}}`),
		"not obj":   json.RawMessage(`{"expectation":"met"}`),
	} {
		if secs := Expectation(&record.Summary{Workload: w}); secs != nil {
			t.Errorf("%s: %+v, want no section", name, secs)
		}
	}
	var buf bytes.Buffer
	if err := Text(&buf, fullSummary()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "Verdict:                                         NOT MET") {
		t.Errorf("not met does not stand out:\n%s", buf.String())
	}
}
