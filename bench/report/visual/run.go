package visual

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/kvbench/kvbench/bench/metrics"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/stats"
)

// MetricsFile is the engine's Prometheus samples of a run (spec/record.md).
const MetricsFile = "metrics.jsonl"

// Cache states in the order every chart and legend lists them.
var cacheStates = []string{sender.StateCold, sender.StateReused, sender.StateUnverified}

func stateIndex(s string) uint8 {
	switch s {
	case sender.StateCold:
		return 0
	case sender.StateReused:
		return 1
	}
	return 2
}

// request is the part of one measured request the charts need; times are
// seconds since the run's first measured submit. NaN stands for unknown.
type request struct {
	submit, first, finish float32
	ttftMs, itlMs         float32
	outTokens             int32
	prompt, cached        int32 // -1 when not a valid count
	expected, expectedLRU int32 // -1 when absent (not a trace replay)
	state                 uint8 // index in cacheStates
	ok                    bool
}

// hitSample is the engine's prefix-cache hit rate over one scrape
// interval, at the interval's end (seconds since the run's first measured
// submit).
type hitSample struct{ t, rate float64 }

// Run is one run folder as a report shows it.
type Run struct {
	ID, Dir string

	Name, Workload, Model, EngineURL string
	ToolVersion                      string
	StartedAt, FinishedAt            string
	Interrupted, Complete            bool
	ExitCode                         int
	// Delivered is the summary's load.delivered (nil when the run has no
	// load block).
	Delivered       *bool
	DegradedReasons []string
	Overloaded      bool
	OverloadReasons []string
	MergedFrom      []string
	// Torn counts requests.jsonl lines skipped as unreadable.
	Torn int

	summary *node        // bench_summary.json; nil when absent or not an object
	detail  *runs.Detail // the figures a comparison sets side by side
	reqs    []request
	// warmCold are the warmup's requests that found nothing cached, with
	// a TTFT (submit times before the first measured one are negative):
	// the headline's cold baseline when too few measured requests were
	// cold.
	warmCold []request
	hits     []hitSample
	metrics  bool // metrics.jsonl exists with at least one sample
	trace    bool // some request carries expected_cached_tokens
	start    float64
}

// Label is how a run is named in legends: its name, else its id.
func (r *Run) Label() string {
	if r.Name != "" {
		return r.Name
	}
	return r.ID
}

// LoadRun reads one run folder. A folder without a summary (a crash) is
// summarised from its requests.jsonl and marked incomplete.
func LoadRun(dir string) (*Run, error) {
	r := &Run{ID: runs.FolderID(dir), Dir: dir}
	for _, f := range []string{record.SummaryFile, record.RequestsFile, record.ConfigFile, MetricsFile} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err == nil && !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("run %s: %s is %w", r.ID, f, record.ErrNotRegular)
		}
	}
	if b, err := record.ReadJSON(filepath.Join(dir, record.SummaryFile), maxJSONFile); err == nil {
		if n, err := parseOrdered(b); err == nil && n.kind == 'o' {
			r.summary = n
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("run %s: %w", r.ID, err)
	}
	d, err := runs.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", r.ID, err)
	}
	r.detail = d
	r.header()
	if err := r.readRequests(); err != nil {
		return nil, err
	}
	if err := r.readMetrics(); err != nil {
		return nil, err
	}
	return r, nil
}

// header fills the header fields from the summary (or, for a run without
// one, from what runs.Load worked out).
func (r *Run) header() {
	d := r.detail
	r.Name, r.Workload, r.Model = d.Run.Name, d.Run.Workload, d.Run.Model
	r.EngineURL = StripCredentials(d.Run.EngineURL)
	r.Interrupted, r.Complete, r.ExitCode = d.Run.Interrupted, d.Run.Complete, d.Run.ExitCode
	if d.Summary != nil {
		r.ToolVersion = d.Summary.Tool.Version
		r.StartedAt, r.FinishedAt = d.Summary.Run.StartedAt, d.Summary.Run.FinishedAt
	}
	s := r.summary
	if s == nil {
		return
	}
	if v, ok := s.get("load", "delivered").boolean(); ok {
		r.Delivered = &v
	}
	r.DegradedReasons = s.get("load", "degraded_reasons").strings()
	r.Overloaded, _ = s.get("client", "overloaded").boolean()
	r.OverloadReasons = s.get("client", "overload_reasons").strings()
	r.MergedFrom = s.get("run", "merged_from").strings()
}

// StripCredentials removes the user-info part and the query of a URL
// (spec/cli.md: `http://user:pass@host` is shown as `http://host`). Text
// that is not a URL with a host loses whatever stands before an '@'.
func StripCredentials(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		if k := strings.LastIndexByte(raw, '@'); k >= 0 {
			raw = raw[k+1:]
		}
		if k := strings.IndexByte(raw, '?'); k >= 0 {
			raw = raw[:k]
		}
		return raw
	}
	u.User = nil
	u.RawQuery = ""
	u.Fragment = ""
	return u.String()
}

