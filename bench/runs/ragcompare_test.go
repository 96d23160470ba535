package runs_test

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/config"
)

// ragPair writes two rag-qa-quality runs with the given per-sample files
// (nil: no file) and compares B against A as the command does.
func ragPair(t *testing.T, a, b []runstest.RAGSample, fpA, fpB string) *runs.Comparison {
	t.Helper()
	dir := t.TempDir()
	da := runstest.Write(t, dir, runstest.Spec{Name: "a", Workload: config.RAGQAQuality, Started: t0, Requests: len(a), Summary: true})
	db := runstest.Write(t, dir, runstest.Spec{Name: "b", Workload: config.RAGQAQuality, Started: t0.Add(time.Minute), Requests: len(b), Summary: true})
	if a != nil {
		runstest.WriteRAGQuality(t, da, fpA, a)
	}
	if b != nil {
		runstest.WriteRAGQuality(t, db, fpB, b)
	}
	c, err := runs.CompareNamed(dir, da, db)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var (
	ragA = []runstest.RAGSample{
		{ID: "s1", F1: runstest.F1(1), Answer: "Paris", Gold: []string{"Paris"}, TTFTms: 100},
		{ID: "s2", F1: runstest.F1(0.5), Answer: "Berlin Germany", Gold: []string{"Berlin"}, TTFTms: 120},
		{ID: "s3", TTFTms: 90, Gold: []string{"Rome"}},
		{ID: "s4", F1: runstest.F1(0), Answer: "x", Gold: []string{"y"}, TTFTms: 80},
	}
	// B asks s2 before s1 (pairing is by id, not position), drops s4 and
	// adds s5.
	ragB = []runstest.RAGSample{
		{ID: "s2", F1: runstest.F1(1), Answer: "Berlin", Gold: []string{"Berlin"}, TTFTms: 60},
		{ID: "s1", F1: runstest.F1(1), Answer: "Paris", Gold: []string{"Paris"}, TTFTms: 50},
		{ID: "s3", F1: runstest.F1(0.4), Answer: "Rome Italy x", Gold: []string{"Rome"}, TTFTms: 70},
		{ID: "s5", F1: runstest.F1(1), Answer: "z", Gold: []string{"z"}, TTFTms: 10},
	}
)

func near(a *float64, b float64) bool { return a != nil && math.Abs(*a-b) < 1e-9 }

func TestCompareRAGQualityPairsByID(t *testing.T) {
	c := ragPair(t, ragA, ragB, "00112233aabbccdd", "00112233aabbccdd")
	q := c.Quality
	if q == nil || q.Note != "" {
		t.Fatalf("quality comparison %+v", q)
	}
	if q.Paired != 3 || q.OnlyA != 1 || q.OnlyB != 1 || q.BothScored != 2 {
		t.Errorf("paired %d only A %d only B %d both scored %d; want 3 1 1 2", q.Paired, q.OnlyA, q.OnlyB, q.BothScored)
	}
	// s1: 1 -> 1, s2: 0.5 -> 1; s3 parsed in B only also changed.
	if !near(q.MeanF1Delta, 0.25) || q.Changed != 2 {
		t.Errorf("mean F1 delta %v, changed %d; want +0.25 and 2", q.MeanF1Delta, q.Changed)
	}
	if !near(q.MeanTTFTDeltaMs, (-50.0-60-20)/3) {
		t.Errorf("mean TTFT delta %v ms", q.MeanTTFTDeltaMs)
	}
	var ids []string
	for _, p := range q.Pairs {
		ids = append(ids, p.SampleID)
	}
	if strings.Join(ids, ",") != "s1,s2,s3,s4,s5" {
		t.Errorf("pair order %v: A's order, then B's own", ids)
	}
	if q.FingerprintsDiffer {
		t.Error("same fingerprints reported as different")
	}

	var buf bytes.Buffer
	if err := c.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		`\nAnswer quality \(samples paired by id\)\n`,
		`\n  Mean F1 delta \(B - A\) +\+0\.250 over 2 samples scored in both\n`,
		`\n  Samples whose F1 changed +2 of 3 paired\n`,
		`\n  Paired by id +3 \(only in A 1, only in B 1\)\n`,
		`\n  Mean TTFT delta \(B - A\) +-43\.3 ms\n`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("text lacks %s:\n%s", want, out)
		}
	}
	// Each pair's row: F1 and TTFT of both sides with their changes.
	rows := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			rows[f[0]] = strings.Join(f, " ")
		}
	}
	for id, want := range map[string]string{
		"s1": "s1 1.000 1.000 0.000 100.0 50.0 -50.0",
		"s2": "s2 0.500 1.000 +0.500 120.0 60.0 -60.0",
		"s3": "s3 n/a 0.400 parsed B only 90.0 70.0 -20.0",
		"s4": "s4 0.000 - - 80.0 - -",
		"s5": "s5 - 1.000 - - 10.0 -",
	} {
		if rows[id] != want {
			t.Errorf("row %s: %q, want %q", id, rows[id], want)
		}
	}
	if !strings.Contains(out, "Config differences") || strings.Index(out, "Answer quality") > strings.Index(out, "Config differences") {
		t.Errorf("answer quality belongs before the config differences:\n%s", out)
	}

	// Swapped, every change turns sign.
	s := c.Swapped()
	if s.A.Run.ID != c.B.Run.ID || !near(s.Quality.MeanF1Delta, -0.25) || s.Quality.OnlyA != 1 || s.Quality.Pairs[0].SampleID != "s2" {
		t.Errorf("swapped: A %s delta %v pairs %+v", s.A.Run.ID, s.Quality.MeanF1Delta, s.Quality.Pairs)
	}
}

