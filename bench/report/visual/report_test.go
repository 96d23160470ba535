package visual

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
)

// parseSVG checks b is one well-formed SVG document and returns its
// element names with their counts.
func parseSVG(t *testing.T, b []byte) map[string]int {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	counts := map[string]int{}
	depth, roots := 0, 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
				if e.Name.Local != "svg" || e.Name.Space != "http://www.w3.org/2000/svg" {
					t.Fatalf("root element %v, want svg in the SVG namespace", e.Name)
				}
			}
			counts[e.Name.Local]++
			depth++
		case xml.EndElement:
			depth--
		}
	}
	if roots != 1 || depth != 0 {
		t.Fatalf("%d root elements, depth %d at the end", roots, depth)
	}
	return counts
}

func TestEveryChartIsValidSVG(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, fixture{name: "all", n: 120, coldTTFT: 400, reusedEvery: 3, itlMs: 15, metrics: true, trace: true, seed: 1})
	rep, err := Open(dir, []string{"20260301-120000-long-doc-qa-all"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ChartTTFTCDF, ChartTTFTTime, ChartThroughputTime, ChartITLHist, ChartHitTime, ChartTraceCached} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := rep.SVG(&buf, name); err != nil {
				t.Fatal(err)
			}
			counts := parseSVG(t, buf.Bytes())
			if counts["path"] < 20 || counts["text"] < 5 {
				t.Errorf("%s: %d paths, %d texts: too few for a chart with axes and data", name, counts["path"], counts["text"])
			}
			if !bytes.HasPrefix(buf.Bytes(), []byte("<?xml")) {
				t.Error("a standalone SVG starts with its XML declaration")
			}
			if !bytes.Contains(buf.Bytes(), []byte("fill:#FFFFFF")) {
				t.Error("a standalone SVG has a white background")
			}
		})
	}
	// A sweep's curve too.
	sd := writeSweep(t, dir, "s", []float64{1, 2, 4, 8}, false)
	rep, err = Open(dir, []string{sd})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.SVG(&buf, ChartSweepCurve); err != nil {
		t.Fatal(err)
	}
	parseSVG(t, buf.Bytes())
	for _, want := range []string{"TTFT p50", "TTFT p99", "good fraction", "load not delivered", "goodput target 0.9"} {
		if !bytes.Contains(buf.Bytes(), []byte(">"+want+"<")) {
			t.Errorf("sweep curve legend lacks %q", want)
		}
	}
}

func TestUnknownRunChartFormatAreUsageErrorsNamingThem(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, fixture{name: "a", n: 20, coldTTFT: 100, itlMs: 10})
	_, err := Open(dir, []string{"20990101-000000-nothing"})
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "20990101-000000-nothing") {
		t.Errorf("unknown run: %v", err)
	}
	if err := CheckFormat("pdf", ""); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), `"pdf"`) {
		t.Errorf("unknown format: %v", err)
	}
	if err := CheckFormat("svg", "pie"); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), `"pie"`) {
		t.Errorf("unknown chart: %v", err)
	}
	if err := CheckFormat("svg", ""); !errors.Is(err, ErrUsage) {
		t.Errorf("svg without a chart: %v", err)
	}
	if err := CheckFormat("html", ChartTTFTCDF); !errors.Is(err, ErrUsage) {
		t.Errorf("a chart with html: %v", err)
	}
	rep, err := Open(dir, []string{"20260301-120000-long-doc-qa-a"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.SVG(&buf, "pie"); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "pie") {
		t.Errorf("unknown chart: %v", err)
	}
	// Known charts these runs have no data for say why.
	for name, why := range map[string]string{ChartHitTime: "metrics.jsonl", ChartSweepCurve: "sweep", ChartTraceCached: "trace"} {
		err := rep.SVG(&buf, name)
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), why) {
			t.Errorf("%s without data: %v", name, err)
		}
	}
	if buf.Len() != 0 {
		t.Error("a failed chart wrote something")
	}
}

