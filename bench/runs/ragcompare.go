package runs

import (
	"fmt"
	"math"
	"strings"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/config"
)

// QualityPair is one sample id of either run: the same question asked in
// A and in B.
type QualityPair struct {
	SampleID string
	A, B     *record.RAGSample // nil when the sample is only in the other run
}

// Paired reports whether both runs asked the sample.
func (p QualityPair) Paired() bool { return p.A != nil && p.B != nil }

// F1Delta is B's F1 minus A's, nil unless both answers were scored.
func (p QualityPair) F1Delta() *float64 {
	if !p.Paired() || p.A.F1 == nil || p.B.F1 == nil {
		return nil
	}
	return f64(*p.B.F1 - *p.A.F1)
}

// F1Changed reports whether the pair's score moved: a different F1, or
// an answer parsed on one side only.
func (p QualityPair) F1Changed() bool {
	if !p.Paired() {
		return false
	}
	a, b := p.A.F1, p.B.F1
	switch {
	case a == nil && b == nil:
		return false
	case a == nil || b == nil:
		return true
	}
	return !sameF1(*a, *b)
}

// sameF1 is equality at the precision scores are shown with.
func sameF1(a, b float64) bool { return math.Abs(a-b) < 5e-4 }

// TTFTDeltaMs is B's TTFT minus A's in milliseconds, nil unless both
// requests had a first token.
func (p QualityPair) TTFTDeltaMs() *float64 {
	if !p.Paired() || p.A.TTFT == nil || p.B.TTFT == nil {
		return nil
	}
	return f64((*p.B.TTFT - *p.A.TTFT) * 1000)
}

// QualityComparison is the per-sample answer quality of two
// rag-qa-quality runs, samples paired by id (spec/workloads.md).
type QualityComparison struct {
	// Note says plainly why nothing is paired (the runs' workloads differ,
	// a file is missing or unreadable); empty when samples are paired.
	Note string
	A, B *RAGQuality
	// Pairs are A's samples in A's order, then those only B asked.
	Pairs []QualityPair
	// Paired counts samples both runs asked; OnlyA and OnlyB the others.
	Paired, OnlyA, OnlyB int
	// BothScored counts paired samples with an F1 on both sides.
	BothScored int
	// MeanF1Delta is the mean of B - A over BothScored samples (nil when
	// none); Changed counts paired samples whose score moved.
	MeanF1Delta *float64
	Changed     int
	// MeanTTFTDeltaMs is the mean of B - A over paired samples with a
	// TTFT on both sides.
	MeanTTFTDeltaMs *float64
	// FingerprintsDiffer: the runs' settings differ (dataset, sample
	// count, model, seed, ...): paired by id anyway.
	FingerprintsDiffer bool

	reads [2]ragRead
	dets  [2]*Detail
}

type ragRead struct {
	q   *RAGQuality
	err error
}

func readRAG(d *Detail) ragRead {
	if !IsRAGQuality(d) {
		return ragRead{}
	}
	q, err := ReadRAGQuality(d)
	return ragRead{q, err}
}

// compareQuality pairs the samples of two runs' files; nil when neither
// run is a rag-qa-quality run.
func compareQuality(a, b *Detail, ra, rb ragRead) *QualityComparison {
	ia, ib := IsRAGQuality(a), IsRAGQuality(b)
	if !ia && !ib {
		return nil
	}
	c := &QualityComparison{reads: [2]ragRead{ra, rb}, dets: [2]*Detail{a, b}}
	if !ia || !ib {
		c.Note = fmt.Sprintf("A is a %s run and B a %s run: only two %s runs have per-sample scores to pair.",
			orDashWorkload(a.Run.Workload), orDashWorkload(b.Run.Workload), config.RAGQAQuality)
		return c
	}
	var missing []string
	for i, r := range []ragRead{ra, rb} {
		side := string(rune('A' + i))
		switch {
		case r.err != nil:
			missing = append(missing, side+": "+r.err.Error())
		case r.q == nil:
			missing = append(missing, side+": not read")
		}
	}
	if len(missing) > 0 {
		c.Note = "No per-sample scores to pair (" + strings.Join(missing, "; ") + ")."
		return c
	}
	c.A, c.B = ra.q, rb.q
	c.FingerprintsDiffer = c.A.Fingerprint != "" && c.B.Fingerprint != "" && c.A.Fingerprint != c.B.Fingerprint
	keyed := func(q *RAGQuality) ([]string, map[string]*record.RAGSample) {
		seen := map[string]int{}
		keys := make([]string, len(q.Samples))
		m := make(map[string]*record.RAGSample, len(q.Samples))
		for i := range q.Samples {
			id := q.Samples[i].SampleID
			// A repeated id pairs with the same occurrence on the other side.
			if n := seen[id]; n > 0 {
				id = fmt.Sprintf("%s#%d", id, n+1)
			}
			seen[q.Samples[i].SampleID]++
			keys[i], m[id] = id, &q.Samples[i]
		}
		return keys, m
	}
	ka, ma := keyed(c.A)
	kb, mb := keyed(c.B)
	var f1Sum, ttftSum float64
	ttftN := 0
	for _, k := range ka {
		p := QualityPair{SampleID: k, A: ma[k], B: mb[k]}
		c.Pairs = append(c.Pairs, p)
		if !p.Paired() {
			c.OnlyA++
			continue
		}
		c.Paired++
		if d := p.F1Delta(); d != nil {
			c.BothScored++
			f1Sum += *d
		}
		if p.F1Changed() {
			c.Changed++
		}
		if d := p.TTFTDeltaMs(); d != nil {
			ttftN++
			ttftSum += *d
		}
	}
	for _, k := range kb {
		if _, ok := ma[k]; !ok {
			c.Pairs = append(c.Pairs, QualityPair{SampleID: k, B: mb[k]})
			c.OnlyB++
		}
	}
	if c.BothScored > 0 {
		c.MeanF1Delta = f64(f1Sum / float64(c.BothScored))
	}
	if ttftN > 0 {
		c.MeanTTFTDeltaMs = f64(ttftSum / float64(ttftN))
	}
	return c
}

