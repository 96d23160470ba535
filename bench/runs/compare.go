package runs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/secret"
	"github.com/kvbench/kvbench/internal/textclean"
)

// Direction says which way a figure improves.
type Direction int

const (
	Neutral Direction = iota // no better or worse (counts, sizes)
	Lower                    // lower is better (TTFT, latency, lag)
	Higher                   // higher is better (throughput, decode speed, hit ratio)
)

// Verdict is how B's value compares with A's.
type Verdict int

const (
	Same Verdict = iota
	Better
	Worse
	Differs // changed, but the figure has no direction
	Unknown // one side missing
)

// Figure is one row of a comparison.
type Figure struct {
	Section   string // Results, Cache, Latency, Client
	Key       string // e.g. "results.mean_ttft_ms"
	Label     string
	Unit      string
	Direction Direction
	A, B      *float64
	// Delta is (B-A)/|A|, nil when a side is missing or A is 0 and B not.
	Delta   *float64
	Verdict Verdict
}

// ConfigDiff is one config key whose values differ.
type ConfigDiff struct {
	Key  string
	A, B string // the value for reading (strings unquoted), "-" when absent
}

// Comparison is run B against run A.
type Comparison struct {
	A, B    *Detail
	Figures []Figure
	Config  []ConfigDiff
	// Quality pairs the answer scores of rag-qa-quality runs (nil when
	// neither run is one); CompareNamed reads it.
	Quality *QualityComparison
}

// Swapped is the comparison with A and B exchanged, read files kept.
func (c *Comparison) Swapped() *Comparison {
	s := Compare(c.B, c.A)
	s.Quality = c.Quality.swapped()
	return s
}

type figureDef struct {
	section, key, label, unit string
	dir                       Direction
	get                       func(s *record.Summary) *float64
}

func f64(v float64) *float64 { return &v }
func fint(v int) *float64    { return f64(float64(v)) }

