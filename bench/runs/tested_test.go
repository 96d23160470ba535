package runs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
)

var tT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)

func subject(t *testing.T, dir string, s runstest.Spec) *runs.Subject {
	t.Helper()
	d := runstest.Write(t, dir, s)
	sub, err := runs.OpenSubject(context.Background(), dir, d)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

func row(t *testing.T, tt *runs.Tested, key string) *runs.Row {
	t.Helper()
	for i := range tt.Rows {
		if tt.Rows[i].Key() == key {
			return &tt.Rows[i]
		}
	}
	t.Fatalf("no row %s", key)
	return nil
}

func ciContains(r *runs.Row, v float64) bool {
	return r.CI95 != nil && r.CI95[0] <= v && v <= r.CI95[1]
}

// Two runs of one config differ only by jitter: no latency row is
// better or worse, and a +5% gate passes.
func TestTestedSameConfig(t *testing.T) {
	dir := t.TempDir()
	a := subject(t, dir, runstest.Spec{Name: "a", Started: tT0, Requests: 200, JitterMs: 4, JitterSeed: 1, Summary: true})
	b := subject(t, dir, runstest.Spec{Name: "b", Started: tT0.Add(time.Hour), Requests: 200, JitterMs: 4, JitterSeed: 2, Summary: true})
	tt := runs.CompareTested(a, b, runs.DefaultAlpha)
	if tt.ByRuns || tt.CacheMoved {
		t.Fatalf("by runs %v, cache moved %v", tt.ByRuns, tt.CacheMoved)
	}
	for _, key := range []string{"ttft_p50", "ttft_p90", "e2el_p50", "ttft_p50:cold"} {
		r := row(t, tt, key)
		if r.Word != runs.WordSame || !ciContains(r, 0) || r.P == nil || *r.P < 0.05 {
			t.Errorf("%s: %s %s p=%v", key, r.Word, runs.FormatCI(r), runs.FormatP(r.P))
		}
	}
	if r := row(t, tt, "ttft_p50"); r.NA != 200 || r.NB != 200 || r.DeltaUnit != "%" {
		t.Errorf("ttft_p50 samples %d/%d unit %s", r.NA, r.NB, r.DeltaUnit)
	}
	// No reused request: no reused row.
	for _, r := range tt.Rows {
		if r.State == "reused" {
			t.Errorf("a reused row without reused requests: %s", r.Key())
		}
	}
	gates, err := runs.ParseGates([]string{"ttft_p50:+5%", "error_rate:1%,hit_ratio:-2pp"})
	if err != nil {
		t.Fatal(err)
	}
	if !tt.Judge(gates) || len(tt.Gates) != 3 {
		t.Errorf("gates: %+v", tt.Gates)
	}
}

// 100 ms against 110 ms: worse by about 10%, the interval holds +10%,
// and the +5% gate fails (a +15% one holds).
func TestTestedSlower(t *testing.T) {
	dir := t.TempDir()
	a := subject(t, dir, runstest.Spec{Name: "a", Started: tT0, Requests: 100, BaseTTFTms: 100, JitterMs: 2, JitterSeed: 1, Summary: true})
	b := subject(t, dir, runstest.Spec{Name: "b", Started: tT0.Add(time.Hour), Requests: 100, BaseTTFTms: 110, JitterMs: 2, JitterSeed: 2, Summary: true})
	tt := runs.CompareTested(a, b, runs.DefaultAlpha)
	r := row(t, tt, "ttft_p50")
	if r.Word != runs.WordWorse || math.Abs(*r.Delta-10) > 1.5 || !ciContains(r, 10) || *r.P > 1e-6 {
		t.Fatalf("ttft_p50: %s %s %s p=%s", r.Word, runs.FormatRowDelta(r), runs.FormatCI(r), runs.FormatP(r.P))
	}
	gates, _ := runs.ParseGates([]string{"ttft_p50:+5%,ttft_p50:+15%,ttft_p50:cold:+5%,ttft_p50:200ms"})
	if tt.Judge(gates) {
		t.Fatal("every gate passed")
	}
	want := []bool{false, true, false, true}
	for i, g := range tt.Gates {
		if g.Passed != want[i] {
			t.Errorf("%s: passed %v (%s)", g.Gate, g.Passed, g.Reason)
		}
	}
	if !strings.Contains(tt.Gates[0].Reason, "beyond +5%") {
		t.Errorf("reason: %s", tt.Gates[0].Reason)
	}
	// Swapped, B is better and no gate fails.
	back := runs.CompareTested(b, a, runs.DefaultAlpha)
	if r := row(t, back, "ttft_p50"); r.Word != runs.WordBetter {
		t.Errorf("swapped: %s", r.Word)
	}
	if !back.Judge(gates[:1]) {
		t.Errorf("a faster B failed: %+v", back.Gates)
	}
}

// Only the cache changed: the hit ratio row leads with a note, the rows
// per cache state follow and are ~, while the overall TTFT moved.
func TestTestedCacheMoved(t *testing.T) {
	dir := t.TempDir()
	a := subject(t, dir, runstest.Spec{Name: "a", Started: tT0, Requests: 200, ReusedEvery: 2, JitterMs: 3, JitterSeed: 1, Summary: true})
	b := subject(t, dir, runstest.Spec{Name: "b", Started: tT0.Add(time.Hour), Requests: 200, ReusedEvery: 5, JitterMs: 3, JitterSeed: 2, Summary: true})
	tt := runs.CompareTested(a, b, runs.DefaultAlpha)
	if !tt.CacheMoved || tt.Rows[0].Metric != "hit_ratio" || tt.Rows[0].Word != runs.WordBetter {
		t.Fatalf("cache moved %v, first row %s %s", tt.CacheMoved, tt.Rows[0].Key(), tt.Rows[0].Word)
	}
	// A: half the requests reused 800 of 1000 tokens (40%); B: 4 in 5 (64%).
	h := tt.Rows[0]
	if math.Abs(*h.A-0.4) > 1e-9 || math.Abs(*h.B-0.64) > 1e-9 || math.Abs(*h.Delta-24) > 1e-9 || !ciContains(&h, 24) || h.DeltaUnit != "pp" {
		t.Errorf("hit ratio %v -> %v, %s %s", *h.A, *h.B, runs.FormatRowDelta(&h), runs.FormatCI(&h))
	}
	if !strings.Contains(tt.CacheNote, "24.0 pp more") {
		t.Errorf("note: %s", tt.CacheNote)
	}
	if tt.Rows[1].State == "" {
		t.Errorf("second row %s is not per cache state", tt.Rows[1].Key())
	}
	for _, key := range []string{"ttft_p50:cold", "ttft_p50:reused"} {
		if r := row(t, tt, key); r.Word != runs.WordSame {
			t.Errorf("%s: %s %s", key, r.Word, runs.FormatCI(r))
		}
	}
	if r := row(t, tt, "ttft_p50"); r.Word != runs.WordBetter || r.Note != "mixes cache states" {
		t.Errorf("overall ttft_p50: %s (%s)", r.Word, r.Note)
	}
	var out bytes.Buffer
	if err := runs.WriteCompareText(&out, nil, tt); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if i, j := strings.Index(text, "The cache served"), strings.Index(text, "ttft_p50"); i < 0 || j < i {
		t.Errorf("the cache note does not come first:\n%s", text)
	}
}

func seriesSubject(id string, ttft []float64) *runs.Subject {
	f := &record.SeriesRecord{SchemaVersion: 1, Series: record.SeriesInfo{ID: id, Repeat: len(ttft)}}
	for i, v := range ttft {
		v := v
		hit := 0.5
		f.Runs = append(f.Runs, record.SeriesRun{RunID: record.SeriesRunID(i), TotalRequests: 10,
			Values: []record.Value{{Key: "ttft_p50", Value: &v}, {Key: "hit_ratio", Value: &hit}}})
	}
	return &runs.Subject{ID: id, Series: f}
}

// Series against series: the runs' values are the samples. Five a side
// that do not overlap are a significant change (exact p = 2/252); three
// a side are too few for a test.
func TestTestedSeries(t *testing.T) {
	a := seriesSubject("a", []float64{100, 101, 102, 103, 104})
	b := seriesSubject("b", []float64{110, 111, 112, 113, 114})
	tt := runs.CompareTested(a, b, runs.DefaultAlpha)
	r := row(t, tt, "ttft_p50")
	if !tt.ByRuns || r.Word != runs.WordWorse || *r.A != 102 || *r.B != 112 || math.Abs(*r.P-2.0/252) > 1e-12 || r.NA != 5 {
		t.Fatalf("%+v p=%v", r, *r.P)
	}
	if !ciContains(r, 100*(112.0/102-1)) {
		t.Errorf("interval %s", runs.FormatCI(r))
	}
	if h := row(t, tt, "hit_ratio"); h.Word != runs.WordSame || *h.Delta != 0 || *h.P != 1 {
		t.Errorf("equal hit ratios: %s %v p=%v", h.Word, *h.Delta, *h.P)
	}
	if r := row(t, tt, "error_rate"); r.Word != runs.WordNA {
		t.Errorf("error rate without values: %s", r.Word)
	}
	few := runs.CompareTested(seriesSubject("a", []float64{100, 101, 102}), seriesSubject("b", []float64{110, 111, 112}), 0.05)
	if r := row(t, few, "ttft_p50"); r.Word != runs.WordSame || r.P != nil || !strings.Contains(r.Note, "too few runs") {
		t.Errorf("three a side: %s p=%v %q", r.Word, r.P, r.Note)
	}
	g, _ := runs.ParseGates([]string{"ttft_p50:+5%"})
	if !few.Judge(g) || !strings.Contains(few.Gates[0].Reason, "not tested") {
		t.Errorf("a gate failed without a test: %+v", few.Gates)
	}
	if tt.Judge(g) {
		t.Errorf("a significant +9.8%% passed: %+v", tt.Gates)
	}
}

// A run against a series is compared run by run, the run a series of one.
func TestTestedRunAgainstSeries(t *testing.T) {
	dir := t.TempDir()
	a := subject(t, dir, runstest.Spec{Name: "a", Started: tT0, Requests: 20, Summary: true})
	b := seriesSubject("b", []float64{100, 101, 102, 103, 104})
	tt := runs.CompareTested(a, b, 0.05)
	r := row(t, tt, "ttft_p50")
	if !tt.ByRuns || r.NA != 1 || r.NB != 5 || r.Word != runs.WordSame || !strings.Contains(r.Note, "too few runs") {
		t.Errorf("%+v", r)
	}
}

func TestParseGates(t *testing.T) {
	good := map[string]struct {
		kind runs.GateKind
		th   float64
	}{
		"ttft_p50:+5%":            {runs.Relative, 5},
		"ttft_p99:cold:+10%":      {runs.Relative, 10},
		"output_throughput:-5%":   {runs.Relative, 5},
		"hit_ratio:-2pp":          {runs.PointDrop, 2},
		"error_rate:+0.5pp":       {runs.PointDrop, 0.5},
		"error_rate:1%":           {runs.Limit, 0.01},
		"hit_ratio:80%":           {runs.Limit, 0.8},
		"ttft_p50:500ms":          {runs.Limit, 500},
		"e2el_p50:reused:2s":      {runs.Limit, 2000},
		"request_throughput:12.5": {runs.Limit, 12.5},
	}
	for text, want := range good {
		gs, err := runs.ParseGates([]string{text})
		if err != nil || len(gs) != 1 || gs[0].Kind != want.kind || math.Abs(gs[0].Threshold-want.th) > 1e-12 {
			t.Errorf("%s: %+v %v", text, gs, err)
		}
	}
	for text, why := range map[string]string{
		"ttft_p50:-5%":           "worse when higher",
		"output_throughput:+5%":  "worse when lower",
		"hit_ratio:+2pp":         "worse when lower",
		"hit_ratio:-2%":          "percentage points",
		"ttft_p50:+2pp":          "percent, not points",
		"ttft_p50:5%":            "duration",
		"ttft_p50:500":           "duration",
		"ttft_p50:+5":            "ends in %",
		"ttft_p42:+5%":           "unknown metric",
		"hit_ratio:cold:-2pp":    "no cache states",
		"ttft_p50:warm:+5%":      "unknown cache state",
		"ttft_p50":               "metric[:state]:threshold",
		"ttft_p50:+abc%":         "not a number",
		"error_rate:1":           "share",
		"ttft_p50:cold:x:+5%":    "metric[:state]:threshold",
		"output_throughput:fast": "number",
	} {
		_, err := runs.ParseGates([]string{"error_rate:1%," + text})
		if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), `"`+text+`"`) {
			t.Errorf("%s: %v (want %q)", text, err, why)
		}
	}
}

