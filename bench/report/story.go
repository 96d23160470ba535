package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/stats"
)

// What reuse changed, told the same way on every surface: the text
// summary's closing `KV cache` section, the finished run screen, the
// explorer's Summary tab and the HTML report's header all read
// HeadlineLine and HeadlineRows.

// Ms formats a duration in milliseconds for a sentence: "108 ms",
// "8.2 ms", "0.41 ms"; "n/a" when unknown.
func Ms(p *float64) string {
	if p == nil || math.IsNaN(*p) || math.IsInf(*p, 0) {
		return NA
	}
	v := *p
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64) + " ms"
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + " ms"
}

// Pct1 formats a ratio as a percentage with one decimal and its sign:
// "98.6%"; "n/a" when unknown.
func Pct1(p *float64) string {
	if p == nil || math.IsNaN(*p) || math.IsInf(*p, 0) {
		return NA
	}
	return strconv.FormatFloat(100**p, 'f', 1, 64) + "%"
}

// Times formats a ratio: "12.9x".
func Times(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64) + "x"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + "x"
}

// VerdictWords is a verdict as the headline says it.
func VerdictWords(v *string) string {
	if v == nil {
		return "no expectation"
	}
	switch *v {
	case record.VerdictMet:
		return "expectation met"
	case record.VerdictNotMet:
		return "expectation NOT MET"
	}
	return "expectation unknown"
}

// SpeedupWords is "12.9x faster (95% CI 11.7-13.8x)", "" when unknown.
func SpeedupWords(h *record.Headline) string {
	if h == nil || h.Speedup == nil {
		return ""
	}
	s := *h.Speedup
	word := "faster"
	if s < 1 {
		word = "slower"
		s = 1 / s
	}
	out := Times(s) + " " + word
	if ci := h.SpeedupCI95; ci != nil {
		lo, hi := ci[0], ci[1]
		if *h.Speedup < 1 && lo > 0 && hi > 0 {
			lo, hi = 1/hi, 1/lo
		}
		out += fmt.Sprintf(" (95%% CI %s-%s)", strings.TrimSuffix(Times(lo), "x"), Times(hi))
	}
	return out
}

// HeadlineLine is the headline in one line: "expectation met · hit 98.6%
// · TTFT cold 108 ms → reused 8.2 ms · 12.9x faster (95% CI 11.7-13.8x)";
// "" for a summary written before headlines.
func HeadlineLine(h *record.Headline) string {
	if h == nil {
		return ""
	}
	parts := []string{VerdictWords(h.Verdict), "hit " + Pct1(h.HitRatio)}
	switch {
	case h.ColdTTFTP50ms != nil && h.ReusedTTFTP50ms != nil:
		parts = append(parts, "TTFT cold "+Ms(h.ColdTTFTP50ms)+" → reused "+Ms(h.ReusedTTFTP50ms))
	case h.ReusedTTFTP50ms != nil:
		parts = append(parts, "TTFT reused "+Ms(h.ReusedTTFTP50ms)+" (no cold baseline)")
	case h.ColdTTFTP50ms != nil:
		parts = append(parts, "TTFT cold "+Ms(h.ColdTTFTP50ms)+" (nothing reused)")
	}
	if s := SpeedupWords(h); s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, " · ")
}

// baselineWords says where the cold side came from.
func baselineWords(b *string) string {
	if b != nil && *b == stats.BaselineWarmupCold {
		return " (warmup)"
	}
	return ""
}

// KVCache is the text summary's closing section: the headline's figures,
// then what limited the run, in words.
func KVCache(s *record.Summary) []Section { return textSections(kvCache(s)) }