// figureDefs lists every figure of the results, cache, latency and client
// blocks, in the summary's order.
var figureDefs = []figureDef{
	{"Results", "results.total_requests", "Total requests", "", Neutral, func(s *record.Summary) *float64 { return fint(s.Results.TotalRequests) }},
	{"Results", "results.successful_requests", "Successful requests", "", Neutral, func(s *record.Summary) *float64 { return fint(s.Results.SuccessfulRequests) }},
	{"Results", "results.failed_requests", "Failed requests", "", Lower, func(s *record.Summary) *float64 { return fint(s.Results.FailedRequests) }},
	{"Results", "results.elapsed_time", "Elapsed time", "s", Neutral, func(s *record.Summary) *float64 { return f64(s.Results.ElapsedTime) }},
	{"Results", "results.mean_ttft_ms", "Mean TTFT", "ms", Lower, func(s *record.Summary) *float64 { return measured(s, s.Results.MeanTTFTms) }},
	{"Results", "results.mean_decode_speed", "Mean decode speed", "tok/s", Higher, func(s *record.Summary) *float64 { return measured(s, s.Results.MeanDecodeSpeed) }},
	{"Results", "results.mean_request_latency_ms", "Mean request latency", "ms", Lower, func(s *record.Summary) *float64 { return measured(s, s.Results.MeanRequestLatencyMs) }},
	{"Results", "results.input_throughput", "Input throughput", "tok/s", Higher, func(s *record.Summary) *float64 { return f64(s.Results.InputThroughput) }},
	{"Results", "results.output_throughput", "Output throughput", "tok/s", Higher, func(s *record.Summary) *float64 { return f64(s.Results.OutputThroughput) }},
	{"Results", "results.total_input_tokens", "Total input tokens", "", Neutral, func(s *record.Summary) *float64 { return fint(s.Results.TotalInputTokens) }},
	{"Results", "results.total_output_tokens", "Total output tokens", "", Neutral, func(s *record.Summary) *float64 { return fint(s.Results.TotalOutputTokens) }},
	{"Results", "results.p50_ttft_ms", "P50 TTFT", "ms", Lower, func(s *record.Summary) *float64 { return measured(s, s.Results.P50TTFTms) }},
	{"Results", "results.p90_ttft_ms", "P90 TTFT", "ms", Lower, func(s *record.Summary) *float64 { return measured(s, s.Results.P90TTFTms) }},
	{"Results", "results.p99_ttft_ms", "P99 TTFT", "ms", Lower, func(s *record.Summary) *float64 { return measured(s, s.Results.P99TTFTms) }},
	{"Results", "results.p50_decode_speed", "P50 decode speed", "tok/s", Higher, func(s *record.Summary) *float64 { return measured(s, s.Results.P50DecodeSpeed) }},
	{"Results", "results.p90_decode_speed", "P90 decode speed", "tok/s", Higher, func(s *record.Summary) *float64 { return measured(s, s.Results.P90DecodeSpeed) }},
	{"Results", "results.p99_decode_speed", "P99 decode speed", "tok/s", Higher, func(s *record.Summary) *float64 { return measured(s, s.Results.P99DecodeSpeed) }},
	{"Results", "results.p50_request_latency_ms", "P50 request latency", "ms", Lower, func(s *record.Summary) *float64 { return measured(s, s.Results.P50RequestLatencyMs) }},
	{"Results", "results.p90_request_latency_ms", "P90 request latency", "ms", Lower, func(s *record.Summary) *float64 { return measured(s, s.Results.P90RequestLatencyMs) }},
	{"Results", "results.p99_request_latency_ms", "P99 request latency", "ms", Lower, func(s *record.Summary) *float64 { return measured(s, s.Results.P99RequestLatencyMs) }},

	{"Cache", "cache.cold", "Cold", "", Neutral, func(s *record.Summary) *float64 { return fint(s.Cache.Cold) }},
	{"Cache", "cache.reused", "Reused", "", Neutral, func(s *record.Summary) *float64 { return fint(s.Cache.Reused) }},
	{"Cache", "cache.unverified", "Unverified", "", Lower, func(s *record.Summary) *float64 { return fint(s.Cache.Unverified) }},
	{"Cache", "cache.prompt_tokens", "Prompt tokens", "", Neutral, func(s *record.Summary) *float64 { return fint(s.Cache.PromptTokens) }},
	{"Cache", "cache.cached_tokens", "Cached tokens", "", Neutral, func(s *record.Summary) *float64 { return fint(s.Cache.CachedTokens) }},
	{"Cache", "cache.hit_ratio", "Hit ratio", "%", Higher, func(s *record.Summary) *float64 { return pct(s.Cache.HitRatio) }},

	{"Latency", "latency.itl_ms.mean", "ITL mean", "ms", Lower, func(s *record.Summary) *float64 { return s.Latency.ITLms.Mean }},
	{"Latency", "latency.itl_ms.p50", "ITL p50", "ms", Lower, func(s *record.Summary) *float64 { return s.Latency.ITLms.P50 }},
	{"Latency", "latency.itl_ms.p95", "ITL p95", "ms", Lower, func(s *record.Summary) *float64 { return s.Latency.ITLms.P95 }},
	{"Latency", "latency.round_gap_ms.mean", "Round gap mean", "ms", Lower, func(s *record.Summary) *float64 { return s.Latency.RoundGapMs.Mean }},
	{"Latency", "latency.round_gap_ms.p50", "Round gap p50", "ms", Lower, func(s *record.Summary) *float64 { return s.Latency.RoundGapMs.P50 }},
	{"Latency", "latency.round_gap_ms.p95", "Round gap p95", "ms", Lower, func(s *record.Summary) *float64 { return s.Latency.RoundGapMs.P95 }},
	{"Latency", "latency.tokens_per_chunk_mean", "Tokens per chunk", "", Neutral, func(s *record.Summary) *float64 { return s.Latency.TokensPerChunkMean }},
	{"Latency", "latency.prefill_tps.mean", "Prefill mean (cold)", "tok/s", Higher, func(s *record.Summary) *float64 { return s.Latency.PrefillTPS.Mean }},
	{"Latency", "latency.prefill_tps.p50", "Prefill p50 (cold)", "tok/s", Higher, func(s *record.Summary) *float64 { return s.Latency.PrefillTPS.P50 }},
	{"Latency", "latency.aggregate_prefill_tps", "Aggregate prefill", "tok/s", Higher, func(s *record.Summary) *float64 { return s.Latency.AggregatePrefillTPS }},

	{"Client", "client.cpu_seconds", "Client CPU", "s", Lower, func(s *record.Summary) *float64 { return f64(s.Client.CPUSeconds) }},
	{"Client", "client.max_dispatch_lag_ms", "Max dispatch lag", "ms", Lower, func(s *record.Summary) *float64 { return s.Client.MaxDispatchLagMs }},
	{"Client", "client.p99_dispatch_lag_ms", "P99 dispatch lag", "ms", Lower, func(s *record.Summary) *float64 { return s.Client.P99DispatchLagMs }},
	{"Client", "client.timing_error_p99_ms", "Timing error p99", "ms", Lower, func(s *record.Summary) *float64 { return s.Client.TimingErrorP99Ms }},

	{"Load", "load.target_rate", "Target rate", "req/s", Neutral, func(s *record.Summary) *float64 {
		return loadFig(s, func(b *load.Block) *float64 { return b.TargetRate })
	}},
	{"Load", "load.achieved_rate", "Achieved rate", "req/s", Higher, func(s *record.Summary) *float64 {
		return loadFig(s, func(b *load.Block) *float64 { return b.AchievedRate })
	}},
	{"Load", "load.mean_concurrency", "Mean concurrency", "", Neutral, func(s *record.Summary) *float64 {
		return loadFig(s, func(b *load.Block) *float64 { return b.MeanConcurrency })
	}},
	{"Load", "load.schedule_lag_p99_ms", "P99 schedule lag", "ms", Lower, func(s *record.Summary) *float64 {
		return loadFig(s, func(b *load.Block) *float64 { return b.ScheduleLagP99ms })
	}},
	{"Load", "load.delivered", "Load delivered (1 = yes)", "", Higher, func(s *record.Summary) *float64 {
		if s.Load == nil {
			return nil
		}
		if s.Load.Delivered {
			return f64(1)
		}
		return f64(0)
	}},

	{"Goodput", "goodput.good_fraction", "Good fraction", "%", Higher, func(s *record.Summary) *float64 {
		if s.Goodput == nil {
			return nil
		}
		return pct(s.Goodput.GoodFraction)
	}},
	{"Goodput", "goodput.goodput_rps", "Goodput", "req/s", Higher, func(s *record.Summary) *float64 {
		if s.Goodput == nil {
			return nil
		}
		return s.Goodput.GoodputRPS
	}},
}

