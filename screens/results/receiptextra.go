package results

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/screens/common"
)

// receiptContext is what the run knows of a request beyond its line:
// the engine block its trace expectation is judged with, and its
// rag-qa-quality sample.
type receiptContext struct {
	block      int
	rag        bool // the run is a rag-qa-quality run
	sample     *record.RAGSample
	qualityErr error
}

func (t *requestTable) receiptContext(r *sender.Result) receiptContext {
	return receiptContext{block: t.block, rag: t.quality != nil || t.qualityErr != nil, sample: t.sample(r), qualityErr: t.qualityErr}
}

// setContext gives the receipt what the run knows of its request.
func (d *Receipt) setContext(c receiptContext) {
	d.ctx = c
	d.vp.SetContent(d.content())
}

// row is one label/value line of a receipt section; long values wrap
// under themselves.
func (d *Receipt) rows(w int, kvs [][2]string, style func(label string) func(...string) string) []string {
	labelW := 0
	for _, kv := range kvs {
		labelW = max(labelW, ansi.StringWidth(kv[0]))
	}
	valueW := max(w-labelW-4, 16)
	var out []string
	for _, kv := range kvs {
		render := style(kv[0])
		lines := strings.Split(ansi.Hardwrap(ansi.Wordwrap(kv[1], valueW, " ,"), valueW, true), "\n")
		for i, l := range lines {
			label := fmt.Sprintf("  %-*s  ", labelW, kv[0])
			if i > 0 {
				label = strings.Repeat(" ", labelW+4)
			}
			out = append(out, d.c.Styles.Muted.Render(label)+render(l))
		}
	}
	return out
}

func plain(s ...string) string { return strings.Join(s, " ") }

// traceSection sets a replayed request's cache hit against what its
// trace predicted, with the verdict the summary's below_expected counts.
func (d *Receipt) traceSection(r *sender.Result, w int) []string {
	tc := runs.TraceCacheOf(r, d.ctx.block)
	if tc == nil {
		return nil
	}
	s := d.c.Styles
	ref := "unbounded cache"
	lru := "n/a (no KV budget known)"
	if tc.ExpectedLRU != nil {
		ref = "LRU of the KV budget"
		lru = fmt.Sprint(*tc.ExpectedLRU)
	}
	verdict, vstyle := "", s.OK.Render
	switch {
	case tc.Deviation == nil:
		verdict, vstyle = "not judged: the engine reported no usable cached_tokens ("+r.CacheState+")", s.Muted.Render
	case tc.Below:
		verdict, vstyle = fmt.Sprintf("BELOW EXPECTED: %d tokens short, more than one engine block (%d tokens)", -*tc.Deviation, tc.Block), s.Warn.Render
	case *tc.Deviation < 0:
		verdict = fmt.Sprintf("as expected (within one engine block of %d tokens)", tc.Block)
	case *tc.Deviation > 0:
		verdict, vstyle = fmt.Sprintf("above expected by %d tokens", *tc.Deviation), s.Muted.Render
	default:
		verdict = "as expected"
	}
	dev := "n/a"
	if tc.Deviation != nil {
		dev = fmt.Sprintf("%+d tokens against the %s", *tc.Deviation, ref)
	}
	kvs := [][2]string{
		{"cached (observed)", fmtOptInt(tc.Observed)},
		{"expected", fmt.Sprintf("%d (unbounded cache)", tc.Expected)},
		{"expected, LRU", lru},
		{"deviation", dev},
		{"verdict", verdict},
	}
	out := []string{s.PanelTitle.Render("Cache against the trace") + s.Muted.Render("  expected_cached_tokens, expected_cached_tokens_lru")}
	return append(out, d.rows(w, kvs, func(label string) func(...string) string {
		switch {
		case label == "verdict":
			return vstyle
		case tc.Below && (label == "cached (observed)" || label == "deviation"):
			return s.Warn.Render
		}
		return plain
	})...)
}

// qualitySection is a rag-qa-quality sample's score, its extracted
// answer and the gold answers it was scored against.
func (d *Receipt) qualitySection(r *sender.Result, w int) []string {
	s := d.c.Styles
	title := s.PanelTitle.Render("Answer quality") + s.Muted.Render("  "+record.RAGQualityFile)
	ps := d.ctx.sample
	switch {
	case !d.ctx.rag || r.Phase != sender.PhaseMeasured && ps == nil:
		return nil
	case d.ctx.qualityErr != nil:
		return []string{title, "  " + s.StatusError.Render(common.ErrorText(d.ctx.qualityErr))}
	case ps == nil:
		return []string{title, s.Muted.Render("  no sample of this request in the file")}
	}
	f1 := "n/a (no final answer parsed)"
	if ps.F1 != nil {
		f1 = fmt.Sprintf("%.3f", *ps.F1)
	}
	answer := "(none: no <final_answer> region)"
	if ps.Answer != nil {
		answer = *ps.Answer
	}
	gold := "(not recorded)"
	if ps.GoldAnswers != nil {
		gold = strings.Join(ps.GoldAnswers, " | ")
	}
	kvs := [][2]string{{"sample", ps.SampleID}, {"F1", f1}, {"answer", answer}, {"gold answers", gold}}
	return append([]string{title}, d.rows(w, kvs, func(label string) func(...string) string {
		if label == "F1" && ps.F1 == nil {
			return s.Warn.Render
		}
		return plain
	})...)
}
