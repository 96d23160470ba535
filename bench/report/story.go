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
func KVCache(s *record.Summary) []Section {
	h := s.Headline
	if h == nil {
		return nil
	}
	verdict := NA
	if h.Verdict != nil {
		verdict = record.VerdictText(*h.Verdict)
	}
	rows := []Row{
		{"Verdict", verdict},
		{"Hit ratio (%)", Percent(h.HitRatio)},
		{"Cold TTFT p50 (ms)" + baselineWords(h.Baseline), OptFloat(h.ColdTTFTP50ms)},
		{"Reused TTFT p50 (ms)", OptFloat(h.ReusedTTFTP50ms)},
	}
	sp := NA
	if h.Speedup != nil {
		sp = Times(*h.Speedup)
		if ci := h.SpeedupCI95; ci != nil {
			sp += fmt.Sprintf(" (95%% CI %.1f-%.1f)", ci[0], ci[1])
		}
	}
	rows = append(rows, Row{"Speedup (cold / reused)", sp})
	for _, why := range h.LimitedBy {
		rows = append(rows, Row{Value: "Limited by: " + why})
	}
	return []Section{{Title: "KV cache", Rows: rows}}
}

// distRows are a distribution's rows: "<Stat> <name> (ms)".
func distRows(name string, d stats.Dist, ps []float64, median bool) []Row {
	rows := []Row{{"Mean " + name + " (ms)", OptFloat(d.Mean)}}
	if median {
		rows = append(rows, Row{"Median " + name + " (ms)", OptFloat(d.Median)})
	}
	rows = append(rows, Row{"Std " + name + " (ms)", OptFloat(d.Stdev)})
	for _, p := range ps {
		rows = append(rows, Row{"P" + strconv.FormatFloat(p, 'f', -1, 64) + " " + name + " (ms)", OptFloat(d.Get(p))})
	}
	return rows
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
func ByCacheState(s *record.Summary) []Section {
	b := s.ByCacheState
	if b == nil {
		return nil
	}
	var rows []Row
	for _, st := range []struct {
		name string
		f    stats.StateFigures
	}{{"Cold", b.Cold}, {"Reused", b.Reused}, {"Unverified", b.Unverified}, {"Warmup", b.Warmup}} {
		rows = append(rows, Row{st.name + " requests", Int(st.f.Requests)})
		if st.f.Requests == 0 {
			continue
		}
		for _, m := range []struct {
			name string
			d    stats.Dist
		}{{"TTFT", st.f.TTFTms}, {"TPOT", st.f.TPOTms}, {"ITL", st.f.ITLms}, {"latency", st.f.LatencyMs}} {
			rows = append(rows, Row{"  " + m.name + " p50 / p99 (ms)", OptFloat(m.d.Get(50)) + " / " + OptFloat(m.d.Get(99))})
		}
	}
	return []Section{{Title: "By cache state", Rows: rows}}
}

// Serving is the `Serving` section: vLLM bench serve's figures, in its
// order and with its names.
func Serving(s *record.Summary) []Section {
	sv := s.Serving
	if sv == nil {
		return nil
	}
	rows := []Row{
		{"Request throughput (req/s)", OptFloat(sv.RequestThroughput)},
		{"Total token throughput (tok/s)", OptFloat(sv.TotalTokenThroughput)},
	}
	ps := pcts(sv.TTFTms)
	rows = append(rows, distRows("TTFT", sv.TTFTms, ps, true)...)
	rows = append(rows, distRows("TPOT", sv.TPOTms, ps, true)...)
	rows = append(rows, distRows("ITL", sv.ITLms, ps, true)...)
	rows = append(rows, distRows("E2EL", sv.E2ELms, ps, true)...)
	if sv.TTFOms.Mean != nil {
		rows = append(rows, distRows("TTFO", sv.TTFOms, ps, true)...)
	}
	if s.Errors != nil {
		for _, k := range sortedKeys(*s.Errors) {
			rows = append(rows, Row{"Errors: " + k, Int((*s.Errors)[k])})
		}
	}
	return []Section{{Title: "Serving", Rows: rows}}
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