// loadFig reads a figure of the load block, nil without one.
func loadFig(s *record.Summary, get func(*load.Block) *float64) *float64 {
	if s.Load == nil {
		return nil
	}
	return get(s.Load)
}

// measured is a results figure, nil when no request succeeded: older
// summaries wrote 0 there, which is no measurement.
func measured(s *record.Summary, v *float64) *float64 {
	if s.Results.SuccessfulRequests == 0 {
		return nil
	}
	return v
}

func pct(p *float64) *float64 {
	if p == nil {
		return nil
	}
	return f64(*p * 100)
}

// Compare sets run B against run A: every figure with its relative delta
// and verdict, the unverified reasons of either run, and the config keys
// whose values differ.
func Compare(a, b *Detail) *Comparison {
	fs := figures(a.Summary, b.Summary)
	for i := range fs {
		if unknownIncomplete[fs[i].Key] && (!a.Run.Complete || !b.Run.Complete) {
			if !a.Run.Complete {
				fs[i].A = nil
			}
			if !b.Run.Complete {
				fs[i].B = nil
			}
			fs[i] = figure(fs[i].Section, fs[i].Key, fs[i].Label, fs[i].Unit, fs[i].Direction, fs[i].A, fs[i].B)
		}
	}
	return &Comparison{
		A: a, B: b,
		Figures: fs,
		Config:  diffConfig(configOf(a), configOf(b)),
	}
}

// unknownIncomplete are figures a run without a summary cannot know: the
// record holds no trace of them.
var unknownIncomplete = map[string]bool{"client.cpu_seconds": true}

// Figures lists every figure of one run, in A (B and Delta nil): the rows
// a run's detail shows, labelled as in a comparison.
func Figures(d *Detail) []Figure {
	fs := figures(d.Summary, d.Summary)
	for i := range fs {
		fs[i].B, fs[i].Delta, fs[i].Verdict = nil, nil, Same
		if !d.Run.Complete && unknownIncomplete[fs[i].Key] {
			fs[i].A = nil
		}
	}
	return fs
}

func figures(a, b *record.Summary) []Figure {
	var out []Figure
	for _, d := range figureDefs {
		out = append(out, figure(d.section, d.key, d.label, d.unit, d.dir, d.get(a), d.get(b)))
		if d.key != "cache.unverified" {
			continue
		}
		// The unverified reasons, after the count they explain.
		reasons := map[string]bool{}
		for _, s := range []*record.Summary{a, b} {
			for k := range s.Cache.UnverifiedReasons {
				reasons[k] = true
			}
		}
		keys := make([]string, 0, len(reasons))
		for k := range reasons {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, figure("Cache", "cache.unverified_reasons."+k, "  "+k, "", Lower,
				fint(a.Cache.UnverifiedReasons[k]), fint(b.Cache.UnverifiedReasons[k])))
		}
	}
	return out
}

