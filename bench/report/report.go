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
func Expectation(s *record.Summary) []Section {
	e := record.WorkloadExpectation(s)
	if e == nil {
		return nil
	}
	return []Section{{Title: "Expectation", Rows: []Row{
		{"Verdict", record.VerdictText(e.Verdict)},
		{Value: "Expected: " + e.Expected},
		{Value: "Observed: " + e.Reason},
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
func Sections(s *record.Summary) []Section {
	r, c, l, cl := s.Results, s.Cache, s.Latency, s.Client

	cfg := []Row{
		{"Workload", orNA(configString(s.Config, "workload"))},
		{"Model", orNA(configString(s.Config, "model"))},
	}
	if served := configString(s.Config, "served_model_name"); served != "" && served != configString(s.Config, "model") {
		cfg = append(cfg, Row{"Served model name", served})
	}
	cfg = append(cfg,
		Row{"Engine URL", orNA(configString(s.Config, "engine_url"))},
		Row{"KV cache volume (GB)", configFloat(s.Config, "kv_cache_volume_gb")},
		Row{"Tokens per GB of KV cache", positive(configInt(s.Config, "tokens_per_gb_kvcache"))},
		Row{"Seed", configInt(s.Config, "seed")},
	)
	if v, ok := record.Field(s.Config, "ignore_eos"); ok && v == true {
		cfg = append(cfg, Row{"Ignore EOS", "yes"})
	}
	if s.Run.ID != "" {
		cfg = append(cfg, Row{"Run ID", s.Run.ID})
	}
	if s.Run.Name != "" {
		cfg = append(cfg, Row{"Run name", s.Run.Name})
	}
	if s.Run.Interrupted {
		cfg = append(cfg, Row{"Interrupted", "yes"})
	}
	cfg = append(cfg, shardRows(s)...)

	cache := []Row{
		{"Cold requests", Int(c.Cold)},
		{"Reused requests", Int(c.Reused)},
		{"Unverified requests", Int(c.Unverified)},
	}
	reasons := make([]string, 0, len(c.UnverifiedReasons))
	for k := range c.UnverifiedReasons {
		reasons = append(reasons, k)
	}
	sort.Strings(reasons)
	for _, k := range reasons {
		cache = append(cache, Row{"  " + k, Int(c.UnverifiedReasons[k])})
	}
	cache = append(cache,
		Row{"Prompt tokens (valid counts)", Int(c.PromptTokens)},
		Row{"Cached tokens", Int(c.CachedTokens)},
		Row{"Hit ratio (%)", Percent(c.HitRatio)},
	)

	sections := []Section{
		{"Configuration", cfg},
		{"Results", []Row{
			{"Total requests", Int(r.TotalRequests)},
			{"Successful requests", Int(r.SuccessfulRequests)},
			{"Failed requests", Int(r.FailedRequests)},
			{"Benchmark duration (s)", Float(r.ElapsedTime)},
			{"Total input tokens", Int(r.TotalInputTokens)},
			{"Total output tokens", Int(r.TotalOutputTokens)},
			{"Input throughput (tok/s)", Float(r.InputThroughput)},
			{"Output throughput (tok/s)", Float(r.OutputThroughput)},
		}},
		{"Time to First Token", []Row{
			{"Mean TTFT (ms)", OptFloat(r.MeanTTFTms)},
			{"P50 TTFT (ms)", OptFloat(r.P50TTFTms)},
			{"P90 TTFT (ms)", OptFloat(r.P90TTFTms)},
			{"P99 TTFT (ms)", OptFloat(r.P99TTFTms)},
		}},
		{"Decoding Speed", []Row{
			{"Mean decode (tok/s)", OptFloat(r.MeanDecodeSpeed)},
			{"P50 decode (tok/s)", OptFloat(r.P50DecodeSpeed)},
			{"P90 decode (tok/s)", OptFloat(r.P90DecodeSpeed)},
			{"P99 decode (tok/s)", OptFloat(r.P99DecodeSpeed)},
		}},
		{"Cache", cache},
		{"Latency", []Row{
			{"Mean latency (ms)", OptFloat(r.MeanRequestLatencyMs)},
			{"P50 latency (ms)", OptFloat(r.P50RequestLatencyMs)},
			{"P90 latency (ms)", OptFloat(r.P90RequestLatencyMs)},
			{"P99 latency (ms)", OptFloat(r.P99RequestLatencyMs)},
			{"Mean ITL (ms)", OptFloat(l.ITLms.Mean)},
			{"P50 ITL (ms)", OptFloat(l.ITLms.P50)},
			{"P95 ITL (ms)", OptFloat(l.ITLms.P95)},
			{"Mean round gap (ms)", OptFloat(l.RoundGapMs.Mean)},
			{"P50 round gap (ms)", OptFloat(l.RoundGapMs.P50)},
			{"P95 round gap (ms)", OptFloat(l.RoundGapMs.P95)},
			{"Mean tokens per chunk", OptFloat(l.TokensPerChunkMean)},
			{"Mean cold prefill (tok/s)", OptFloat(l.PrefillTPS.Mean)},
			{"P50 cold prefill (tok/s)", OptFloat(l.PrefillTPS.P50)},
			{"Aggregate prefill (tok/s)", OptFloat(l.AggregatePrefillTPS)},
			{"Max dispatch lag (ms)", OptFloat(cl.MaxDispatchLagMs)},
			{"P99 dispatch lag (ms)", OptFloat(cl.P99DispatchLagMs)},
			{"Client CPU (s)", Float(cl.CPUSeconds)},
			{"Timing error p99 (ms)", OptFloat(cl.TimingErrorP99Ms)},
			{"Timing error max (ms)", OptFloat(cl.TimingErrorMaxMs)},
			{"Sched latency p99 (ms)", OptFloat(cl.SchedLatencyP99Ms)},
			{"Machine CPU busy max (%)", OptFloat(cl.MachineCPUBusyMax)},
			{"Client overloaded", yesNo(cl.Overloaded)},
		}},
	}
	// A busy machine is a note beside figures still measured on time.
	if note := overload.MachineNote(cl.MachineCPUBusyMax, cl.TimingErrorP99Ms); note != "" && !cl.Overloaded {
		lat := &sections[len(sections)-1]
		lat.Rows = append(lat.Rows, Row{Value: "Note: " + note})
	}
	if s.Goodput != nil {
		sections = append(sections, Section{"Goodput", GoodputRows(s.Goodput)})
	}
	if s.Load != nil {
		sections = append(sections, Section{"Load", LoadRows(s.Load)})
	}
	return sections
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
func LoadRows(b *load.Block) []Row {
	target := "workload's own"
	if b.TargetRate != nil {
		target = Float(*b.TargetRate)
	}
	arrival := b.Arrival
	if b.TargetRate == nil {
		arrival = "n/a"
	} else if b.Arrival == load.Gamma && b.Burstiness != nil {
		arrival = fmt.Sprintf("gamma (burstiness %s)", strconv.FormatFloat(*b.Burstiness, 'g', 4, 64))
	}
	capacity := "none"
	if b.MaxConcurrency != nil {
		capacity = Int(*b.MaxConcurrency)
	}
	verdict := "yes"
	if !b.Delivered {
		verdict = "NO"
	}
	rows := []Row{
		{"Target rate (req/s)", target},
		{"Achieved rate (req/s)", OptFloat(b.AchievedRate)},
		{"Arrival", arrival},
		{"Max concurrency", capacity},
		{"Observed max concurrency", Int(b.ObservedMaxConcurrency)},
		{"Mean concurrency", OptFloat(b.MeanConcurrency)},
		{"P50 schedule lag (ms)", OptFloat(b.ScheduleLagP50ms)},
		{"P99 schedule lag (ms)", OptFloat(b.ScheduleLagP99ms)},
		{"Max schedule lag (ms)", OptFloat(b.ScheduleLagMaxms)},
		{"Load delivered", verdict},
	}
	for _, r := range b.DegradedReasons {
		rows = append(rows, Row{Value: "- " + r})
	}
	return rows
}

// GoodputRows are the `goodput` block's rows.
func GoodputRows(g *load.Goodput) []Row {
	slo := func(p *float64) string {
		if p == nil {
			return "not set"
		}
		return Float(*p)
	}
	return []Row{
		{"SLO TTFT (ms)", slo(g.SLO.TTFTms)},
		{"SLO TPOT (ms)", slo(g.SLO.TPOTms)},
		{"SLO E2E latency (ms)", slo(g.SLO.E2Ems)},
		{"Good requests", Int(g.GoodRequests)},
		{"Good fraction (%)", Percent(g.GoodFraction)},
		{"Goodput (req/s)", OptFloat(g.GoodputRPS)},
		{"Goodput output (tok/s)", OptFloat(g.GoodputOutputTPS)},
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
func Overload(s *record.Summary) []Section {
	if !s.Client.Overloaded {
		return nil
	}
	var rows []Row
	if in := overload.Inflation(s.Client.TimingErrorP99Ms, s.Client.TimingErrorMaxMs); in != "" {
		rows = append(rows, Row{Value: "Latencies may be inflated " + in})
	}
	for _, r := range s.Client.OverloadReasons {
		rows = append(rows, Row{Value: "- " + r})
	}
	return []Section{{Title: "Client Overloaded: Latencies May Be Inflated", Rows: rows}}
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

// shardRows say how a run was split: the shard a run was, or the shards a
// merged run was made of, with the largest start skew next to the
// figures (shard clocks are assumed NTP-synchronised).
func shardRows(s *record.Summary) []Row {
	var rows []Row
	switch {
	case len(s.Shards) > 0:
		v := Int(len(s.Shards))
		if s.Partial {
			v += " (partial)"
		}
		rows = append(rows, Row{"Shards merged", v})
	case s.Shard != nil:
		i, _ := record.Field(s.Shard, "index")
		n, _ := record.Field(s.Shard, "count")
		if n != nil && fmt.Sprint(n) != "1" {
			rows = append(rows, Row{"Shard", fmt.Sprintf("%v/%v", i, n)})
		}
	}
	if s.StartSkewMs != nil {
		label := "Start skew (ms)"
		if len(s.Shards) > 0 {
			label = "Largest start skew (ms)"
		}
		rows = append(rows, Row{label, OptFloat(s.StartSkewMs)})
	}
	return rows
}
