package report

import (
	"math"
	"strconv"
	"strings"
)

// The one table of figure labels and formats. The text summary, the TUI
// (the finished run screen, the explorer's Summary tab) and the HTML
// report label every figure as this table does, and write its value the
// way its kind says; none keeps names of its own.
//
// A figure has two written forms. The text summary's ("P50 TTFT (ms):
// 7.92") keeps LMCache's layout: the unit in the label, two decimals.
// A display's ("P50 TTFT  7.92 ms") moves the unit next to the value:
// whole numbers with thousands separators for counts, a percentage with
// its sign, "n/a" alone (never "n/a%") for what was not measured.

// Kind is how a figure's value is written.
type Kind int

const (
	// KindReal is a measured quantity: two decimals.
	KindReal Kind = iota
	// KindCount is a whole number: requests, tokens.
	KindCount
	// KindRatio is a fraction in [0, 1], written as a percentage.
	KindRatio
	// KindPercent is already a percentage (0-100).
	KindPercent
)

// Figure is one figure: its label, its unit and its kind.
type Figure struct {
	Label string
	Unit  string // "ms", "tok/s", "req/s", "s", "GB", "%"; "" for none
	Kind  Kind
}

// TextLabel is the label as the text summary prints it: the unit in
// parentheses ("P50 TTFT (ms)").
func (f Figure) TextLabel() string {
	if f.Unit == "" {
		return f.Label
	}
	return f.Label + " (" + f.Unit + ")"
}

// TextValue is the value as the text summary prints it: counts as
// integers, the rest with 2 decimals, a ratio as a percentage; "n/a"
// when nil.
func (f Figure) TextValue(v *float64) string {
	if v == nil {
		return NA
	}
	switch f.Kind {
	case KindCount:
		if *v == math.Trunc(*v) && math.Abs(*v) < 1<<53 {
			return strconv.FormatInt(int64(*v), 10)
		}
		return Float(*v)
	case KindRatio:
		return Percent(v)
	}
	return Float(*v)
}

// Show is the value as a display writes it: "7.92 ms", "1,315.4 ms",
// "20,290", "98.6%"; "n/a" when nil or not finite.
func (f Figure) Show(v *float64) string {
	n := f.ShowNumber(v)
	if n == NA {
		return NA
	}
	switch {
	case f.Kind == KindRatio || f.Kind == KindPercent || f.Unit == "%":
		return n + "%"
	case f.Unit != "":
		return n + " " + f.Unit
	}
	return n
}

// ShowNumber is Show without the unit.
func (f Figure) ShowNumber(v *float64) string {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return NA
	}
	x := *v
	switch f.Kind {
	case KindCount:
		return Thousands(x, 0)
	case KindRatio:
		return strconv.FormatFloat(100*x, 'f', 1, 64)
	case KindPercent:
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	if math.Abs(x) >= 1000 {
		return Thousands(x, 1)
	}
	s := strconv.FormatFloat(x, 'f', 2, 64)
	if s == "-0.00" {
		return "0.00"
	}
	return s
}

// Thousands writes v with prec decimals and a comma between thousands:
// 20290 is "20,290".
func Thousands(v float64, prec int) string {
	s := strconv.FormatFloat(v, 'f', prec, 64)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if frac != "" {
		return sign + b.String() + "." + frac
	}
	return sign + b.String()
}

// PercentText is a ratio as a percentage with 2 decimals and its sign
// ("48.00%"), or "n/a" alone: for sentences ("hit ratio 48.00%").
func PercentText(p *float64) string {
	if p == nil {
		return NA
	}
	return Percent(p) + "%"
}

// Tokens is a token count for a sentence or a text row, whole ("2029"
// for a mean of 2029.4); "n/a" when unknown.
func Tokens(p *float64) string {
	if p == nil || math.IsNaN(*p) || math.IsInf(*p, 0) {
		return NA
	}
	return strconv.FormatFloat(math.Round(*p), 'f', 0, 64)
}

// Requests is "1 request", "5 requests".
func Requests(n int) string {
	if n == 1 {
		return "1 request"
	}
	return strconv.Itoa(n) + " requests"
}