func figure(section, key, label, unit string, dir Direction, a, b *float64) Figure {
	f := Figure{Section: section, Key: key, Label: label, Unit: unit, Direction: dir, A: a, B: b}
	if a == nil || b == nil {
		f.Verdict = Unknown
		if a == nil && b == nil {
			f.Verdict = Same
		}
		return f
	}
	switch {
	case *a == *b:
		f.Delta = f64(0)
	case *a != 0:
		f.Delta = f64((*b - *a) / math.Abs(*a))
	}
	switch {
	case *a == *b || (f.Delta != nil && negligible(*f.Delta)):
		// A change too small to show at the delta's precision is no
		// verdict: "-0.0% better" would read as a contradiction.
		f.Verdict = Same
	case dir == Neutral:
		f.Verdict = Differs
	case (dir == Lower) == (*b < *a):
		f.Verdict = Better
	default:
		f.Verdict = Worse
	}
	return f
}

// orderedPair is one key of a JSON object in file order.
type orderedPair struct {
	key   string
	value string // compact JSON
}

// configOf is the run's settings: the summary's config block (LMCache's
// fields, engine URL included) then any key of config.json it lacks.
// output_dir is left out: it is the run's own folder.
func configOf(d *Detail) []orderedPair {
	var out []orderedPair
	seen := map[string]bool{"output_dir": true}
	add := func(ps []orderedPair) {
		for _, p := range ps {
			if slices.Contains(config.URLKeys, p.key) {
				// A record written before credentials were split off.
				p.value = secret.Strip(p.value)
			}
			if !seen[p.key] {
				seen[p.key] = true
				out = append(out, p)
			}
		}
	}
	if d.Summary != nil {
		add(objectPairs(d.Summary.Config))
	}
	add(objectPairs(d.Config))
	return out
}

// objectPairs reads a JSON object's keys in order; nil for anything else.
func objectPairs(v any) []orderedPair {
	var b []byte
	switch t := v.(type) {
	case nil:
		return nil
	case json.RawMessage:
		b = t
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([]orderedPair, 0, len(keys))
		for _, k := range keys {
			vb, _ := json.Marshal(t[k])
			out = append(out, orderedPair{k, string(vb)})
		}
		return out
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return nil
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var out []orderedPair
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		k, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return out
		}
		var c bytes.Buffer
		if json.Compact(&c, raw) != nil {
			c.Reset()
			c.Write(raw)
		}
		out = append(out, orderedPair{k, c.String()})
	}
	return out
}

func diffConfig(a, b []orderedPair) []ConfigDiff {
	bm := make(map[string]string, len(b))
	for _, p := range b {
		bm[p.key] = p.value
	}
	am := make(map[string]bool, len(a))
	var out []ConfigDiff
	for _, p := range a {
		am[p.key] = true
		if bv, ok := bm[p.key]; !ok || !sameJSON(bv, p.value) {
			out = append(out, ConfigDiff{Key: p.key, A: display(p.value), B: display(bv)})
		}
	}
	for _, p := range b {
		if !am[p.key] {
			out = append(out, ConfigDiff{Key: p.key, A: display(""), B: display(p.value)})
		}
	}
	return out
}

// display shows a JSON value for reading, on one line: strings unquoted
// (an empty one as ""), "-" for an absent key.
func display(v string) string {
	if v == "" {
		return "-"
	}
	var s string
	if json.Unmarshal([]byte(v), &s) == nil && s != "" {
		return textclean.Line(s)
	}
	return v
}

