// Package report renders a run's summary as the plain-text table printed
// on stdout (spec/cli.md "Output discipline"), in the layout of LMCache's
// terminal formatter: Width columns, the title centred in '=', section
// titles centred in '-', "Label:" on the left and the value right-aligned,
// a closing line of '='.
//
// Every line is exactly Width columns (counted in runes; the record's
// values are ASCII). A row whose label and value do not fit is shortened
// with "...": the label first, down to 16 columns, then the middle of the
// value, so the table never breaks. Values are preformatted strings:
// floats with 2 decimals (Float), integers as integers (Int), strings as
// they are, and null as "n/a" (OptFloat). The output never holds an ANSI
// escape.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/overload"
	"github.com/kvbench/kvbench/bench/record"
)

// Width is the text summary's width in columns.
const Width = 56

// NA is how a null value prints.
const NA = "n/a"

// Row is one "Label: value" line; Value is preformatted. A row with an
// empty Label is a note: its Value is wrapped over as many indented lines
// as it needs (reasons in words must be read whole).
type Row struct{ Label, Value string }

// Section is a titled group of rows. An empty Title prints no title line.
type Section struct {
	Title string
	Rows  []Row
}

// Float formats v with 2 decimals ("n/a" for NaN or infinity).
func Float(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return NA
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	if s == "-0.00" {
		return "0.00"
	}
	return s
}

// Int formats an integer.
func Int(v int) string { return strconv.Itoa(v) }

// OptFloat formats a nullable float: "n/a" for nil, else Float.
func OptFloat(p *float64) string {
	if p == nil {
		return NA
	}
	return Float(*p)
}

// Percent formats a nullable ratio as a percentage with 2 decimals.
func Percent(p *float64) string {
	if p == nil {
		return NA
	}
	return Float(100 * *p)
}

// FailedChecks appends the reasons a run did not qualify (cache-probe)
// or found differences (concurrent-exactness) as a last section, so every
// front-end shows them the same way.
func FailedChecks(sections []Section, reasons []string) []Section {
	if len(reasons) == 0 {
		return sections
	}
	rows := make([]Row, 0, len(reasons))
	for _, r := range reasons {
		rows = append(rows, Row{Label: "reason", Value: r})
	}
	return append(sections[:len(sections):len(sections)], Section{Title: "Failed checks", Rows: rows})
}

// Title is the summary's title for a workload.
func Title(workload string) string {
	return "Engine Benchmark Result (" + workload + ")"
}

// Text writes the summary of s: Configuration, Results, Time to First
// Token, Decoding Speed, Cache, Latency, then the extra sections
// (workload-specific, server metrics) in the order given, then the
// workload's expectation and its verdict.
func Text(w io.Writer, s *record.Summary, extra ...Section) error {
	workload := configString(s.Config, "workload")
	if workload == "" {
		workload = NA
	}
	sections := append(append(Sections(s), extra...), ByCacheState(s)...)
	sections = append(append(sections, Serving(s)...), Expectation(s)...)
	sections = append(sections, Overload(s)...)
	// What reuse changed closes the summary, where a terminal user's
	// eye lands.
	return Render(w, Title(workload), append(sections, KVCache(s)...))
}

// Expectation is the section of the workload's expectation: the verdict,
// then what was expected and the figures that decide it, in words; nil
// when the summary has none.
func Expectation(s *record.Summary) []Section { return textSections(expectation(s)) }

func expectation(s *record.Summary) []block {
	e := record.WorkloadExpectation(s)
	if e == nil {
		return nil
	}
	return []block{{"Expectation", []item{
		textItem("Verdict", record.VerdictText(e.Verdict)),
		noteItem("Expected: " + e.Expected),
		noteItem("Observed: " + e.Reason),
	}}}
}