func (r *Run) readRequests() error {
	var all []request
	var abs []float64 // submit times, absolute, of all kept requests
	var warm []request
	var warmAbs []float64
	first := math.Inf(1)
	// Once a few lines are in, the slices are made the size the file
	// suggests, instead of doubling their way there (a 1M-request run
	// would hold up to three times its requests while they grow).
	var size int64
	if fi, err := os.Stat(filepath.Join(r.Dir, record.RequestsFile)); err == nil {
		size = fi.Size()
	}
	var seen int64
	corrupt, err := record.SkimRequests(r.Dir, func(at record.LineAt, l *sender.Result) error {
		if seen += int64(at.Len) + 1; len(all) == 256 && size > seen {
			n := int(float64(size)/float64(seen)*256*1.05) - len(all)
			all, abs = slices.Grow(all, n), slices.Grow(abs, n)
		}
		if l.Phase == sender.PhaseWarmup && l.CacheState == sender.StateCold && l.Successful && l.TTFT != nil && *l.TTFT >= 0 && !math.IsInf(*l.TTFT, 0) {
			warm = append(warm, request{ttftMs: float32(*l.TTFT * 1000), itlMs: nan32, state: 0, ok: true,
				prompt: count(l.PromptTokens), cached: count(l.CachedTokens), expected: -1, expectedLRU: -1})
			warmAbs = append(warmAbs, l.SubmitTime)
		}
		if l.Phase == sender.PhaseWarmup || l.Phase == sender.PhaseReference {
			return nil
		}
		q := request{
			ttftMs: nan32, itlMs: nan32, state: stateIndex(l.CacheState), ok: l.Successful,
			prompt: count(l.PromptTokens), cached: count(l.CachedTokens),
			expected: expected(l, false), expectedLRU: expected(l, true),
		}
		if l.TraceExpectation != nil {
			r.trace = true
		}
		if l.Successful && l.TTFT != nil && *l.TTFT >= 0 && !math.IsInf(*l.TTFT, 0) {
			q.ttftMs = float32(*l.TTFT * 1000)
		}
		if l.ITLMeanMs != nil && *l.ITLMeanMs >= 0 {
			q.itlMs = float32(*l.ITLMeanMs)
		}
		switch {
		case l.CompletionTokens != nil && *l.CompletionTokens > 0:
			q.outTokens = int32(min(int64(*l.CompletionTokens), math.MaxInt32))
		case l.Successful:
			q.outTokens = int32(min(int64(l.Chunks), math.MaxInt32))
		}
		// Times are stored relative to the first submit, found at the end.
		abs = append(abs, l.SubmitTime)
		ft := math.NaN()
		if l.FirstTokenTime != nil {
			ft = *l.FirstTokenTime - l.SubmitTime
		}
		q.first = float32(ft)
		q.finish = float32(l.FinishTime - l.SubmitTime)
		all = append(all, q)
		if l.SubmitTime > 0 && l.SubmitTime < first {
			first = l.SubmitTime
		}
		return nil
	})
	r.Torn = corrupt
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("run %s: %w", r.ID, err)
	}
	if math.IsInf(first, 1) {
		first = 0
	}
	r.start = first
	for i := range all {
		s := abs[i] - first
		all[i].submit = float32(s)
		all[i].first = float32(s) + all[i].first
		all[i].finish = float32(s) + all[i].finish
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].submit < all[j].submit })
	r.reqs = all
	if len(all) == 0 {
		warm = nil // no measured request to set them against
	}
	for i := range warm {
		warm[i].submit = float32(warmAbs[i] - first)
	}
	r.warmCold = warm
	return nil
}

var nan32 = float32(math.NaN())

// count is a valid token count (an integer >= 0) or -1.
func count(p *int) int32 {
	if p == nil || *p < 0 {
		return -1
	}
	return int32(min(int64(*p), math.MaxInt32))
}

// expected is a trace replay's expected cached tokens (the LRU bound
// with lru) as a count, -1 when the line has none.
func expected(l *sender.Result, lru bool) int32 {
	te := l.TraceExpectation
	switch {
	case te == nil:
		return -1
	case lru:
		return count(te.ExpectedCachedTokensLRU)
	}
	return count(&te.ExpectedCachedTokens)
}

// readMetrics turns metrics.jsonl into the engine's hit rate per scrape
// interval, from the first counter pair the scrapes carry.
func (r *Run) readMetrics() error {
	path := filepath.Join(r.Dir, MetricsFile)
	var prev *metrics.Line
	_, err := record.ReadLines(path, func(b []byte) error {
		var l metrics.Line
		if json.Unmarshal(b, &l) != nil || l.Metrics == nil {
			return nil
		}
		r.metrics = true
		if prev != nil {
			if rate, ok := hitRate(prev.Metrics, l.Metrics); ok {
				r.hits = append(r.hits, hitSample{t: l.Time - r.start, rate: rate})
			}
		}
		prev = &l
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("run %s: %w", r.ID, err)
	}
	return nil
}

// hitRate is hits delta over queries delta between two scrapes, for the
// first pair of metrics.HitRatePairs both carry; ok is false when no
// pair is present or nothing was queried in between.
func hitRate(a, b map[string]float64) (float64, bool) {
	for _, p := range metrics.HitRatePairs {
		ha, ok1 := a[p.Hits]
		hb, ok2 := b[p.Hits]
		if !ok1 || !ok2 {
			continue
		}
		var dq float64
		all := true
		for _, q := range p.Queries {
			qa, ok1 := a[q]
			qb, ok2 := b[q]
			if !ok1 || !ok2 {
				all = false
				break
			}
			dq += qb - qa
		}
		if !all {
			continue
		}
		if dq <= 0 {
			return 0, false
		}
		return math.Max(0, math.Min(1, (hb-ha)/dq)), true
	}
	return 0, false
}

// warmBaseline reports whether the run's cold baseline is its warmup's
// cold requests: the headline says so, or (a summary written before
// headlines) fewer than 3 measured requests were cold, as the headline
// would have decided.
func (r *Run) warmBaseline() bool {
	if len(r.warmCold) == 0 {
		return false
	}
	if d := r.detail; d != nil && d.Summary != nil && d.Summary.Headline != nil {
		b := d.Summary.Headline.Baseline
		return b != nil && *b == stats.BaselineWarmupCold
	}
	cold := 0
	for _, q := range r.reqs {
		if q.state == 0 && !math.IsNaN(float64(q.ttftMs)) {
			cold++
		}
	}
	return cold < 3
}
