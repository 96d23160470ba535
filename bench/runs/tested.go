package runs

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/internal/stat"
)

// A comparison that knows noise (spec/stats.md): per metric, and per
// cache state for the latencies, A, B, the delta with its 95% bootstrap
// interval, a Mann-Whitney p-value and a word. Runs are compared request
// by request; series (and a run against a series) run by run.

// DefaultAlpha is the significance level when --alpha is not given.
const DefaultAlpha = 0.05

// MinRuns is the fewest runs a side of a series comparison needs for a
// test.
const MinRuns = 5

// Words of a row.
const (
	WordBetter = "better"
	WordWorse  = "worse"
	WordSame   = "~"
	WordNA     = "n/a"
)

// Subject is one side of a comparison: a run or a series.
type Subject struct {
	ID, Dir string
	// A run: its detail and samples. A series: its record.
	Detail  *Detail
	Samples *Samples
	Series  *record.SeriesRecord
}

// IsSeries says the subject is a series.
func (s *Subject) IsSeries() bool { return s.Series != nil }

// Describe is the subject in a few words: "series of 5 runs" or "run".
func (s *Subject) Describe() string {
	if s.Series == nil {
		return "run"
	}
	n := len(s.Series.Runs)
	if n == 1 {
		return "series of 1 run"
	}
	return fmt.Sprintf("series of %d runs", n)
}

// OpenSubject resolves name (an id or a path) as a series or a run and
// reads it: a run's summary and its requests, a series' series.json.
func OpenSubject(ctx context.Context, runsDir, name string) (*Subject, error) {
	dir, err := Resolve(runsDir, name)
	if err != nil {
		// Not a run (by id, prefix or path): a series, or the run error.
		sdir, ok := ResolveSeries(runsDir, name)
		if !ok {
			return nil, err
		}
		f, serr := record.ReadSeriesRecord(sdir)
		if serr != nil {
			return nil, serr
		}
		return &Subject{ID: cleanID(sdir), Dir: sdir, Series: f}, nil
	}
	d, err := Load(dir)
	if err != nil {
		return nil, err
	}
	s, err := ReadSamples(ctx, dir)
	if err != nil {
		return nil, err
	}
	return &Subject{ID: d.Run.ID, Dir: dir, Detail: d, Samples: s}, nil
}

// runValues are the subject's values of key, one per run.
func (s *Subject) runValues(key string) []float64 {
	var out []float64
	if s.Series == nil {
		m, state := splitKey(key)
		if v := s.Samples.Value(m, state, s.Detail.Summary); v != nil {
			out = append(out, *v)
		}
		return out
	}
	for i := range s.Series.Runs {
		if v := s.Series.Runs[i].Get(key); v != nil && !math.IsNaN(*v) && !math.IsInf(*v, 0) {
			out = append(out, *v)
		}
	}
	return out
}

func splitKey(key string) (Metric, string) {
	name, state, _ := strings.Cut(key, ":")
	m, _ := LookupMetric(name)
	return m, state
}

// Row is one compared metric.
type Row struct {
	Metric string
	State  string // "" for every request
	A, B   *float64
	// Delta is 100 (B-A)/A in "%", or 100 (B-A) in "pp" (shares).
	Delta *float64
	// DeltaUnit is "%" or "pp".
	DeltaUnit string
	CI95      *[2]float64
	P         *float64
	Word      string
	// Note says why a row has no test or no value.
	Note string
	// NA and NB are the samples of each side: requests or runs.
	NA, NB int
	m      Metric
}

// Key is the row's metric name with its state: ttft_p50:cold.
func (r *Row) Key() string { return MetricKey(r.Metric, r.State) }

// Def is the row's metric.
func (r *Row) Def() Metric { return r.m }

// Tested is B set against A with a test per metric.
type Tested struct {
	A, B *Subject
	// ByRuns says the samples are runs (a series on either side), not
	// requests.
	ByRuns bool
	Alpha  float64
	Rows   []Row
	// CacheMoved says the hit ratios differ significantly: CacheNote says
	// by how much, and the rows are ordered hit ratio, per state, then
	// overall.
	CacheMoved bool
	CacheNote  string
	Gates      []GateResult
}