// swapped is the same comparison with A and B exchanged.
func (c *QualityComparison) swapped() *QualityComparison {
	if c == nil {
		return nil
	}
	return compareQuality(c.dets[1], c.dets[0], c.reads[1], c.reads[0])
}

// FormatF1 renders a score with three decimals, "n/a" when no answer was
// parsed.
func FormatF1(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", *v)
}

// FormatSignedF1 renders an F1 change with its sign ("0.000" unsigned
// when nothing changed), "n/a" when unknown.
func FormatSignedF1(v *float64) string {
	switch {
	case v == nil:
		return "n/a"
	case sameF1(*v, 0):
		return "0.000"
	}
	return fmt.Sprintf("%+.3f", *v)
}

// FormatTTFTms renders a TTFT recorded in seconds as milliseconds.
func FormatTTFTms(s *float64) string {
	if s == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", *s*1000)
}

// FormatSignedMs renders a millisecond change with its sign.
func FormatSignedMs(v *float64) string {
	if v == nil {
		return "n/a"
	}
	if math.Abs(*v) < 0.05 {
		return "0.0"
	}
	return fmt.Sprintf("%+.1f", *v)
}

// Headline lists the quality comparison's figures as label/value pairs,
// in the order both front-ends show them.
func (c *QualityComparison) Headline() [][2]string {
	if c.Note != "" {
		return nil
	}
	mean := func(q *RAGQuality) string { return FormatF1(q.Summary.F1Mean) }
	rate := func(q *RAGQuality) string {
		if q.Summary.ParseRate == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.1f%%", *q.Summary.ParseRate*100)
	}
	rows := [][2]string{
		{"Samples (A / B)", fmt.Sprintf("%d / %d", len(c.A.Samples), len(c.B.Samples))},
		{"Paired by id", fmt.Sprintf("%d (only in A %d, only in B %d)", c.Paired, c.OnlyA, c.OnlyB)},
		{"Parse rate (A / B)", rate(c.A) + " / " + rate(c.B)},
		{"Mean F1, parsed (A / B)", mean(c.A) + " / " + mean(c.B)},
		{"Mean F1 delta (B - A)", fmt.Sprintf("%s over %d samples scored in both", FormatSignedF1(c.MeanF1Delta), c.BothScored)},
		{"Samples whose F1 changed", fmt.Sprintf("%d of %d paired", c.Changed, c.Paired)},
		{"Mean TTFT delta (B - A)", FormatSignedMs(c.MeanTTFTDeltaMs) + " ms"},
	}
	if c.FingerprintsDiffer {
		rows = append(rows, [2]string{"Settings", fmt.Sprintf("differ (fingerprints %s, %s): samples paired by id anyway", c.A.Fingerprint, c.B.Fingerprint)})
	}
	return rows
}

// PairRow is one pair as text: sample id, F1 A, F1 B, F1 delta, TTFT A,
// TTFT B (ms), TTFT delta.
func (p QualityPair) Row() []string {
	f1 := func(s *record.RAGSample) string {
		if s == nil {
			return "-"
		}
		return FormatF1(s.F1)
	}
	ttft := func(s *record.RAGSample) string {
		if s == nil {
			return "-"
		}
		return FormatTTFTms(s.TTFT)
	}
	d := FormatSignedF1(p.F1Delta())
	if p.Paired() && p.F1Delta() == nil && p.F1Changed() {
		d = "parsed " + map[bool]string{true: "A", false: "B"}[p.A.F1 != nil] + " only"
	}
	td := FormatSignedMs(p.TTFTDeltaMs())
	if !p.Paired() {
		d, td = "-", "-"
	}
	return []string{p.SampleID, f1(p.A), f1(p.B), d, ttft(p.A), ttft(p.B), td}
}

// QualityHeader names PairRow's columns.
var QualityHeader = []string{"sample", "F1 A", "F1 B", "F1 delta", "TTFT A (ms)", "TTFT B (ms)", "TTFT delta"}

func (c *QualityComparison) writeText(b *strings.Builder) {
	b.WriteString("\nAnswer quality (samples paired by id)\n")
	if c.Note != "" {
		b.WriteString("  " + c.Note + "\n")
		return
	}
	rows := [][]string{}
	for _, r := range c.Headline() {
		rows = append(rows, []string{r[0], r[1]})
	}
	writeTable(b, rows, []bool{false, false})
	if len(c.Pairs) == 0 {
		return
	}
	b.WriteByte('\n')
	rows = [][]string{QualityHeader}
	for _, p := range c.Pairs {
		rows = append(rows, p.Row())
	}
	writeTable(b, rows, []bool{false, true, true, true, true, true, true})
}