// The figures of bench_summary.json's standard blocks, by the key a
// figure has there (block.field, nested objects joined with dots).
var Labels = map[string]Figure{
	"config.kv_cache_volume_gb":    {"KV cache volume", "GB", KindReal},
	"config.tokens_per_gb_kvcache": {"Tokens per GB of KV cache", "", KindCount},

	"results.total_requests":          {"Total requests", "", KindCount},
	"results.successful_requests":     {"Successful requests", "", KindCount},
	"results.failed_requests":         {"Failed requests", "", KindCount},
	"results.elapsed_time":            {"Benchmark duration", "s", KindReal},
	"results.total_input_tokens":      {"Total input tokens", "", KindCount},
	"results.total_output_tokens":     {"Total output tokens", "", KindCount},
	"results.input_throughput":        {"Input throughput", "tok/s", KindReal},
	"results.output_throughput":       {"Output throughput", "tok/s", KindReal},
	"results.mean_ttft_ms":            {"Mean TTFT", "ms", KindReal},
	"results.p50_ttft_ms":             {"P50 TTFT", "ms", KindReal},
	"results.p90_ttft_ms":             {"P90 TTFT", "ms", KindReal},
	"results.p99_ttft_ms":             {"P99 TTFT", "ms", KindReal},
	"results.mean_decode_speed":       {"Mean decode", "tok/s", KindReal},
	"results.p50_decode_speed":        {"P50 decode", "tok/s", KindReal},
	"results.p90_decode_speed":        {"P90 decode", "tok/s", KindReal},
	"results.p99_decode_speed":        {"P99 decode", "tok/s", KindReal},
	"results.mean_request_latency_ms": {"Mean latency", "ms", KindReal},
	"results.p50_request_latency_ms":  {"P50 latency", "ms", KindReal},
	"results.p90_request_latency_ms":  {"P90 latency", "ms", KindReal},
	"results.p99_request_latency_ms":  {"P99 latency", "ms", KindReal},

	"cache.cold":          {"Cold requests", "", KindCount},
	"cache.reused":        {"Reused requests", "", KindCount},
	"cache.unverified":    {"Unverified requests", "", KindCount},
	"cache.prompt_tokens": {"Prompt tokens (valid counts)", "", KindCount},
	"cache.cached_tokens": {"Cached tokens", "", KindCount},
	"cache.hit_ratio":     {"Hit ratio", "%", KindRatio},

	"latency.itl_ms.mean":           {"Mean ITL", "ms", KindReal},
	"latency.itl_ms.p50":            {"P50 ITL", "ms", KindReal},
	"latency.itl_ms.p95":            {"P95 ITL", "ms", KindReal},
	"latency.round_gap_ms.mean":     {"Mean round gap", "ms", KindReal},
	"latency.round_gap_ms.p50":      {"P50 round gap", "ms", KindReal},
	"latency.round_gap_ms.p95":      {"P95 round gap", "ms", KindReal},
	"latency.tokens_per_chunk_mean": {"Mean tokens per chunk", "", KindReal},
	"latency.prefill_tps.mean":      {"Mean cold prefill", "tok/s", KindReal},
	"latency.prefill_tps.p50":       {"P50 cold prefill", "tok/s", KindReal},
	"latency.aggregate_prefill_tps": {"Aggregate prefill", "tok/s", KindReal},

	"client.max_dispatch_lag_ms":  {"Max dispatch lag", "ms", KindReal},
	"client.p99_dispatch_lag_ms":  {"P99 dispatch lag", "ms", KindReal},
	"client.cpu_seconds":          {"Client CPU", "s", KindReal},
	"client.timing_error_p99_ms":  {"Timing error p99", "ms", KindReal},
	"client.timing_error_max_ms":  {"Timing error max", "ms", KindReal},
	"client.sched_latency_p99_ms": {"Sched latency p99", "ms", KindReal},
	"client.machine_cpu_busy_max": {"Machine CPU busy max", "%", KindPercent},

	"goodput.slo.ttft_ms":        {"SLO TTFT", "ms", KindReal},
	"goodput.slo.tpot_ms":        {"SLO TPOT", "ms", KindReal},
	"goodput.slo.e2e_ms":         {"SLO E2E latency", "ms", KindReal},
	"goodput.good_requests":      {"Good requests", "", KindCount},
	"goodput.good_fraction":      {"Good fraction", "%", KindRatio},
	"goodput.goodput_rps":        {"Goodput", "req/s", KindReal},
	"goodput.goodput_output_tps": {"Goodput output", "tok/s", KindReal},

	"load.target_rate":              {"Target rate", "req/s", KindReal},
	"load.achieved_rate":            {"Achieved rate", "req/s", KindReal},
	"load.max_concurrency":          {"Max concurrency", "", KindCount},
	"load.observed_max_concurrency": {"Observed max concurrency", "", KindCount},
	"load.mean_concurrency":         {"Mean concurrency", "", KindReal},
	"load.schedule_lag_p50_ms":      {"P50 schedule lag", "ms", KindReal},
	"load.schedule_lag_p99_ms":      {"P99 schedule lag", "ms", KindReal},
	"load.schedule_lag_max_ms":      {"Max schedule lag", "ms", KindReal},

	"headline.hit_ratio":          {"Hit ratio", "%", KindRatio},
	"headline.cold_ttft_p50_ms":   {"Cold TTFT p50", "ms", KindReal},
	"headline.reused_ttft_p50_ms": {"Reused TTFT p50", "ms", KindReal},

	"serving.request_throughput":     {"Request throughput", "req/s", KindReal},
	"serving.total_token_throughput": {"Total token throughput", "tok/s", KindReal},
}