// CompareTested sets b against a.
func CompareTested(a, b *Subject, alpha float64) *Tested {
	t := &Tested{A: a, B: b, Alpha: alpha, ByRuns: a.IsSeries() || b.IsSeries()}
	var overall, perState []Row
	for _, st := range States {
		for _, m := range Metrics {
			if st != "" && m.Kind != Latency {
				continue
			}
			var r Row
			if t.ByRuns {
				r = t.byRuns(m, st)
			} else {
				r = t.byRequests(m, st)
			}
			if st == "" {
				overall = append(overall, r)
			} else if r.NA+r.NB > 0 {
				perState = append(perState, r)
			}
		}
	}
	for i := range perState {
		r := &perState[i]
		o := overall[slices.IndexFunc(overall, func(o Row) bool { return o.Metric == r.Metric })]
		if r.Note == "" && r.NA == o.NA && r.NB == o.NB && sameValue(r.A, o.A) && sameValue(r.B, o.B) {
			r.Note = "every request is " + r.State
		}
	}
	hit := slices.IndexFunc(overall, func(r Row) bool { return r.Metric == "hit_ratio" })
	if h := overall[hit]; h.Word == WordBetter || h.Word == WordWorse {
		t.CacheMoved = true
		more := "more"
		if *h.Delta < 0 {
			more = "less"
		}
		t.CacheNote = fmt.Sprintf("The cache served %.1f pp %s of the prompt tokens in B (A %.1f%%, B %.1f%%): read the latency rows by cache state.",
			math.Abs(*h.Delta), more, *h.A*100, *h.B*100)
		t.Rows = append(t.Rows, h)
		t.Rows = append(t.Rows, perState...)
		for i, r := range overall {
			if i == hit {
				continue
			}
			if r.m.Kind == Latency && r.Note == "" {
				r.Note = "mixes cache states"
			}
			t.Rows = append(t.Rows, r)
		}
		return t
	}
	t.Rows = append(overall, perState...)
	return t
}

// byRequests is a row of two runs: the samples are their requests.
func (t *Tested) byRequests(m Metric, state string) Row {
	a, b := t.A.Samples, t.B.Samples
	r := Row{Metric: m.Key, State: state, m: m, DeltaUnit: "%"}
	if m.Points() {
		r.DeltaUnit = "pp"
	}
	r.A = a.Value(m, state, t.A.Detail.Summary)
	r.B = b.Value(m, state, t.B.Detail.Summary)
	rnd := stat.NewRand(r.Key())
	switch m.Kind {
	case Latency:
		xa, xb := a.latency(m, state), b.latency(m, state)
		r.NA, r.NB = len(xa), len(xb)
		if !r.values(t) {
			return r
		}
		ba, bb := stat.NewBootPercentile(xa, m.p, rnd), stat.NewBootPercentile(xb, m.p, rnd)
		r.interval(func() float64 {
			da := ba.Draw()
			if da == 0 {
				return math.NaN()
			}
			return 100 * (bb.Draw()/da - 1)
		})
		if u, ok := stat.MannWhitney(xa, xb); ok {
			r.P = f64(u.P)
		}
	case Throughput:
		r.NA, r.NB = min(a.Measured, 1), min(b.Measured, 1)
		if !r.values(t) {
			return r
		}
		r.Note = "one value per run: no test (compare series, --repeat)"
	case HitRatio:
		r.NA, r.NB = len(a.prompt), len(b.prompt)
		if !r.values(t) {
			return r
		}
		ba, bb := stat.NewBootRatio(a.cached, a.prompt, rnd), stat.NewBootRatio(b.cached, b.prompt, rnd)
		draws := r.interval(func() float64 { return 100 * (bb.Draw() - ba.Draw()) })
		r.P = f64(bootP(draws))
	case ErrorRate:
		r.NA, r.NB = a.Measured, b.Measured
		if !r.values(t) {
			return r
		}
		ba, bb := stat.NewBootProportion(a.Failed, a.Measured, rnd), stat.NewBootProportion(b.Failed, b.Measured, rnd)
		r.interval(func() float64 { return 100 * (bb.Draw() - ba.Draw()) })
		if u, ok := stat.MannWhitney(outcomes(a), outcomes(b)); ok {
			r.P = f64(u.P)
		}
	}
	r.judge(t.Alpha)
	return r
}

// outcomes are a run's measured requests as 1 (failed) and 0.
func outcomes(s *Samples) []float64 {
	out := make([]float64, s.Measured)
	for i := range s.Failed {
		out[i] = 1
	}
	return out
}

