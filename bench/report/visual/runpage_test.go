package visual

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/stats"
)

// writeStoryRun is a run as kvbench writes one today: warmup requests
// that found nothing cached, then measured requests nearly all reused
// (so the warmup is the cold baseline), and a summary with its
// headline, figures by cache state and serving figures.
func writeStoryRun(t *testing.T, dir string, warmups int) string {
	t.Helper()
	rd := writeRun(t, dir, fixture{name: "story", n: 60, coldTTFT: 420, reusedEvery: 1000, itlMs: 11, seed: 9})
	b, err := os.ReadFile(filepath.Join(rd, record.RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	var measured []sender.Result
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var r sender.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		measured = append(measured, r)
	}
	c := stats.New()
	var lines bytes.Buffer
	for i := range warmups {
		submit := measured[0].SubmitTime - 0.5*float64(warmups-i)
		ttft := 0.4 + 0.01*float64(i)
		w := sender.Result{RequestID: fmt.Sprintf("warmup_doc%d", i), Phase: sender.PhaseWarmup, Successful: true,
			SubmitTime: submit, FirstTokenTime: fp(submit + ttft), FinishTime: submit + ttft, TTFT: fp(ttft), RequestLatency: ttft,
			PromptTokens: ip(2000), CachedTokens: ip(0), CompletionTokens: ip(1), CacheState: sender.StateCold, Complete: true, Chunks: 1}
		c.Add(&w)
		j, _ := json.Marshal(&w)
		lines.Write(append(j, '\n'))
	}
	for i := range measured {
		c.Add(&measured[i])
		j, _ := json.Marshal(&measured[i])
		lines.Write(append(j, '\n'))
	}
	if err := os.WriteFile(filepath.Join(rd, record.RequestsFile), lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	blk := c.Final(stats.ClientInfo{CPUSeconds: 0.5})
	s := record.Summary{
		SchemaVersion: 1, Tool: record.Tool{Name: "kvbench", Version: "test"},
		Run:     record.RunInfo{ID: filepath.Base(rd), Name: "story", StartedAt: "2026-03-01T12:00:00Z", FinishedAt: "2026-03-01T12:00:04Z"},
		Config:  map[string]any{"engine_url": "http://127.0.0.1:8000/v1", "model": "sim-model", "workload": "long-doc-qa", "ldqa_document_length": 2000},
		Results: blk.Results, Cache: blk.Cache, Latency: blk.Latency, Client: blk.Client,
		ByCacheState: &blk.ByCacheState, Serving: &blk.Serving, Errors: &blk.Errors,
		Workload: map[string]any{"document_length": 2000, "observed": map[string]any{"requests": 60, "hit_ratio": 0.97, "mean_ttft_ms": 71.5},
			"expectation": &record.Expectation{Expected: "every question reuses its document", Verdict: record.VerdictMet, Reason: "questions: 59/60 reused their document"}},
	}
	if s.Errors == nil || *s.Errors == nil {
		s.Errors = &map[string]int{}
	}
	s.Headline = record.NewHeadline(&s, blk.Speedup)
	out, err := json.MarshalIndent(&s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rd, record.SummaryFile), out, 0o644); err != nil {
		t.Fatal(err)
	}
	return rd
}

var (
	closedDetails = regexp.MustCompile(`(?s)<details(?: [^>]*)?>.*?</details>`)
	tags          = regexp.MustCompile(`(?s)<svg.*?</svg>|<style.*?</style>|<head.*?</head>|<[^>]+>`)
)

// visibleText is what a reader sees without opening anything: the page
// without its closed <details>, tags and charts.
func visibleText(page string) string {
	page = closedDetails.ReplaceAllStringFunc(page, func(d string) string {
		if strings.HasPrefix(d, "<details open") || strings.Contains(d[:strings.Index(d, ">")], " open") {
			return d
		}
		return ""
	})
	return strings.Join(strings.Fields(html.UnescapeString(tags.ReplaceAllString(page, " "))), " ")
}

// TestOneRunReadsAsADocument: the header is the headline (the terminal's
// line, then the verdict, hit ratio, cold and reused TTFT and the
// speedup with its interval, what limited the run) before any chart;
// the TTFT charts draw the warmup's cold requests the headline used;
// every figure of the summary is labelled in words, the raw summary
// only in a closed <details>.
func TestOneRunReadsAsADocument(t *testing.T) {
	dir := t.TempDir()
	rd := writeStoryRun(t, dir, 5)
	s, err := record.ReadSummary(rd)
	if err != nil {
		t.Fatal(err)
	}
	if s.Headline == nil || s.Headline.Baseline == nil || *s.Headline.Baseline != stats.BaselineWarmupCold || s.Headline.Speedup == nil {
		t.Fatalf("the fixture's headline does not use the warmup as its baseline: %+v", s.Headline)
	}
	page := loadHTML(t, dir, filepath.Base(rd))
	selfContained(t, page)
	line := report.HeadlineLine(s.Headline)
	at := strings.Index(page, html.EscapeString(line))
	charts := strings.Index(page, `<h2 id="charts">`)
	if at < 0 || charts < 0 || at > charts {
		t.Fatalf("headline %q at %d, charts at %d", line, at, charts)
	}
	head := visibleText(page[:charts])
	for _, want := range []string{"expectation met", "met", report.Pct1(s.Headline.HitRatio), report.Ms(s.Headline.ColdTTFTP50ms) + " → " + report.Ms(s.Headline.ReusedTTFTP50ms),
		report.Times(*s.Headline.Speedup) + " faster", "95% CI ", "the warmup's 5 requests that found nothing cached", "Can the figures be trusted?"} {
		if !strings.Contains(head, want) {
			t.Errorf("header lacks %q:\n%s", want, head)
		}
	}
	// One measured request was cold: the limits say so in words.
	if !strings.Contains(head, "Limited by:") && !strings.Contains(head, "Nothing limited the run") {
		t.Errorf("the header does not say what limited the run:\n%s", head)
	}
	// The TTFT charts: the warmup's cold requests beside the reused.
	for _, name := range []string{ChartTTFTCDF, ChartTTFTTime} {
		fig := page[strings.Index(page, `data-chart="`+name+`"`):]
		fig = fig[:strings.Index(fig, "</figure>")]
		for _, want := range []string{">warmup cold (5)<", fmt.Sprintf(">reused (%d)<", s.Cache.Reused)} {
			if !strings.Contains(fig, want) {
				t.Errorf("%s lacks the legend entry %q", name, want)
			}
		}
	}
	// The labelled summary, and nothing raw a reader sees.
	vis := visibleText(page)
	for _, want := range []string{"P50 TTFT", "Mean ITL", "Hit ratio", "Total input tokens", "By cache state", "Warmup requests", "Median TTFT",
		"Document length", "Observed: hit ratio", "--ldqa-document-length"} {
		if !strings.Contains(vis, want) {
			t.Errorf("the summary lacks %q", want)
		}
	}
	raw := map[string]bool{}
	var walk func(prefix string, n *node)
	sb, _ := os.ReadFile(filepath.Join(rd, record.SummaryFile))
	root, err := parseOrdered(sb)
	if err != nil {
		t.Fatal(err)
	}
	walk = func(prefix string, n *node) {
		if n.kind != 'o' {
			return
		}
		for i, k := range n.keys {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			if strings.Contains(k, "_") && prefix != "cache.unverified_reasons" && prefix != "errors" {
				raw[k] = true
			}
			// Every dotted tail of the path: latency.itl_ms.p50 and itl_ms.p50.
			for parts := strings.Split(key, "."); len(parts) > 1; parts = parts[1:] {
				raw[strings.Join(parts, ".")] = true
			}
			walk(key, n.vals[i])
		}
	}
	walk("", root)
	if !raw["itl_ms.p50"] || !raw["unverified_reasons"] || !raw["cache_reset"] || len(raw) < 60 {
		t.Fatalf("the raw keys are not all read (%d)", len(raw))
	}
	for k := range raw {
		if regexp.MustCompile(`(^|[^\w.-])` + regexp.QuoteMeta(k) + `($|[^\w.])`).MatchString(vis) {
			t.Errorf("the raw key %q is visible text", k)
		}
	}
	for _, bad := range []string{"n/a%", "{}", " 1 requests", "1 requests "} {
		if strings.Contains(vis, bad) {
			t.Errorf("visible text holds %q", bad)
		}
	}
	// The summary as written is there, closed.
	if !strings.Contains(page, `<details id="summary-of-`) || !strings.Contains(page, `<td class="label">itl_ms.p50</td>`) {
		t.Error("the raw summary is not in a closed <details>")
	}
}

// TestOldSummaryHasNoHeadline: a summary written before headlines shows
// no headline at all, rather than zeros.
func TestOldSummaryHasNoHeadline(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, fixture{name: "old", n: 40, coldTTFT: 300, reusedEvery: 2, itlMs: 10, seed: 2})
	page := loadHTML(t, dir, "20260301-120000-long-doc-qa-old")
	for _, bad := range []string{`class="lede"`, `class="cards"`, "0.0x", "Can the figures be trusted?"} {
		if strings.Contains(page, bad) {
			t.Errorf("an old summary's page holds %q", bad)
		}
	}
	if !strings.Contains(visibleText(page), "P50 TTFT") {
		t.Error("an old summary's figures are not shown")
	}
}

