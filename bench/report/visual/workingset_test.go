package visual

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/stats"
	bsweep "github.com/kvbench/kvbench/bench/sweep"
)

// writeWorkingSetSweep writes a working-set sweep folder as the sweep
// writes it (sweep.json only): cells at the sizes, hit ratios falling
// past 160000 tokens, reused TTFT rising past 40000, the result's
// capacity and fast tier and the engine's declared tiers; extra cells
// are appended as given.
func writeWorkingSetSweep(t *testing.T, dir string, result bool, extra ...record.SweepCell) string {
	t.Helper()
	sd := filepath.Join(dir, "20260302-090000-sweep-long-doc-qa-ws")
	if err := os.MkdirAll(filepath.Join(sd, record.SweepCellsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	var cells []record.SweepCell
	for i, ws := range []float64{10000, 20000, 40000, 80000, 160000, 320000, 166000, 42000} {
		hit, reused := 0.987, 7.6
		if ws > 40000 {
			reused = 80
		}
		if ws > 166000 {
			hit, reused = 0.337, 180
		}
		st := record.CellPass
		if hit < 0.9*0.987 {
			st = record.CellFail
		}
		cells = append(cells, record.SweepCell{Value: ws, RunID: "c" + strconv.Itoa(i), HitRatio: fp(hit), Status: st,
			WorkingSetCell: &record.WorkingSetCell{WorkingSetTokens: ws, IdealHitRatio: fp(0.987), ReusedTTFTP50ms: fp(reused),
				Units: int(ws / 2000), UnitTokens: 2000, Unit: "documents"}})
	}
	cells = append(cells, extra...)
	f := bsweep.File{SchemaVersion: 1, Tool: record.Tool{Name: "kvbench", Version: "test"},
		Sweep: bsweep.Info{ID: filepath.Base(sd), Dimension: bsweep.WorkingSet, Search: true, HitTarget: fp(0.9)},
		Cells: cells}
	if result {
		f.Result = &bsweep.Result{UndeliveredAbove: []record.Undelivered{}, WorkingSetResult: &record.WorkingSetResult{
			CapacityTokens: fp(166000), CapacityGB: fp(16.6), FastTierTokens: fp(42000), FastTierGB: fp(4.2),
			Declared: &record.Declared{Source: "engine /status tiers", GPUTokens: fp(40000), CPUTokens: fp(120000), TotalTokens: fp(160000)}}}
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sd, record.SweepFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return sd
}

// curveSVG is the sweep's sweep-curve chart, read.
func curveSVG(t *testing.T, dir, sd string) svgDoc {
	t.Helper()
	rep, err := Open(dir, []string{sd})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.SVG(&buf, ChartSweepCurve); err != nil {
		t.Fatal(err)
	}
	return readSVG(t, buf.Bytes())
}

// svgDoc is what a test reads of an SVG chart: its texts and the paths
// drawn in each stroke colour (parsed with encoding/xml).
type svgDoc struct {
	texts []string
	paths map[string][]string // stroke colour -> d of each path
}

var strokeColour = regexp.MustCompile(`stroke:(#[0-9A-Fa-f]{6})`)

func readSVG(t *testing.T, b []byte) svgDoc {
	t.Helper()
	parseSVG(t, b) // well-formed, one svg root
	doc := svgDoc{paths: map[string][]string{}}
	dec := xml.NewDecoder(bytes.NewReader(b))
	inText := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			inText = e.Name.Local == "text"
			if e.Name.Local != "path" {
				continue
			}
			var d, style string
			for _, a := range e.Attr {
				switch a.Name.Local {
				case "d":
					d = a.Value
				case "style":
					style = a.Value
				}
			}
			if m := strokeColour.FindStringSubmatch(style); m != nil {
				c := strings.ToUpper(m[1])
				doc.paths[c] = append(doc.paths[c], d)
			}
		case xml.CharData:
			if inText {
				doc.texts = append(doc.texts, strings.TrimSpace(string(e)))
			}
		case xml.EndElement:
			inText = false
		}
	}
	return doc
}

func (d svgDoc) has(text string) bool {
	for _, s := range d.texts {
		if s == text {
			return true
		}
	}
	return false
}

// verticals counts the paths in colour c that are one vertical segment
// ("Mx,y1Lx,y2"), the marks of a capacity.
func (d svgDoc) verticals(c string) int {
	seg := regexp.MustCompile(`^M([-0-9.]+),[-0-9.]+L([-0-9.]+),[-0-9.]+$`)
	n := 0
	for _, p := range d.paths[strings.ToUpper(c)] {
		if m := seg.FindStringSubmatch(p); m != nil && m[1] == m[2] {
			n++
		}
	}
	return n
}

func hexOf(l look) string {
	return fmt.Sprintf("#%02X%02X%02X", l.color.R, l.color.G, l.color.B)
}

// A working-set sweep's curve is hit ratio (observed and ideal) and
// reused TTFT p50 against the working set, with the capacity and fast
// tier found and the declared total and GPU tier drawn as vertical lines
// across both panels and named as the sweep screen names them.
func TestWorkingSetCurveMarksFoundAndDeclared(t *testing.T) {
	dir := t.TempDir()
	sd := writeWorkingSetSweep(t, dir, true)
	doc := curveSVG(t, dir, sd)
	for _, want := range []string{"Hit ratio and reused TTFT against the working set", "Working set (tokens)", "Hit ratio (%)", "Reused TTFT p50 (ms)",
		"hit ratio, observed", "hit ratio, ideal", "reused TTFT p50",
		"capacity 166000", "fast tier 42000", "declared total 160000", "declared GPU 40000"} {
		if !doc.has(want) {
			t.Errorf("working-set curve lacks the text %q (texts %q)", want, doc.texts)
		}
	}
	if doc.has("Achieved request rate (req/s)") || doc.has("TTFT p99") {
		t.Error("a working-set sweep drew the load curve")
	}
	// Each mark crosses both panels, and its legend swatch is a level
	// segment of its own: two vertical segments per mark.
	for name, l := range map[string]look{"capacity": {color: green}, "fast tier": {color: skyBlue}, "declared total": {color: vermillion}, "declared GPU": {color: orange}} {
		if n := doc.verticals(hexOf(l)); n != 2 {
			t.Errorf("%s: %d vertical lines in %s, want one per panel (2)", name, n, hexOf(l))
		}
	}
	// The page's header gives the found figures beside the declared, in
	// the text summary's words.
	html := loadHTML(t, dir, sd)
	selfContained(t, html)
	for _, want := range []string{"Capacity (hit ratio &gt;= 90% of ideal, search)", "166000 tokens (16.6 GB); declared: 160000 tokens",
		"Fast tier (reused TTFT p50 under 2x the smallest cell&#39;s)", "42000 tokens (4.2 GB); declared GPU: 40000 tokens",
		"Declared by", "engine /status tiers (GPU 40000, CPU 120000)"} {
		if !strings.Contains(html, want) {
			t.Errorf("the sweep page lacks %q", want)
		}
	}
	if strings.Contains(html, "n/a: no --slo") {
		t.Error("a working-set sweep's page judged it as a load sweep")
	}
	if got := charts(html); len(got) == 0 || got[0] != ChartSweepCurve {
		t.Errorf("charts %v: the curve first", got)
	}
}

// Before the sweep has a result (still running, or stopped) the curve
// has its cells and no marks, and the header says nothing was found.
func TestWorkingSetCurveWithoutAResult(t *testing.T) {
	dir := t.TempDir()
	sd := writeWorkingSetSweep(t, dir, false)
	doc := curveSVG(t, dir, sd)
	if !doc.has("hit ratio, observed") || !doc.has("reused TTFT p50") {
		t.Errorf("texts %q", doc.texts)
	}
	for _, s := range doc.texts {
		if strings.HasPrefix(s, "capacity") || strings.HasPrefix(s, "declared") {
			t.Errorf("a mark without a result: %q", s)
		}
	}
}

// Figures from sweep.json are hostile: a working set past any cache, a
// hit ratio over 1 or under 0, a TTFT of a year, and a declared tier of
// 1e300 tokens are left out instead of stretching the axes.
func TestWorkingSetCurveLeavesOutHostileFigures(t *testing.T) {
	dir := t.TempDir()
	sd := writeWorkingSetSweep(t, dir, true,
		record.SweepCell{Value: 5e15, HitRatio: fp(0.5), WorkingSetCell: &record.WorkingSetCell{WorkingSetTokens: 5e15, IdealHitRatio: fp(0.9), ReusedTTFTP50ms: fp(10)}},
		record.SweepCell{Value: 90000, HitRatio: fp(7), WorkingSetCell: &record.WorkingSetCell{WorkingSetTokens: 90000, IdealHitRatio: fp(-3), ReusedTTFTP50ms: fp(3.2e10)}},
		record.SweepCell{Value: -1, HitRatio: fp(0.5), WorkingSetCell: &record.WorkingSetCell{WorkingSetTokens: -1, ReusedTTFTP50ms: fp(10)}},
	)
	b, err := os.ReadFile(filepath.Join(sd, record.SweepFile))
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte(`"gpu_tokens":40000`), []byte(`"gpu_tokens":1e300`), 1)
	if err := os.WriteFile(filepath.Join(sd, record.SweepFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	doc := curveSVG(t, dir, sd)
	for _, s := range doc.texts {
		if v, err := strconv.ParseFloat(s, 64); err == nil && (v > 1e6 || v < 0) {
			t.Errorf("an axis reaches %q: a hostile figure was drawn", s)
		}
		if strings.HasPrefix(s, "declared GPU") {
			t.Errorf("a declared tier of 1e300 tokens was marked: %q", s)
		}
	}
	if !doc.has("capacity 166000") || !doc.has("declared total 160000") {
		t.Errorf("the sound marks went with the hostile one: %q", doc.texts)
	}
}

// HitSpans keeps the seconds a file's series can hold: a second listed
// twice, outside a day or with a ratio outside [0, 1] is left out; a
// second without a ratio is a gap; a long series is merged into spans
// of equal width by cached over prompt tokens.
func TestHitSpansCleanAndMerge(t *testing.T) {
	pt := func(sec, prompt, cached int) stats.SecondPoint {
		p := stats.SecondPoint{Second: sec, PromptTokens: prompt, CachedTokens: cached}
		if prompt > 0 {
			p.HitRatio = fp(float64(cached) / float64(prompt))
		}
		return p
	}
	bad := pt(3, 100, 50)
	bad.HitRatio = fp(1.5)
	spans := HitSpans([]stats.SecondPoint{pt(1, 100, 90), pt(0, 100, 100), pt(1, 100, 0), bad, pt(-4, 10, 10), pt(90000, 10, 0), pt(2, 0, 0), pt(4, 100, 10)}, 100)
	type s struct {
		from, to int
		r        float64 // -1: gap
	}
	var got []s
	for _, sp := range spans {
		r := -1.0
		if sp.Ratio != nil {
			r = math.Round(*sp.Ratio*100) / 100
		}
		got = append(got, s{sp.From, sp.To, r})
	}
	want := []s{{0, 1, 1}, {1, 2, 0.9}, {2, 4, -1}, {4, 5, 0.1}}
	if len(got) != len(want) {
		t.Fatalf("spans %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("span %d: %v, want %v (all %v)", i, got[i], want[i], got)
		}
	}
	// 1000 seconds into at most 100 spans: 10 seconds each, by tokens.
	var long []stats.SecondPoint
	for i := range 1000 {
		cached := 100
		if i >= 500 {
			cached = 0
		}
		long = append(long, pt(i, 100+i%2*300, cached*(1+i%2*3)))
	}
	spans = HitSpans(long, 100)
	if len(spans) != 100 || spans[0].To-spans[0].From != 10 || *spans[0].Ratio != 1 || *spans[99].Ratio != 0 {
		t.Errorf("merged: %d spans, first %+v", len(spans), spans[0])
	}
	if HitSpans([]stats.SecondPoint{pt(0, 0, 0)}, 10) != nil {
		t.Error("a series without a ratio gave spans")
	}
}

// A run's hit-time chart draws its summary's hit ratio per second (the
// receipts), so a cell past the cliff shows when eviction starts, even
// without metrics.jsonl; without either it says why it is missing.
func TestHitTimeDrawsTheSummarySeries(t *testing.T) {
	dir := t.TempDir()
	rd := writeRun(t, dir, fixture{name: "ws", n: 60, coldTTFT: 100, reusedEvery: 2, itlMs: 5})
	// The series as the collector writes it: all hits for 2 s, then none.
	var series []stats.SecondPoint
	for i := range 4 {
		p := stats.SecondPoint{Second: i, Requests: 10, PromptTokens: 20000}
		if i < 2 {
			p.CachedTokens = 19800
		}
		r := float64(p.CachedTokens) / float64(p.PromptTokens)
		p.HitRatio = &r
		series = append(series, p)
	}
	path := filepath.Join(rd, record.SummaryFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sb, _ := json.Marshal(series)
	b = bytes.Replace(b, []byte(`"load":`), append(append([]byte(`"series":`), sb...), []byte(`,"load":`)...), 1)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Open(dir, []string{filepath.Base(rd)})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.SVG(&buf, ChartHitTime); err != nil {
		t.Fatalf("hit-time with a series: %v", err)
	}
	doc := readSVG(t, buf.Bytes())
	if !doc.has(hitSeriesLabel) {
		t.Fatalf("hit-time lacks %q: %q", hitSeriesLabel, doc.texts)
	}
	// The step line: one path of 8 vertices (4 seconds, each level over
	// its second) in the receipts' colour; its top and bottom levels are
	// 99% and 0% of the panel's height.
	var line string
	for _, d := range doc.paths[hexOf(stateLooks[1])] {
		if strings.Count(d, "L") == 7 {
			line = d
		}
	}
	if line == "" {
		t.Fatalf("no 8-vertex step line in %s: %q", hexOf(stateLooks[1]), doc.paths[hexOf(stateLooks[1])])
	}
	ys := map[string]bool{}
	for _, m := range regexp.MustCompile(`[ML][-0-9.]+,([-0-9.]+)`).FindAllStringSubmatch(line, -1) {
		ys[m[1]] = true
	}
	if len(ys) != 2 {
		t.Errorf("the step line has %d levels, want 2 (hits, then none): %s", len(ys), line)
	}
	html := loadHTML(t, dir, filepath.Base(rd))
	if !strings.Contains(html, `data-chart="hit-time"`) || !strings.Contains(html, "the summary&#39;s series") {
		t.Error("the run page lacks the hit ratio per second")
	}
}
