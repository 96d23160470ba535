package stats

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/bench/sender"
)

// The figures by cache state and vLLM's serving figures
// (spec/record.md, "The headline and the figures by cache state").

// DefaultPercentiles are the serving figures' percentiles when
// --percentiles is not given (vLLM bench serve's default is 99; 50 and
// 90 are what kvbench's own blocks show).
var DefaultPercentiles = []float64{50, 90, 99}

// stateOrder are the cache states of by_cache_state, in their order.
var stateOrder = [...]string{sender.StateCold, sender.StateReused, sender.StateUnverified, "warmup"}

// Dist is a distribution's mean, standard deviation (population, as
// numpy's std in vLLM's bench) and percentiles (linear, as numpy's
// percentile). Every figure is null without a sample.
type Dist struct {
	Mean, Stdev *float64
	// Median is written as "median" (serving) rather than as a
	// percentile; nil otherwise.
	Median      *float64
	medianKey   bool
	Percentiles []Pct
}

// Pct is one percentile of a Dist.
type Pct struct {
	P     float64
	Value *float64
}

// PctKey is a percentile's JSON key: p50, p99, p99.9.
func PctKey(p float64) string { return "p" + strconv.FormatFloat(p, 'f', -1, 64) }

// Get is the value of percentile p, nil when not computed or undefined.
func (d Dist) Get(p float64) *float64 {
	for _, q := range d.Percentiles {
		if q.P == p {
			return q.Value
		}
	}
	return nil
}