// fig is the figure of key in Labels; a key missing from the table is a
// programming error caught by the tests.
func fig(key string) Figure {
	f, ok := Labels[key]
	if !ok {
		panic("report: no label for " + key)
	}
	return f
}

// distFig is the figure of one statistic of a distribution: "P50 TTFT"
// in ms, "Mean E2EL".
func distFig(stat, name string) Figure { return Figure{stat + " " + name, "ms", KindReal} }

// item is one row of a summary before it is written: a figure with its
// value (or values, written "a / b"), or a label with its text.
type item struct {
	fig    *Figure
	vals   []*float64
	suffix string // after the figure's label: " (warmup)"
	label  string // a text row's label; "" for a note
	text   string // a text row's value as the text summary writes it
	shown  string // a text row's value on a display, when it differs
	// shownLabel is a text row's label on a display, when it differs
	// (no unit: "Target rate" where the text summary has "Target rate
	// (req/s)").
	shownLabel string
}

// block is a titled group of items: a section before it is written.
type block struct {
	title string
	items []item
}

func figItem(key string, v *float64) item { return figOf(fig(key), v) }

func figOf(f Figure, vs ...*float64) item { return item{fig: &f, vals: vs} }

func textItem(label, value string) item { return item{label: label, text: value} }

// shownAs gives a text row its display value.
func (it item) shownAs(v string) item { it.shown = v; return it }

// withShownLabel gives a text row its display label.
func (it item) withShownLabel(l string) item { it.shownLabel = l; return it }

func noteItem(text string) item { return item{text: text} }

// textRow is the row as the text summary prints it.
func (it item) textRow() Row {
	if it.fig == nil {
		return Row{Label: it.label, Value: it.text}
	}
	parts := make([]string, len(it.vals))
	for i, v := range it.vals {
		parts[i] = it.fig.TextValue(v)
	}
	return Row{Label: it.fig.TextLabel() + it.suffix, Value: strings.Join(parts, " / ")}
}

// shownRow is the row as a display writes it.
func (it item) shownRow() Row {
	if it.fig == nil {
		l, v := it.label, it.text
		if it.shown != "" {
			v = it.shown
		}
		if it.shownLabel != "" {
			l = it.shownLabel
		}
		return Row{Label: l, Value: v}
	}
	f := *it.fig
	if len(it.vals) == 1 {
		return Row{Label: f.Label + it.suffix, Value: f.Show(it.vals[0])}
	}
	parts := make([]string, len(it.vals))
	known := false
	for i, v := range it.vals {
		parts[i] = f.ShowNumber(v)
		known = known || parts[i] != NA
	}
	v := strings.Join(parts, " / ")
	if known && f.Unit != "" {
		v += " " + f.Unit
	}
	return Row{Label: f.Label + it.suffix, Value: v}
}

// textSections are bs with each item as the text summary words it.
func textSections(bs []block) []Section { return sections(bs, item.textRow) }

// shownSections are bs with each item as the front-ends show it.
func shownSections(bs []block) []Section { return sections(bs, item.shownRow) }

// sections are bs, each item made a row by row.
func sections(bs []block, row func(item) Row) []Section {
	if len(bs) == 0 {
		return nil
	}
	out := make([]Section, 0, len(bs))
	for _, b := range bs {
		rows := make([]Row, len(b.items))
		for i, it := range b.items {
			rows[i] = row(it)
		}
		out = append(out, Section{Title: b.title, Rows: rows})
	}
	return out
}