func kvCache(s *record.Summary) []block {
	h := s.Headline
	if h == nil {
		return nil
	}
	verdict := NA
	if h.Verdict != nil {
		verdict = record.VerdictText(*h.Verdict)
	}
	cold := figItem("headline.cold_ttft_p50_ms", h.ColdTTFTP50ms)
	cold.suffix = baselineWords(h.Baseline)
	items := []item{
		textItem("Verdict", verdict),
		figItem("headline.hit_ratio", h.HitRatio),
		cold,
		figItem("headline.reused_ttft_p50_ms", h.ReusedTTFTP50ms),
	}
	sp, shown := NA, NA
	if h.Speedup != nil {
		sp = Times(*h.Speedup)
		if ci := h.SpeedupCI95; ci != nil {
			sp += fmt.Sprintf(" (95%% CI %.1f-%.1f)", ci[0], ci[1])
		}
		shown = SpeedupWords(h)
	}
	items = append(items, textItem("Speedup (cold / reused)", sp).shownAs(shown))
	for _, why := range h.LimitedBy {
		items = append(items, noteItem("Limited by: "+why))
	}
	return []block{{"KV cache", items}}
}

// distItems are a distribution's rows: "<Stat> <name> (ms)".
func distItems(name string, d stats.Dist, ps []float64, median bool) []item {
	items := []item{figOf(distFig("Mean", name), d.Mean)}
	if median {
		items = append(items, figOf(distFig("Median", name), d.Median))
	}
	items = append(items, figOf(distFig("Std", name), d.Stdev))
	for _, p := range ps {
		items = append(items, figOf(distFig("P"+strconv.FormatFloat(p, 'f', -1, 64), name), d.Get(p)))
	}
	return items
}

// pcts are the percentiles a Dist holds, in order.
func pcts(d stats.Dist) []float64 {
	out := make([]float64, len(d.Percentiles))
	for i, q := range d.Percentiles {
		out[i] = q.P
	}
	return out
}

// ByCacheState is the `By cache state` section: each state with requests,
// its TTFT, TPOT, ITL and latency at p50 and p99.
func ByCacheState(s *record.Summary) []Section { return textSections(byCacheState(s)) }

func byCacheState(s *record.Summary) []block {
	b := s.ByCacheState
	if b == nil {
		return nil
	}
	var items []item
	for _, st := range []struct {
		name string
		f    stats.StateFigures
	}{{"Cold", b.Cold}, {"Reused", b.Reused}, {"Unverified", b.Unverified}, {"Warmup", b.Warmup}} {
		items = append(items, figOf(Figure{st.name + " requests", "", KindCount}, fint(st.f.Requests)))
		if st.f.Requests == 0 {
			continue
		}
		for _, m := range []struct {
			name string
			d    stats.Dist
		}{{"TTFT", st.f.TTFTms}, {"TPOT", st.f.TPOTms}, {"ITL", st.f.ITLms}, {"latency", st.f.LatencyMs}} {
			items = append(items, figOf(Figure{"  " + m.name + " p50 / p99", "ms", KindReal}, m.d.Get(50), m.d.Get(99)))
		}
	}
	return []block{{"By cache state", items}}
}

// Serving is the `Serving` section: vLLM bench serve's figures, in its
// order and with its names.
func Serving(s *record.Summary) []Section { return textSections(serving(s)) }

func serving(s *record.Summary) []block {
	sv := s.Serving
	if sv == nil {
		return nil
	}
	items := []item{
		figItem("serving.request_throughput", sv.RequestThroughput),
		figItem("serving.total_token_throughput", sv.TotalTokenThroughput),
	}
	ps := pcts(sv.TTFTms)
	items = append(items, distItems("TTFT", sv.TTFTms, ps, true)...)
	items = append(items, distItems("TPOT", sv.TPOTms, ps, true)...)
	items = append(items, distItems("ITL", sv.ITLms, ps, true)...)
	items = append(items, distItems("E2EL", sv.E2ELms, ps, true)...)
	if sv.TTFOms.Mean != nil {
		items = append(items, distItems("TTFO", sv.TTFOms, ps, true)...)
	}
	if s.Errors != nil {
		for _, k := range sortedKeys(*s.Errors) {
			items = append(items, figOf(Figure{"Errors: " + k, "", KindCount}, fint((*s.Errors)[k])))
		}
	}
	return []block{{"Serving", items}}
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