// headerLayout measures, in the rendered page, where the headline ends
// and whether anything is wider than its box.
const headerLayout = `JSON.stringify({
  trustBottom: (document.getElementById("trust") || {getBoundingClientRect: () => ({bottom: 1e9})}).getBoundingClientRect().bottom,
  chartsTop: document.getElementById("charts").getBoundingClientRect().top,
  pageWide: document.documentElement.scrollWidth > window.innerWidth + 1,
  overflowing: [...document.querySelectorAll(".card .v, .card .k, .sections td, .sections section")].filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent.slice(0, 80)),
})`

// TestDocumentLayoutInABrowser: at 1400 and at 800 pixels the answer
// (headline, cards, what limited the run) fits the first screen, the
// page never scrolls sideways and no card or summary cell is cut.
func TestDocumentLayoutInABrowser(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	browser := startBrowser(t, ctx)
	dir := t.TempDir()
	rd := writeStoryRun(t, dir, 5)
	rep, err := Open(dir, []string{rd})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "story.html")
	if err := rep.WriteFile(file, "html", ""); err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{1400, 800} {
		res, err := load(browser, (&url.URL{Scheme: "file", Path: file}).String(), pageOptions{width: w, eval: headerLayout})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.errors {
			t.Errorf("%d px: console error: %s", w, e)
		}
		var raw string
		if err := json.Unmarshal(res.value, &raw); err != nil {
			t.Fatal(err)
		}
		var got struct {
			TrustBottom, ChartsTop float64
			PageWide               bool
			Overflowing            []string
		}
		if err := json.Unmarshal([]byte(raw), &got); err != nil {
			t.Fatal(err)
		}
		if got.TrustBottom > 900 {
			t.Errorf("%d px: the headline and its limits end at %.0f px, past the first screen", w, got.TrustBottom)
		}
		if got.PageWide {
			t.Errorf("%d px: the page scrolls sideways", w)
		}
		if len(got.Overflowing) > 0 {
			t.Errorf("%d px: cut: %q", w, got.Overflowing)
		}
	}
}