// sameJSON compares two JSON texts by value, so 1 and 1.0 are equal.
func sameJSON(a, b string) bool {
	if a == b {
		return true
	}
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// FormatValue renders a figure's value with its unit's precision; "n/a"
// for null (a figure the run could not measure).
func FormatValue(v *float64, unit string) string {
	if v == nil {
		return "n/a"
	}
	x := *v
	switch {
	case unit == "" && x == math.Trunc(x) && math.Abs(x) < 1e15:
		return fmt.Sprintf("%.0f", x)
	case unit == "%":
		return fmt.Sprintf("%.1f%%", x)
	}
	return fmt.Sprintf("%.2f", x)
}

// FormatDelta renders a relative delta as a signed percentage; "n/a"
// when a side is undefined, "-" when A is 0.
func FormatDelta(f Figure) string {
	switch {
	case f.Delta != nil && negligible(*f.Delta):
		return "0.0%"
	case f.Delta != nil:
		return fmt.Sprintf("%+.1f%%", *f.Delta*100)
	case f.A != nil && f.B != nil:
		return "new" // A is 0, B is not
	case f.A == nil && f.B == nil:
		return "-"
	}
	return "n/a"
}

// negligible reports whether a relative delta shows as 0.0% (one
// decimal of a percent): it is printed unsigned and judged the same.
func negligible(d float64) bool { return math.Abs(d) < 0.0005 }

// VerdictMark is a plain-text mark for a verdict, so better and worse
// stay readable without colour.
func VerdictMark(v Verdict) string {
	switch v {
	case Better:
		return "better"
	case Worse:
		return "worse"
	}
	return ""
}

// WriteText prints the comparison as plain text: a header naming both
// runs, one table per section (figure, A, B, delta, verdict), then the
// config keys that differ.
func (c *Comparison) WriteText(w io.Writer) error {
	var b strings.Builder
	c.writeHeader(&b)
	c.writeTables(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHeader names both runs with their status and what did not deliver
// its load.
func (c *Comparison) writeHeader(b *strings.Builder) {
	fmt.Fprintf(b, "A: %s%s\n", c.A.Run.ID, statusNote(&c.A.Run))
	fmt.Fprintf(b, "B: %s%s\n", c.B.Run.ID, statusNote(&c.B.Run))
	for _, side := range []struct {
		name string
		r    *Run
	}{{"A", &c.A.Run}, {"B", &c.B.Run}} {
		for _, reason := range side.r.DegradedReasons {
			fmt.Fprintf(b, "  %s did not deliver its load: %s\n", side.name, reason)
		}
	}
}

// writeTables prints one table per section (figure, A, B, delta,
// verdict), then the config keys that differ.
func (c *Comparison) writeTables(b *strings.Builder) {
	var rows [][]string
	flush := func() {
		writeTable(b, rows, []bool{false, true, true, true, false})
		rows = nil
	}
	section := ""
	for _, f := range c.Figures {
		if f.Section != section {
			flush()
			section = f.Section
			fmt.Fprintf(b, "\n%s\n", section)
			rows = append(rows, []string{"", "A", "B", "delta", ""})
		}
		rows = append(rows, []string{f.LabelWithUnit(), FormatValue(f.A, f.Unit), FormatValue(f.B, f.Unit), FormatDelta(f), VerdictMark(f.Verdict)})
	}
	flush()
	if c.Quality != nil {
		c.Quality.writeText(b)
	}
	b.WriteString("\nConfig differences\n")
	if len(c.Config) == 0 {
		b.WriteString("  none\n")
	} else {
		rows = [][]string{{"key", "A", "B"}}
		for _, d := range c.Config {
			rows = append(rows, []string{d.Key, d.A, d.B})
		}
		writeTable(b, rows, []bool{false, false, false})
	}
}

// LabelWithUnit is the label with its unit in brackets (none for counts
// and percentages, whose values carry their own).
func (f Figure) LabelWithUnit() string {
	if f.Unit == "" || f.Unit == "%" {
		return f.Label
	}
	return f.Label + " (" + f.Unit + ")"
}

// writeTable prints rows in columns two spaces apart, indented by two;
// right[i] aligns column i to the right. Trailing spaces are trimmed.
func writeTable(b *strings.Builder, rows [][]string, right []bool) {
	WriteColumns(b, rows, ColumnWidths(rows, len(right)), right)
}

// ColumnWidths is the width in runes of each of n columns: its widest
// cell.
func ColumnWidths(rows [][]string, n int) []int {
	widths := make([]int, n)
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	return widths
}

// WriteColumns prints rows in columns of the given widths, two spaces
// apart and indented by two; right[i] aligns column i to the right.
// Trailing spaces are trimmed.
func WriteColumns(b *strings.Builder, rows [][]string, widths []int, right []bool) {
	for _, r := range rows {
		var line strings.Builder
		line.WriteString("  ")
		for i, c := range r {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", widths[i]-len([]rune(c)))
			if right[i] {
				line.WriteString(pad + c)
			} else {
				line.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
}

func statusNote(r *Run) string {
	var notes []string
	if s := r.Status(); s != StatusOK {
		notes = append(notes, string(s))
	}
	if n := r.ShardNote(); n != "" {
		notes = append(notes, "merged from "+n)
	}
	if n := r.LoadNote(); n != "" {
		notes = append(notes, n)
	}
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, ", ") + ")"
}

// CompareNamed resolves two runs named by id (in runsDir) or path, reads
// them and compares B against A.
func CompareNamed(runsDir, a, b string) (*Comparison, error) {
	var ds [2]*Detail
	for i, name := range []string{a, b} {
		dir, err := Resolve(runsDir, name)
		if err != nil {
			return nil, err
		}
		if ds[i], err = Load(dir); err != nil {
			return nil, err
		}
	}
	c := Compare(ds[0], ds[1])
	c.Quality = compareQuality(ds[0], ds[1], readRAG(ds[0]), readRAG(ds[1]))
	return c, nil
}