// The JUnit output is XML with one testcase per gate and a failure
// element for each failed one.
func TestJUnit(t *testing.T) {
	dir := t.TempDir()
	a := subject(t, dir, runstest.Spec{Name: "a", Started: tT0, Requests: 60, BaseTTFTms: 100, JitterMs: 2, JitterSeed: 1, Summary: true})
	b := subject(t, dir, runstest.Spec{Name: "b", Started: tT0.Add(time.Hour), Requests: 60, BaseTTFTms: 110, JitterMs: 2, JitterSeed: 2,
		FailEvery: 20, Summary: true})
	tt := runs.CompareTested(a, b, 0.05)
	gates, _ := runs.ParseGates([]string{"ttft_p50:+5%,error_rate:1%,hit_ratio:-2pp,ttft_p50:reused:+5%"})
	tt.Judge(gates)
	var buf bytes.Buffer
	if err := tt.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	var suite struct {
		XMLName  xml.Name `xml:"testsuite"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &suite); err != nil {
		t.Fatalf("not XML: %v\n%s", err, buf.String())
	}
	if suite.Tests != 4 || len(suite.Cases) != 4 || suite.Failures != 3 {
		t.Fatalf("tests %d cases %d failures %d\n%s", suite.Tests, len(suite.Cases), suite.Failures, buf.String())
	}
	failed := map[string]bool{}
	for _, c := range suite.Cases {
		if c.Failure != nil {
			failed[c.Name] = true
			if c.Failure.Message == "" || c.Failure.Text == "" {
				t.Errorf("%s: empty failure", c.Name)
			}
		}
	}
	// 3 of 60 failed (5% > 1%); no reused requests: the reused gate fails.
	if !failed["ttft_p50:+5%"] || !failed["error_rate:1%"] || failed["hit_ratio:-2pp"] || !failed["ttft_p50:reused:+5%"] {
		t.Errorf("failed: %v\n%s", failed, buf.String())
	}
	if !strings.Contains(buf.String(), "ttft_p50: A 1") {
		t.Errorf("failure text without figures:\n%s", buf.String())
	}
}

func TestTestedJSON(t *testing.T) {
	dir := t.TempDir()
	a := subject(t, dir, runstest.Spec{Name: "a", Started: tT0, Requests: 30, ReusedEvery: 2, Summary: true})
	b := subject(t, dir, runstest.Spec{Name: "b", Started: tT0.Add(time.Hour), Requests: 30, ReusedEvery: 2, Summary: true})
	tt := runs.CompareTested(a, b, 0.05)
	var buf bytes.Buffer
	if err := tt.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var j struct {
		A, B  string
		Rows  []map[string]json.RawMessage
		Gates []any
	}
	if err := json.Unmarshal(buf.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if j.A != a.ID || j.B != b.ID || j.Gates == nil || len(j.Rows) != len(tt.Rows) {
		t.Fatalf("%s", buf.String())
	}
	for _, k := range []string{"metric", "state", "a", "b", "delta", "unit", "ci95", "p", "word"} {
		if _, ok := j.Rows[0][k]; !ok {
			t.Errorf("row without %s: %s", k, buf.String()[:400])
		}
	}
	states := map[string]bool{}
	for _, r := range j.Rows {
		states[string(r["state"])] = true
	}
	if !states["null"] || !states[`"cold"`] || !states[`"reused"`] {
		t.Errorf("states %v", states)
	}
}