// Render writes a titled table of sections.
func Render(w io.Writer, title string, sections []Section) error {
	var b strings.Builder
	b.WriteString(center(" "+fit(title, Width-2)+" ", '='))
	b.WriteByte('\n')
	for _, sec := range sections {
		if sec.Title != "" {
			b.WriteString(center(" "+fit(sec.Title, Width-2)+" ", '-'))
			b.WriteByte('\n')
		}
		for _, r := range sec.Rows {
			if r.Label == "" {
				for _, l := range wrap(oneLine(r.Value), Width-2) {
					b.WriteString("  " + l + strings.Repeat(" ", Width-2-width(l)))
					b.WriteByte('\n')
				}
				continue
			}
			b.WriteString(row(r))
			b.WriteByte('\n')
		}
	}
	b.WriteString(strings.Repeat("=", Width))
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// Sections are the standard sections of a summary.
func Sections(s *record.Summary) []Section { return textSections(standard(s, true)) }

// Shown is the summary as a display shows it (the explorer's Summary
// tab, the HTML report): the text summary's sections in its order and
// with its labels, values written for reading (Figure.Show), and the
// workload's expectation, the overload warning and the KV cache section
// where the text summary has them; no workload section (only a run's
// end has those). complete is false for a summary computed from
// requests.jsonl: what only a written summary knows (the client's CPU,
// its overload) is then n/a.
func Shown(s *record.Summary, complete bool) []Section {
	bs := standard(s, complete)
	bs = append(append(bs, byCacheState(s)...), serving(s)...)
	bs = append(append(bs, expectation(s)...), overloadBlocks(s)...)
	return shownSections(append(bs, kvCache(s)...))
}

func f64(v float64) *float64 { return &v }
func fint(v int) *float64    { return f64(float64(v)) }

// configFig is a number of the config block, nil when absent.
func configFig(cfg any, key string) *float64 {
	if f, ok := configNumber(cfg, key); ok {
		return &f
	}
	return nil
}

func standard(s *record.Summary, complete bool) []block {
	r, c, l, cl := s.Results, s.Cache, s.Latency, s.Client

	cfg := []item{
		textItem("Workload", orNA(configString(s.Config, "workload"))),
		textItem("Model", orNA(configString(s.Config, "model"))),
	}
	if served := configString(s.Config, "served_model_name"); served != "" && served != configString(s.Config, "model") {
		cfg = append(cfg, textItem("Served model name", served))
	}
	tpg := configFig(s.Config, "tokens_per_gb_kvcache")
	if tpg != nil && *tpg == 0 {
		// 0 when the workload does not size itself from a KV budget
		// (cache-probe, concurrent-exactness).
		tpg = nil
	}
	tpgItem := figItem("config.tokens_per_gb_kvcache", tpg)
	if tpg != nil && (*tpg != math.Trunc(*tpg) || math.Abs(*tpg) >= 1<<53) {
		tpgItem = textItem(fig("config.tokens_per_gb_kvcache").Label, NA)
	}
	cfg = append(cfg,
		textItem("Engine URL", orNA(configString(s.Config, "engine_url"))).shownAs(orNA(cleanURL(configString(s.Config, "engine_url")))),
		figItem("config.kv_cache_volume_gb", configFig(s.Config, "kv_cache_volume_gb")),
		tpgItem,
		textItem("Seed", configInt(s.Config, "seed")),
	)
	if v, ok := record.Field(s.Config, "ignore_eos"); ok && v == true {
		cfg = append(cfg, textItem("Ignore EOS", "yes"))
	}
	if s.Run.ID != "" {
		cfg = append(cfg, textItem("Run ID", s.Run.ID))
	}
	if s.Run.Name != "" {
		cfg = append(cfg, textItem("Run name", s.Run.Name))
	}
	if s.Run.Interrupted {
		cfg = append(cfg, textItem("Interrupted", "yes"))
	}
	cfg = append(cfg, shardItems(s)...)

	cache := []item{
		figItem("cache.cold", fint(c.Cold)),
		figItem("cache.reused", fint(c.Reused)),
		figItem("cache.unverified", fint(c.Unverified)),
	}
	reasons := make([]string, 0, len(c.UnverifiedReasons))
	for k := range c.UnverifiedReasons {
		reasons = append(reasons, k)
	}
	sort.Strings(reasons)
	for _, k := range reasons {
		cache = append(cache, figOf(Figure{"  " + k, "", KindCount}, fint(c.UnverifiedReasons[k])))
	}
	cache = append(cache,
		figItem("cache.prompt_tokens", fint(c.PromptTokens)),
		figItem("cache.cached_tokens", fint(c.CachedTokens)),
		figItem("cache.hit_ratio", c.HitRatio),
	)

	cpu, overloaded := f64(cl.CPUSeconds), textItem("Client overloaded", yesNo(cl.Overloaded))
	if !complete {
		cpu, overloaded = nil, textItem("Client overloaded", NA)
	}
	blocks := []block{
		{"Configuration", cfg},
		{"Results", []item{
			figItem("results.total_requests", fint(r.TotalRequests)),
			figItem("results.successful_requests", fint(r.SuccessfulRequests)),
			figItem("results.failed_requests", fint(r.FailedRequests)),
			figItem("results.elapsed_time", finiteF(r.ElapsedTime)),
			figItem("results.total_input_tokens", fint(r.TotalInputTokens)),
			figItem("results.total_output_tokens", fint(r.TotalOutputTokens)),
			figItem("results.input_throughput", finiteF(r.InputThroughput)),
			figItem("results.output_throughput", finiteF(r.OutputThroughput)),
		}},
		{"Time to First Token", []item{
			figItem("results.mean_ttft_ms", r.MeanTTFTms),
			figItem("results.p50_ttft_ms", r.P50TTFTms),
			figItem("results.p90_ttft_ms", r.P90TTFTms),
			figItem("results.p99_ttft_ms", r.P99TTFTms),
		}},
		{"Decoding Speed", []item{
			figItem("results.mean_decode_speed", r.MeanDecodeSpeed),
			figItem("results.p50_decode_speed", r.P50DecodeSpeed),
			figItem("results.p90_decode_speed", r.P90DecodeSpeed),
			figItem("results.p99_decode_speed", r.P99DecodeSpeed),
		}},
		{"Cache", cache},
		{"Latency", []item{
			figItem("results.mean_request_latency_ms", r.MeanRequestLatencyMs),
			figItem("results.p50_request_latency_ms", r.P50RequestLatencyMs),
			figItem("results.p90_request_latency_ms", r.P90RequestLatencyMs),
			figItem("results.p99_request_latency_ms", r.P99RequestLatencyMs),
			figItem("latency.itl_ms.mean", l.ITLms.Mean),
			figItem("latency.itl_ms.p50", l.ITLms.P50),
			figItem("latency.itl_ms.p95", l.ITLms.P95),
			figItem("latency.round_gap_ms.mean", l.RoundGapMs.Mean),
			figItem("latency.round_gap_ms.p50", l.RoundGapMs.P50),
			figItem("latency.round_gap_ms.p95", l.RoundGapMs.P95),
			figItem("latency.tokens_per_chunk_mean", l.TokensPerChunkMean),
			figItem("latency.prefill_tps.mean", l.PrefillTPS.Mean),
			figItem("latency.prefill_tps.p50", l.PrefillTPS.P50),
			figItem("latency.aggregate_prefill_tps", l.AggregatePrefillTPS),
			figItem("client.max_dispatch_lag_ms", cl.MaxDispatchLagMs),
			figItem("client.p99_dispatch_lag_ms", cl.P99DispatchLagMs),
			figItem("client.cpu_seconds", cpu),
			figItem("client.timing_error_p99_ms", cl.TimingErrorP99Ms),
			figItem("client.timing_error_max_ms", cl.TimingErrorMaxMs),
			figItem("client.sched_latency_p99_ms", cl.SchedLatencyP99Ms),
			figItem("client.machine_cpu_busy_max", cl.MachineCPUBusyMax),
			overloaded,
		}},
	}
	// A busy machine is a note beside figures still measured on time.
	if note := overload.MachineNote(cl.MachineCPUBusyMax, cl.TimingErrorP99Ms); note != "" && !cl.Overloaded {
		lat := &blocks[len(blocks)-1]
		lat.items = append(lat.items, textItem("", "Note: "+note))
	}
	if s.Goodput != nil {
		blocks = append(blocks, block{"Goodput", goodputItems(s.Goodput)})
	}
	if s.Load != nil {
		blocks = append(blocks, block{"Load", loadItems(s.Load)})
	}
	return blocks
}

// finiteF is v, nil when not finite (the text summary's Float prints
// n/a for those too).
func finiteF(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// wrap splits s into lines of at most n columns at spaces (a longer word
// is cut).
func wrap(s string, n int) []string {
	var out []string
	line := ""
	for _, w := range strings.Fields(s) {
		for width(w) > n {
			if line != "" {
				out = append(out, line)
				line = ""
			}
			rs := []rune(w)
			out = append(out, string(rs[:n]))
			w = string(rs[n:])
		}
		switch {
		case line == "":
			line = w
		case width(line)+1+width(w) <= n:
			line += " " + w
		default:
			out = append(out, line)
			line = w
		}
	}
	if line != "" || len(out) == 0 {
		out = append(out, line)
	}
	return out
}

// LoadRows are the `load` block's rows: the figures, the verdict and, as
// notes, its reasons.
func LoadRows(b *load.Block) []Row { return textSections([]block{{items: loadItems(b)}})[0].Rows }

func loadItems(b *load.Block) []item {
	target := figItem("load.target_rate", b.TargetRate)
	if b.TargetRate == nil {
		f := fig("load.target_rate")
		target = textItem(f.TextLabel(), "workload's own").withShownLabel(f.Label).shownAs("the workload's own")
	}
	arrival := b.Arrival
	if b.TargetRate == nil {
		arrival = "n/a"
	} else if b.Arrival == load.Gamma && b.Burstiness != nil {
		arrival = fmt.Sprintf("gamma (burstiness %s)", strconv.FormatFloat(*b.Burstiness, 'g', 4, 64))
	}
	capacity := textItem("Max concurrency", "none")
	if b.MaxConcurrency != nil {
		capacity = figItem("load.max_concurrency", fint(*b.MaxConcurrency))
	}
	verdict := "yes"
	if !b.Delivered {
		verdict = "NO"
	}
	items := []item{
		target,
		figItem("load.achieved_rate", b.AchievedRate),
		textItem("Arrival", arrival),
		capacity,
		figItem("load.observed_max_concurrency", fint(b.ObservedMaxConcurrency)),
		figItem("load.mean_concurrency", b.MeanConcurrency),
		figItem("load.schedule_lag_p50_ms", b.ScheduleLagP50ms),
		figItem("load.schedule_lag_p99_ms", b.ScheduleLagP99ms),
		figItem("load.schedule_lag_max_ms", b.ScheduleLagMaxms),
		textItem("Load delivered", verdict),
	}
	for _, r := range b.DegradedReasons {
		items = append(items, noteItem("- "+r))
	}
	return items
}

// GoodputRows are the `goodput` block's rows.
func GoodputRows(g *load.Goodput) []Row {
	return textSections([]block{{items: goodputItems(g)}})[0].Rows
}

func goodputItems(g *load.Goodput) []item {
	slo := func(key string, p *float64) item {
		if p == nil {
			f := fig(key)
			return textItem(f.TextLabel(), "not set").withShownLabel(f.Label)
		}
		return figItem(key, p)
	}
	return []item{
		slo("goodput.slo.ttft_ms", g.SLO.TTFTms),
		slo("goodput.slo.tpot_ms", g.SLO.TPOTms),
		slo("goodput.slo.e2e_ms", g.SLO.E2Ems),
		figItem("goodput.good_requests", fint(g.GoodRequests)),
		figItem("goodput.good_fraction", g.GoodFraction),
		figItem("goodput.goodput_rps", g.GoodputRPS),
		figItem("goodput.goodput_output_tps", g.GoodputOutputTPS),
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// Overload is the section that says the client was overloaded: by how
// much latencies may be inflated, then each reason, wrapped in full; nil
// when it was not.
func Overload(s *record.Summary) []Section { return textSections(overloadBlocks(s)) }

func overloadBlocks(s *record.Summary) []block {
	if !s.Client.Overloaded {
		return nil
	}
	var items []item
	if in := overload.Inflation(s.Client.TimingErrorP99Ms, s.Client.TimingErrorMaxMs); in != "" {
		items = append(items, textItem("", "Latencies may be inflated "+in))
	}
	for _, r := range s.Client.OverloadReasons {
		items = append(items, textItem("reason", r).withShownLabel("Reason"))
	}
	return []block{{"Client Overloaded: Latencies May Be Inflated", items}}
}

// minLabel is how far a label may be shortened to make room for a value.
const minLabel = 16

// row renders one row exactly Width columns wide.
func row(r Row) string {
	label := oneLine(r.Label)
	value := oneLine(r.Value)
	if value == "" {
		value = NA
	}
	lw, vw := width(label)+1, width(value) // +1 for ':'
	if lw+1+vw > Width {
		room := max(Width-1-vw, minLabel) // label columns including ':'
		if lw > room {
			label = fit(label, room-1)
			lw = room
		}
		if lw+1+vw > Width {
			value = fitMiddle(value, Width-1-lw)
			vw = width(value)
		}
	}
	return label + ":" + strings.Repeat(" ", Width-lw-vw) + value
}

// center centres s in Width columns with fill, as Python's str.center
// does (the odd column goes right for an even width).
func center(s string, fill byte) string {
	n := width(s)
	if n >= Width {
		return s
	}
	marg := Width - n
	left := marg/2 + (marg & Width & 1)
	return strings.Repeat(string(fill), left) + s + strings.Repeat(string(fill), marg-left)
}

func width(s string) int { return utf8.RuneCountInString(s) }

// fit cuts s to at most n columns, ending in "..." when cut.
func fit(s string, n int) string {
	if width(s) <= n {
		return s
	}
	if n <= 3 {
		return string([]rune(s)[:max(n, 0)])
	}
	return string([]rune(s)[:n-3]) + "..."
}

// fitMiddle cuts the middle of s to at most n columns, keeping both ends
// (a URL's host and a model's suffix stay readable).
func fitMiddle(s string, n int) string {
	if width(s) <= n {
		return s
	}
	if n <= 3 {
		return fit(s, n)
	}
	rs := []rune(s)
	head := (n - 3 + 1) / 2
	tail := n - 3 - head
	return string(rs[:head]) + "..." + string(rs[len(rs)-tail:])
}

// oneLine keeps a value on its line and free of control characters (no
// escape sequence can reach the terminal through a server's string).
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
}

func orNA(s string) string {
	if s == "" {
		return NA
	}
	return s
}

// configString reads a string field of the summary's config ("" when
// absent or null).
func configString(cfg any, key string) string {
	v, ok := record.Field(cfg, key)
	if !ok || v == nil {
		return ""
	}
	if s, isStr := v.(string); isStr {
		return s
	}
	return fmt.Sprint(v)
}

func configNumber(cfg any, key string) (float64, bool) {
	v, ok := record.Field(cfg, key)
	if !ok {
		return 0, false
	}
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

func configFloat(cfg any, key string) string {
	if f, ok := configNumber(cfg, key); ok {
		return Float(f)
	}
	return NA
}

// positive shows 0 as n/a: tokens-per-GB is 0 when the workload does not
// size itself from a KV budget (cache-probe, concurrent-exactness).
func positive(v string) string {
	if v == "0" {
		return NA
	}
	return v
}

func configInt(cfg any, key string) string {
	if v, ok := record.Field(cfg, key); ok {
		if n, isNum := v.(json.Number); isNum {
			if i, err := n.Int64(); err == nil {
				return strconv.FormatInt(i, 10)
			}
		}
	}
	if f, ok := configNumber(cfg, key); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.FormatInt(int64(f), 10)
	}
	return NA
}

// shardItems say how a run was split: the shard a run was, or the shards a
// merged run was made of, with the largest start skew next to the
// figures (shard clocks are assumed NTP-synchronised).
func shardItems(s *record.Summary) []item {
	var items []item
	switch {
	case len(s.Shards) > 0:
		v := Int(len(s.Shards))
		if s.Partial {
			v += " (partial)"
		}
		items = append(items, textItem("Shards merged", v))
	case s.Shard != nil:
		i, _ := record.Field(s.Shard, "index")
		n, _ := record.Field(s.Shard, "count")
		if n != nil && fmt.Sprint(n) != "1" {
			items = append(items, textItem("Shard", fmt.Sprintf("%v/%v", i, n)))
		}
	}
	if s.StartSkewMs != nil {
		label := "Start skew"
		if len(s.Shards) > 0 {
			label = "Largest start skew"
		}
		items = append(items, figOf(Figure{label, "ms", KindReal}, s.StartSkewMs))
	}
	return items
}