// byRuns is a row where a series is on either side: the samples are
// the runs' values (a run is a series of one).
func (t *Tested) byRuns(m Metric, state string) Row {
	key := MetricKey(m.Key, state)
	r := Row{Metric: m.Key, State: state, m: m, DeltaUnit: "%"}
	if m.Points() {
		r.DeltaUnit = "pp"
	}
	xa, xb := t.A.runValues(key), t.B.runValues(key)
	slices.Sort(xa)
	slices.Sort(xb)
	r.NA, r.NB = len(xa), len(xb)
	if len(xa) > 0 {
		r.A = f64(stat.Percentile(xa, 50))
	}
	if len(xb) > 0 {
		r.B = f64(stat.Percentile(xb, 50))
	}
	if !r.values(t) {
		return r
	}
	rnd := stat.NewRand(key)
	ba, bb := stat.NewBootPercentile(xa, 50, rnd), stat.NewBootPercentile(xb, 50, rnd)
	if r.DeltaUnit == "pp" {
		r.interval(func() float64 { return 100 * (bb.Draw() - ba.Draw()) })
	} else {
		r.interval(func() float64 {
			da := ba.Draw()
			if da == 0 {
				return math.NaN()
			}
			return 100 * (bb.Draw()/da - 1)
		})
	}
	if len(xa) < MinRuns || len(xb) < MinRuns {
		r.Note = fmt.Sprintf("too few runs for a test (%d and %d; take at least %d a side)", len(xa), len(xb), MinRuns)
		r.Word = WordSame
		return r
	}
	if u, ok := stat.MannWhitney(xa, xb); ok {
		r.P = f64(u.P)
	}
	r.judge(t.Alpha)
	return r
}

// values sets the delta from A and B; false (the row n/a, with a note)
// when a side has no value.
func (r *Row) values(t *Tested) bool {
	if r.A == nil || r.B == nil {
		r.Word = WordNA
		what := "no value"
		if r.State != "" {
			what = "no " + r.State + " requests"
		}
		switch {
		case r.A == nil && r.B == nil:
			r.Note = what + " in A or B"
		case r.A == nil:
			r.Note = what + " in A"
		default:
			r.Note = what + " in B"
		}
		return false
	}
	switch {
	case r.DeltaUnit == "pp":
		r.Delta = f64(100 * (*r.B - *r.A))
	case *r.A != 0:
		r.Delta = f64(100 * (*r.B - *r.A) / math.Abs(*r.A))
	case *r.B == 0:
		r.Delta = f64(0)
	default:
		// A is 0 and B is not: no relative change to speak of.
		r.Word = WordNA
		r.Note = "A is 0: no relative change"
		return false
	}
	r.Word = WordSame
	return true
}

// interval draws the delta stat.Resamples times (NaN draws dropped) and
// keeps its 95% interval; it returns the draws.
func (r *Row) interval(draw func() float64) []float64 {
	draws := make([]float64, 0, stat.Resamples)
	for range stat.Resamples {
		if d := draw(); !math.IsNaN(d) && !math.IsInf(d, 0) {
			draws = append(draws, d)
		}
	}
	if ci, ok := stat.Interval95(slices.Clone(draws)); ok {
		r.CI95 = &ci
	}
	return draws
}

// bootP is the two-sided bootstrap p-value of a delta: twice the share
// of draws on the far side of 0, at most 1.
func bootP(draws []float64) float64 {
	if len(draws) == 0 {
		return 1
	}
	le, ge := 0, 0
	for _, d := range draws {
		if d <= 0 {
			le++
		}
		if d >= 0 {
			ge++
		}
	}
	return min(1, 2*float64(min(le, ge))/float64(len(draws)))
}

// judge sets the word: better or worse only when p < alpha and the
// interval excludes 0.
func (r *Row) judge(alpha float64) {
	r.Word = WordSame
	if r.P == nil || r.Delta == nil || r.CI95 == nil || *r.P >= alpha || *r.Delta == 0 {
		return
	}
	if r.CI95[0] <= 0 && r.CI95[1] >= 0 {
		return
	}
	if (*r.Delta > 0) == r.m.Lower {
		r.Word = WordWorse
	} else {
		r.Word = WordBetter
	}
}

// Method says how the rows were tested, in one line.
func (t *Tested) Method() string {
	if t.ByRuns {
		return fmt.Sprintf("Compared run by run (a run's value is one sample; a series' row shows its median): 95%% intervals of the difference of medians from %d bootstrap resamples, p from Mann-Whitney U over the runs; alpha %g.",
			stat.Resamples, t.Alpha)
	}
	return fmt.Sprintf("Compared request by request: 95%% intervals from %d bootstrap resamples of each run, p from Mann-Whitney U over the requests; alpha %g.",
		stat.Resamples, t.Alpha)
}

func sameValue(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