// MarshalJSON writes {mean, [median,] stdev, p50, ...} in that order.
func (d Dist) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"mean":`)
	writeOpt(&b, d.Mean)
	if d.medianKey {
		b.WriteString(`,"median":`)
		writeOpt(&b, d.Median)
	}
	b.WriteString(`,"stdev":`)
	writeOpt(&b, d.Stdev)
	for _, q := range d.Percentiles {
		b.WriteString(`,"` + PctKey(q.P) + `":`)
		writeOpt(&b, q.Value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes, so a summary read back
// from disk keeps its percentiles (in the file's order) and its median.
// A value that is not a number or null is an error.
func (d *Dist) UnmarshalJSON(b []byte) error {
	*d = Dist{}
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("a distribution is an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		k, _ := tok.(string)
		var v *float64
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		switch {
		case k == "mean":
			d.Mean = v
		case k == "stdev":
			d.Stdev = v
		case k == "median":
			d.Median, d.medianKey = v, true
		case strings.HasPrefix(k, "p"):
			p, err := strconv.ParseFloat(k[1:], 64)
			if err != nil || !(p > 0 && p <= 100) {
				continue // a key of a later version
			}
			d.Percentiles = append(d.Percentiles, Pct{P: p, Value: v})
		}
	}
	_, err := dec.Token()
	return err
}

func writeOpt(b *bytes.Buffer, v *float64) {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		b.WriteString("null")
		return
	}
	b.WriteString(strconv.FormatFloat(*v, 'g', -1, 64))
}

// distOf summarises samples (reordered in place) at the percentiles ps.
func distOf(samples []float64, ps []float64, median bool) Dist {
	d := Dist{medianKey: median}
	slices.Sort(samples)
	n := len(samples)
	for _, p := range ps {
		q := Pct{P: p}
		if n > 0 {
			q.Value = ptr(Linear(samples, p))
		}
		d.Percentiles = append(d.Percentiles, q)
	}
	if n == 0 {
		return d
	}
	var sum float64
	for _, v := range samples {
		sum += v
	}
	m := sum / float64(n)
	var ss float64
	for _, v := range samples {
		ss += (v - m) * (v - m)
	}
	d.Mean, d.Stdev = ptr(m), ptr(math.Sqrt(ss/float64(n)))
	if median {
		d.Median = ptr(Linear(samples, 50))
	}
	return d
}

// StateFigures are one cache state's figures in by_cache_state.
type StateFigures struct {
	Requests  int  `json:"requests"`
	TTFTms    Dist `json:"ttft_ms"`
	TPOTms    Dist `json:"tpot_ms"`
	ITLms     Dist `json:"itl_ms"`
	LatencyMs Dist `json:"latency_ms"`
}

// ByCacheState is the by_cache_state block, in its key order.
type ByCacheState struct {
	Cold       StateFigures `json:"cold"`
	Reused     StateFigures `json:"reused"`
	Unverified StateFigures `json:"unverified"`
	Warmup     StateFigures `json:"warmup"`
}

// Serving is the serving block: vLLM bench serve's figures with its
// definitions.
type Serving struct {
	RequestThroughput    *float64 `json:"request_throughput"`
	TotalTokenThroughput *float64 `json:"total_token_throughput"`
	TTFTms               Dist     `json:"ttft_ms"`
	TPOTms               Dist     `json:"tpot_ms"`
	ITLms                Dist     `json:"itl_ms"`
	E2ELms               Dist     `json:"e2el_ms"`
	// TTFOms is the time to the first content token after reasoning;
	// null when no reasoning arrived.
	TTFOms Dist `json:"ttfo_ms"`
}

// stateSamples are the per-request samples of one cache state.
type stateSamples struct {
	n                   int
	ttft, tpot, itl, e2 []float64
}

// figures collects the samples the two blocks are computed from.
type figures struct {
	states [len(stateOrder)]stateSamples
	// warmCold are the TTFTs of warmup requests with cold receipts: the
	// speedup's baseline when too few measured requests were cold.
	warmCold []float64
	ttfo     []float64
	errors   map[string]int
}

// stateIndex is r's row of by_cache_state.
func stateIndex(r *sender.Result) int {
	if r.Phase == sender.PhaseWarmup {
		return 3
	}
	switch r.CacheState {
	case sender.StateCold:
		return 0
	case sender.StateReused:
		return 1
	}
	return 2
}

// add keeps r's samples: warmups of every outcome count as requests,
// and only successful requests give figures.
func (f *figures) add(r *sender.Result) {
	if r.Measured() && !r.Successful && r.Error != nil {
		if f.errors == nil {
			f.errors = map[string]int{}
		}
		f.errors[*r.Error]++
	}
	if r.Phase != sender.PhaseWarmup && !r.Measured() {
		return
	}
	s := &f.states[stateIndex(r)]
	s.n++
	if !r.Successful {
		return
	}
	lat := r.RequestLatency * 1000
	s.e2 = append(s.e2, finite(lat))
	if r.TTFT == nil {
		return
	}
	ttft := *r.TTFT * 1000
	s.ttft = append(s.ttft, finite(ttft))
	if r.Phase == sender.PhaseWarmup && r.CacheState == sender.StateCold {
		f.warmCold = append(f.warmCold, finite(ttft))
	}
	// One read delivered the whole reply: no decode interval was measured
	// (spec/record.md, arrival times).
	if out := outputTokens(r); out > 1 && r.DecodeUnmeasured == nil {
		s.tpot = append(s.tpot, finite((lat-ttft)/float64(out-1)))
	}
	s.itl = append(s.itl, r.RoundGapsMs...)
	if r.Measured() && !r.FirstContent.IsZero() && r.ReasoningField != "" {
		f.ttfo = append(f.ttfo, finite(float64(r.FirstContent.Sub(r.Submit))/1e6))
	}
}

// byState computes by_cache_state at the percentiles ps (50, 90 and 99
// always, then the others asked for).
func (f *figures) byState(ps []float64) ByCacheState {
	ps = mergePercentiles([]float64{50, 90, 99}, ps)
	var out [len(stateOrder)]StateFigures
	for i := range f.states {
		s := &f.states[i]
		out[i] = StateFigures{
			Requests:  s.n,
			TTFTms:    distOf(s.ttft, ps, false),
			TPOTms:    distOf(s.tpot, ps, false),
			ITLms:     distOf(s.itl, ps, false),
			LatencyMs: distOf(s.e2, ps, false),
		}
	}
	return ByCacheState{Cold: out[0], Reused: out[1], Unverified: out[2], Warmup: out[3]}
}

// serving computes the serving block over the measured requests, each
// figure's samples pooled in turn by pool.
func (f *figures) serving(pool *pooled, ps []float64, successful, inTokens, outTokens int, elapsed float64) Serving {
	if len(ps) == 0 {
		ps = DefaultPercentiles
	}
	sv := Serving{
		TTFTms: distOf(pool.of(ttftOf), ps, true),
		TPOTms: distOf(pool.of(tpotOf), ps, true),
		ITLms:  distOf(pool.of(itlOf), ps, true),
		E2ELms: distOf(pool.of(e2Of), ps, true),
		TTFOms: distOf(f.ttfo, ps, true),
	}
	if elapsed > 0 {
		sv.RequestThroughput = ptr(float64(successful) / elapsed)
		sv.TotalTokenThroughput = ptr(float64(inTokens+outTokens) / elapsed)
	}
	return sv
}

// mergePercentiles is a and b together, sorted, without repeats.
func mergePercentiles(a, b []float64) []float64 {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// The final figures read the samples sorted, and none depends on their
// order (every mean is summed over sorted samples, as it always was), so
// sortAll sorts them in place once rather than each figure sorting a
// copy: a million results then need no extra copies at the end beyond
// one merge of the cache states. It returns what pools them, which needs
// them sorted.
func (f *figures) sortAll() *pooled {
	for i := range f.states {
		s := &f.states[i]
		for _, v := range [][]float64{s.ttft, s.tpot, s.itl, s.e2} {
			slices.Sort(v)
		}
	}
	slices.Sort(f.warmCold)
	slices.Sort(f.ttfo)
	return &pooled{f: f}
}

// The samples of one figure, by cache state.
func ttftOf(s *stateSamples) []float64 { return s.ttft }
func tpotOf(s *stateSamples) []float64 { return s.tpot }
func itlOf(s *stateSamples) []float64  { return s.itl }
func e2Of(s *stateSamples) []float64   { return s.e2 }

// pooled pools the measured cache states' samples of one figure at a
// time, sorted (each state's is, by sortAll, which makes it), into one
// buffer it reuses: the final figures of a million results then hold
// one pooled copy at a time, never one per figure.
type pooled struct {
	f   *figures
	buf []float64
}

// of is every successful measured request's samples of the figure pick
// chooses, sorted: the only state's own slice when just one has any,
// else the buffer, valid until the next call.
func (p *pooled) of(pick func(*stateSamples) []float64) []float64 {
	var parts [3][]float64
	n, k := 0, 0
	for i := range parts {
		if v := pick(&p.f.states[i]); len(v) > 0 {
			parts[k] = v
			n, k = n+len(v), k+1
		}
	}
	if k == 1 {
		return parts[0]
	}
	if cap(p.buf) < n {
		p.buf = make([]float64, 0, n)
	}
	return mergeSorted(p.buf[:0], parts[:k])
}

// mergeSorted appends the sorted parts to dst in order.
func mergeSorted(dst []float64, parts [][]float64) []float64 {
	for {
		best, left := -1, 0
		for i, p := range parts {
			if len(p) == 0 {
				continue
			}
			left++
			if best < 0 || p[0] < parts[best][0] {
				best = i
			}
		}
		switch left {
		case 0:
			return dst
		case 1:
			return append(dst, parts[best]...)
		}
		dst = append(dst, parts[best][0])
		parts[best] = parts[best][1:]
	}
}

// speedup is the headline's cold vs reused TTFT.
func (f *figures) speedup() Speedup {
	return speedupOf(f.states[0].ttft, f.warmCold, f.states[1].ttft)
}

// keptBytes is the capacity of f's sample slices, in bytes.
func (f *figures) keptBytes() uint64 {
	n := cap(f.warmCold) + cap(f.ttfo)
	for i := range f.states {
		s := &f.states[i]
		n += cap(s.ttft) + cap(s.tpot) + cap(s.itl) + cap(s.e2)
	}
	return uint64(n) * 8
}