func loadHTML(t *testing.T, runsDir string, args ...string) string {
	t.Helper()
	rep, err := Open(runsDir, args)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.HTML(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

var (
	externalRef = regexp.MustCompile(`(?i)(src|href|xlink:href)\s*=|url\(|@import|<script|<link|<iframe|<object|<embed`)
	figureTag   = regexp.MustCompile(`<figure class="chart" data-chart="([a-z-]+)"`)
)

// selfContained fails on anything that could make a browser fetch.
func selfContained(t *testing.T, html string) {
	t.Helper()
	if m := externalRef.FindString(html); m != "" {
		t.Errorf("the report references something outside itself: %q", m)
	}
	stripped := strings.ReplaceAll(html, `xmlns="http://www.w3.org/2000/svg"`, "")
	stripped = strings.ReplaceAll(stripped, `xmlns:xlink="http://www.w3.org/1999/xlink"`, "")
	if i := strings.Index(stripped, "http"); i >= 0 && strings.Contains(stripped[i:min(i+8, len(stripped))], "://") {
		t.Errorf("a URL in the report: %q", stripped[max(0, i-40):min(len(stripped), i+60)])
	}
	for _, want := range []string{"prefers-color-scheme:dark", "Content-Security-Policy", "default-src 'none'"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func charts(html string) []string {
	var out []string
	for _, m := range figureTag.FindAllStringSubmatch(html, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestOneRunReport(t *testing.T) {
	dir := t.TempDir()
	rd := writeRun(t, dir, fixture{name: "one", n: 150, coldTTFT: 500, reusedEvery: 4, itlMs: 12, metrics: true,
		engineURL: "http://bench:s3cret@10.0.0.5:8000/v1?token=abc", overloaded: true, seed: 3})
	html := loadHTML(t, dir, "20260301-120000-long-doc-qa-one")
	selfContained(t, html)
	got := charts(html)
	want := []string{ChartTTFTCDF, ChartTTFTTime, ChartThroughputTime, ChartITLHist, ChartHitTime}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("charts %v, want %v", got, want)
	}
	if n := strings.Count(html, "<svg "); n != len(want) {
		t.Errorf("%d svg elements, want %d", n, len(want))
	}
	for _, secret := range []string{"s3cret", "bench:", "token=abc"} {
		if strings.Contains(html, secret) {
			t.Errorf("the report holds %q from the engine URL", secret)
		}
	}
	for _, want := range []string{"http://10.0.0.5:8000/v1", "20260301-120000-long-doc-qa-one", "sim-model", "long-doc-qa",
		"OVERLOADED: scheduler p99 latency 7.2 ms &gt; 5 ms", "Warning:", "latencies may be inflated", "NOT delivered",
		// Every cache state present gets a legend entry with its count,
		// and the three differ by dash pattern, not only by colour.
		">cold (", ">reused (", ">unverified (", "stroke-dasharray:6,3", "stroke-dasharray:1.5,2.5"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(html, "stroke:#000000") {
		t.Error("inline charts draw black ink that a dark page would hide")
	}
	// The summary tables hold bench_summary.json's values: every number
	// of every block, exact on hover.
	b, err := os.ReadFile(filepath.Join(rd, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := parseOrdered(b)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	var walk func(prefix string, n *node)
	walk = func(prefix string, n *node) {
		switch n.kind {
		case 'o':
			for i, k := range n.keys {
				key := k
				if prefix != "" {
					key = prefix + "." + k
				}
				walk(key, n.vals[i])
			}
		case 'n':
			block, key, _ := strings.Cut(prefix, ".")
			if block == "schema_version" || block == "run" || block == "tool" {
				return
			}
			cellRe := regexp.MustCompile(`<td class="label">` + regexp.QuoteMeta(key) + `</td><td class="num [^"]*" title="` + regexp.QuoteMeta(n.text) + `">`)
			if !cellRe.MatchString(html) {
				t.Errorf("summary table lacks %s = %s", prefix, n.text)
			}
			checked++
		}
	}
	walk("", n)
	if checked < 40 {
		t.Errorf("only %d figures checked", checked)
	}
}

func TestComparisonReport(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, fixture{name: "base", n: 80, coldTTFT: 400, reusedEvery: 2, itlMs: 15, seed: 1})
	writeRun(t, dir, fixture{name: "faster", n: 80, coldTTFT: 200, reusedEvery: 2, itlMs: 10, seed: 2,
		started: time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC), undelivered: true})
	ids := []string{"20260301-120000-long-doc-qa-base", "20260301-130000-long-doc-qa-faster"}
	rep, err := Open(dir, ids)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rep.DefaultPath("html", ""), "report-"+ids[0]+"-vs-"+ids[1]+".html"; got != want {
		t.Errorf("default path %q, want %q", got, want)
	}
	var buf bytes.Buffer
	if err := rep.HTML(&buf); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	selfContained(t, html)
	if got := charts(html); len(got) != 4 {
		t.Errorf("charts %v, want the four per-request charts", got)
	}
	for _, want := range []string{">base (", ">faster (", "Deltas against " + ids[0], "Δ B vs A", "better", "NOT delivered: achieved 7.1 req/s",
		"A (circle)", "B (triangle)", "Summary of " + ids[1]} {
		if !strings.Contains(html, want) {
			t.Errorf("comparison lacks %q", want)
		}
	}
	// Mean TTFT halved: the delta row says better in words.
	row := regexp.MustCompile(`<td class="label">Mean TTFT \(ms\)</td>.*?</tr>`).FindString(html)
	if !strings.Contains(row, "better") || !strings.Contains(row, "%") {
		t.Errorf("mean TTFT delta row: %s", row)
	}
}

func TestSweepReport(t *testing.T) {
	dir := t.TempDir()
	sd := writeSweep(t, dir, "cap", []float64{1, 2, 4}, true)
	rep, err := Open(dir, []string{filepath.Base(sd)})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.DefaultPath("svg", ChartSweepCurve); got != filepath.Join(sd, "sweep-curve.svg") {
		t.Errorf("default chart path %q", got)
	}
	var buf bytes.Buffer
	if err := rep.HTML(&buf); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	selfContained(t, html)
	got := charts(html)
	if len(got) < 5 || got[0] != ChartSweepCurve {
		t.Errorf("charts %v: want the sweep curve first, then the cells' charts", got)
	}
	if strings.Contains(html, "trace-cached: not drawn") {
		t.Error("a sweep of long-doc-qa explains why it has no trace chart")
	}
	for _, want := range []string{"Cells of " + filepath.Base(sd), "NOT delivered in: 4 req/s", ">1 req/s (", ">4 req/s (", "the load was not delivered in cell 4 req/s"} {
		if !strings.Contains(html, want) {
			t.Errorf("sweep report lacks %q", want)
		}
	}
}

func TestTwoSweepsOverlayTheirCurves(t *testing.T) {
	dir := t.TempDir()
	a := writeSweep(t, dir, "before", []float64{1, 2, 4}, false)
	b := writeSweep(t, dir, "after", []float64{1, 2, 4, 8}, false)
	html := loadHTML(t, dir, a, b)
	selfContained(t, html)
	if got := charts(html); len(got) != 1 || got[0] != ChartSweepCurve {
		t.Errorf("charts %v, want the overlaid sweep curve alone", got)
	}
	for _, want := range []string{">before TTFT p50<", ">after TTFT p99<", ">after good fraction<", "Cells of " + filepath.Base(a), "Cells of " + filepath.Base(b), "A (circle)", "B (triangle)"} {
		if !strings.Contains(html, want) {
			t.Errorf("sweep comparison lacks %q", want)
		}
	}
	if strings.Contains(html, "not drawn") {
		t.Error("a sweep comparison explains charts it never draws")
	}
}

func TestMergedAndIncompleteRuns(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, fixture{name: "merged", n: 30, coldTTFT: 100, itlMs: 10, mergedFrom: []string{"shard-0", "shard-1"}})
	writeRun(t, dir, fixture{name: "crashed", n: 30, coldTTFT: 100, itlMs: 10, noSummary: true})
	html := loadHTML(t, dir, "20260301-120000-long-doc-qa-merged")
	if !strings.Contains(html, "shard-0, shard-1") {
		t.Error("a merged run's header does not name its shards")
	}
	// An array of objects (a merged run's shards) is a table of its own.
	tables := blockTables("shards", mustParse(t, `[{"index":0,"run_id":"a","requests":15},{"index":1,"run_id":"b","requests":15}]`))
	if len(tables) != 1 || tables[0].Title != "shards" || strings.Join(tables[0].Head, ",") != "index,run_id,requests" || len(tables[0].Rows) != 2 {
		t.Errorf("shards table: %+v", tables)
	}
	html = loadHTML(t, dir, "20260301-120000-long-doc-qa-crashed")
	if !strings.Contains(html, "incomplete") || len(charts(html)) < 4 {
		t.Errorf("a run without a summary: incomplete not said, or charts %v", charts(html))
	}
	if !strings.Contains(html, `<td class="label">total_requests</td><td class="num " title="30">30</td>`) {
		t.Error("a run without a summary shows no figures computed from its requests")
	}
}

func TestRecordFilesAreReadSafely(t *testing.T) {
	dir := t.TempDir()
	rd := writeRun(t, dir, fixture{name: "fifo", n: 10, coldTTFT: 100, itlMs: 10})
	// A FIFO in place of metrics.jsonl: refused at once, never opened
	// (opening it would block until a writer came).
	if err := syscall.Mkfifo(filepath.Join(rd, MetricsFile), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := LoadRun(rd); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, record.ErrNotRegular) || !strings.Contains(err.Error(), MetricsFile) {
			t.Errorf("FIFO: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("reading a run with a FIFO blocked")
	}
	// A symlink loop.
	rd2 := writeRun(t, dir, fixture{name: "loop", n: 10, coldTTFT: 100, itlMs: 10})
	loop := filepath.Join(rd2, MetricsFile)
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRun(rd2); err == nil {
		t.Error("a symlink loop was read")
	}
	// An oversized line is a torn tail (spec/record.md, "Reading the
	// record safely"): the reading ends there, counted once, and what
	// follows it is not read.
	rd3 := writeRun(t, dir, fixture{name: "torn", n: 10, coldTTFT: 100, itlMs: 10})
	f, err := os.OpenFile(filepath.Join(rd3, "requests.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(bytes.Repeat([]byte("x"), record.MaxLineBytes+10))
	f.Write([]byte("\n\x00\x00\x00\x00\n"))
	f.Write([]byte(`{"request_id":"late","phase":"measured","successful":true,"submit_time":1772366401,"finish_time":1772366402,"ttft_s":0.05,"cache_state":"cold"}` + "\n"))
	f.Close()
	r, err := LoadRun(rd3)
	if err != nil {
		t.Fatal(err)
	}
	if r.Torn != 1 || len(r.reqs) != 10 {
		t.Errorf("torn %d, requests %d; want 1 torn tail and the 10 requests before it", r.Torn, len(r.reqs))
	}
	// A NUL run is a torn tail too.
	rd4 := writeRun(t, dir, fixture{name: "nul", n: 10, coldTTFT: 100, itlMs: 10})
	f, err = os.OpenFile(filepath.Join(rd4, "requests.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("\x00\x00\x00\x00\n"))
	f.Write([]byte(`{"request_id":"late","phase":"measured","successful":true,"submit_time":1772366401,"finish_time":1772366402,"ttft_s":0.05,"cache_state":"cold"}` + "\n"))
	f.Close()
	if r, err = LoadRun(rd4); err != nil {
		t.Fatal(err)
	}
	if r.Torn != 1 || len(r.reqs) != 10 {
		t.Errorf("after a NUL run: torn %d, requests %d; want 1 torn tail and 10 requests", r.Torn, len(r.reqs))
	}
}

func TestReportOfManyRequestsIsBounded(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, fixture{name: "big", n: 20000, coldTTFT: 300, reusedEvery: 3, itlMs: 10, metrics: true, seed: 9})
	html := loadHTML(t, dir, "20260301-120000-long-doc-qa-big")
	if len(html) > 3<<20 {
		t.Errorf("report of 20000 requests is %d bytes", len(html))
	}
	if !strings.Contains(html, "One request in 7 is drawn (20000 requests in all).") {
		t.Error("the scatter does not say it is sampled")
	}
}

func TestStripCredentials(t *testing.T) {
	for in, want := range map[string]string{
		"http://user:pass@host:8000/v1":  "http://host:8000/v1",
		"https://host/v1?api_key=secret": "https://host/v1",
		"builtin":                        "builtin",
		"user:pass@host:8000":            "host:8000",
	} {
		if got := StripCredentials(in); got != want {
			t.Errorf("StripCredentials(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOrderedJSONKeepsOrderAndLiterals(t *testing.T) {
	n, err := parseOrdered([]byte(`{"b":1.50,"a":{"z":null,"y":[1,"x"]},"c":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(n.keys, ",") != "b,a,c" || n.get("b").text != "1.50" || n.get("a", "z").kind != 'z' {
		t.Errorf("parsed %+v", n)
	}
	if _, err := parseOrdered([]byte(`{} {}`)); err == nil {
		t.Error("trailing data accepted")
	}
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	if _, err := parseOrdered([]byte(deep)); err == nil {
		t.Error("100 levels of nesting accepted")
	}
	var v any
	if json.Unmarshal([]byte(deep), &v) != nil {
		t.Fatal("bad test input")
	}
}

func mustParse(t *testing.T, s string) *node {
	t.Helper()
	n, err := parseOrdered([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