func TestCompareRAGQualityFingerprints(t *testing.T) {
	c := ragPair(t, ragA, ragB, "1111111111111111", "2222222222222222")
	if !c.Quality.FingerprintsDiffer {
		t.Fatal("different fingerprints not noticed")
	}
	var buf bytes.Buffer
	c.WriteText(&buf)
	if !strings.Contains(buf.String(), "differ (fingerprints 1111111111111111, 2222222222222222)") {
		t.Errorf("no word of the differing settings:\n%s", buf.String())
	}
}

// Runs that cannot be paired say why, in one plain sentence.
func TestCompareRAGQualityUnpairable(t *testing.T) {
	t.Run("missing file", func(t *testing.T) {
		c := ragPair(t, ragA, nil, "", "")
		if c.Quality == nil || !strings.Contains(c.Quality.Note, "B: ") || !strings.Contains(c.Quality.Note, "has no rag_qa_quality.json") {
			t.Fatalf("note %+v", c.Quality)
		}
		var buf bytes.Buffer
		c.WriteText(&buf)
		if !strings.Contains(buf.String(), "Answer quality (samples paired by id)\n  No per-sample scores to pair (B: ") {
			t.Errorf("text:\n%s", buf.String())
		}
	})
	t.Run("other workload", func(t *testing.T) {
		dir := t.TempDir()
		da := runstest.Write(t, dir, runstest.Spec{Name: "a", Workload: config.RAGQAQuality, Started: t0, Requests: 4, Summary: true})
		runstest.WriteRAGQuality(t, da, "", ragA)
		db := runstest.Write(t, dir, runstest.Spec{Name: "b", Started: t0.Add(time.Minute), Requests: 4, Summary: true})
		c, err := runs.CompareNamed(dir, da, db)
		if err != nil {
			t.Fatal(err)
		}
		if c.Quality == nil || c.Quality.Note != "A is a rag-qa-quality run and B a long-doc-qa run: only two rag-qa-quality runs have per-sample scores to pair." {
			t.Fatalf("quality %+v", c.Quality)
		}
	})
	t.Run("neither", func(t *testing.T) {
		dir := t.TempDir()
		da := runstest.Write(t, dir, runstest.Spec{Name: "a", Started: t0, Requests: 4, Summary: true})
		db := runstest.Write(t, dir, runstest.Spec{Name: "b", Started: t0.Add(time.Minute), Requests: 4, Summary: true})
		c, err := runs.CompareNamed(dir, da, db)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		c.WriteText(&buf)
		if c.Quality != nil || strings.Contains(buf.String(), "Answer quality") {
			t.Errorf("answer quality for runs of another workload:\n%s", buf.String())
		}
	})
}

func TestReadRAGQuality(t *testing.T) {
	dir := t.TempDir()
	run := runstest.Write(t, dir, runstest.Spec{Name: "a", Workload: config.RAGQAQuality, Started: t0, Requests: 2, Summary: true})
	d, err := runs.Load(run)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runs.ReadRAGQuality(d); !errors.Is(err, runs.ErrNoRAGQuality) {
		t.Fatalf("no file: %v", err)
	}
	// A file written before request_id and gold_answers: paired by position.
	old := `{"run_fingerprint":"abc","summary":{"num_samples":2,"num_parsed":1,"parse_rate":0.5,"f1_mean":1},
"per_sample":[{"sample_id":"x","f1":1,"parsed":true,"answer":"Paris","ttft":0.1},{"sample_id":"y","f1":null,"parsed":false,"answer":null,"ttft":0.2}]}`
	if err := os.WriteFile(filepath.Join(run, record.RAGQualityFile), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	q, err := runs.ReadRAGQuality(d)
	if err != nil {
		t.Fatal(err)
	}
	m := q.ByRequest()
	if m["sample0"] == nil || m["sample0"].SampleID != "x" || m["sample1"].SampleID != "y" || *q.Summary.F1Mean != 1 {
		t.Errorf("by request %v, summary %+v", m, q.Summary)
	}
	// A recorded request id wins over the position.
	runstest.WriteRAGQuality(t, run, "", ragA[:2])
	if q, err = runs.ReadRAGQuality(d); err != nil || q.ByRequest()["req-1"].SampleID != "s2" || q.ByRequest()["sample0"] != nil {
		t.Errorf("by recorded request id: %v %v", err, q)
	}
	// Not JSON: an error naming the file.
	os.WriteFile(filepath.Join(run, record.RAGQualityFile), []byte("{\"per_sample\": 7}"), 0o644)
	if _, err := runs.ReadRAGQuality(d); err == nil || !strings.Contains(err.Error(), record.RAGQualityFile) || !strings.Contains(err.Error(), "per_sample") {
		t.Errorf("bad file: %v", err)
	}
}
