package runs

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"slices"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/internal/stat"
)

// The metrics compare tests and a series summarises (spec/stats.md),
// with what each is computed from. Latency metrics are percentiles
// (linear, as the summary's) of per-request samples of the measured
// requests, overall and per cache state; the throughputs are the run's
// own figures; hit_ratio and error_rate are shares of the requests.

// Kind of a metric: what its samples are.
type Kind int

const (
	// Latency metrics are a percentile of per-request samples (ms).
	Latency Kind = iota
	// Throughput metrics are one figure per run (req/s, tok/s).
	Throughput
	// HitRatio is cached over prompt tokens, compared in points.
	HitRatio
	// ErrorRate is failed over measured requests, compared in points.
	ErrorRate
)

// Metric is one compared metric.
type Metric struct {
	Key   string // ttft_p50
	Label string // TTFT p50
	Unit  string // of its values: ms, req/s, tok/s, or % (a share)
	Kind  Kind
	// Lower says lower is better (latencies, errors).
	Lower bool
	// sample is the latency sample (sampleTTFT...), p its percentile.
	sample int
	p      float64
}

// Which per-request latency a Latency metric reads.
const (
	sampleTTFT = iota
	sampleTPOT
	sampleITL
	sampleE2EL
	numSamples
)

// Metrics are the compared metrics in the order rows list them.
var Metrics = []Metric{
	{Key: "ttft_p50", Label: "TTFT p50", Unit: "ms", Kind: Latency, Lower: true, sample: sampleTTFT, p: 50},
	{Key: "ttft_p90", Label: "TTFT p90", Unit: "ms", Kind: Latency, Lower: true, sample: sampleTTFT, p: 90},
	{Key: "ttft_p99", Label: "TTFT p99", Unit: "ms", Kind: Latency, Lower: true, sample: sampleTTFT, p: 99},
	{Key: "tpot_p50", Label: "TPOT p50", Unit: "ms", Kind: Latency, Lower: true, sample: sampleTPOT, p: 50},
	{Key: "itl_p50", Label: "ITL p50", Unit: "ms", Kind: Latency, Lower: true, sample: sampleITL, p: 50},
	{Key: "e2el_p50", Label: "E2E latency p50", Unit: "ms", Kind: Latency, Lower: true, sample: sampleE2EL, p: 50},
	{Key: "request_throughput", Label: "Request throughput", Unit: "req/s", Kind: Throughput},
	{Key: "output_throughput", Label: "Output throughput", Unit: "tok/s", Kind: Throughput},
	{Key: "hit_ratio", Label: "Hit ratio", Unit: "%", Kind: HitRatio},
	{Key: "error_rate", Label: "Error rate", Unit: "%", Kind: ErrorRate, Lower: true},
}

// States are the cache states the latency metrics are also split by;
// "" is every measured request.
var States = []string{"", sender.StateCold, sender.StateReused}

// LookupMetric finds a metric by key.
func LookupMetric(key string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Key == key {
			return m, true
		}
	}
	return Metric{}, false
}

// MetricKey is the name of a metric in a state: ttft_p50, ttft_p50:cold.
func MetricKey(metric, state string) string {
	if state == "" {
		return metric
	}
	return metric + ":" + state
}

// Points says the metric is compared in percentage points.
func (m Metric) Points() bool { return m.Kind == HitRatio || m.Kind == ErrorRate }

// Samples are the per-request figures of one run's measured requests
// that compare tests, read from requests.jsonl in one pass.
type Samples struct {
	// lat[sample][state] are sorted latencies (ms); state 0 is every
	// request, 1 cold, 2 reused.
	lat [numSamples][3][]float64
	// cached and prompt are the token counts of the requests with valid
	// counts (the hit ratio's pairs).
	cached, prompt []float64
	// Measured and Failed count the measured requests.
	Measured, Failed int
	// Corrupt counts unreadable lines.
	Corrupt int
}

// ReadSamples reads dir's requests.jsonl once with the index's scanner.
// A run without the file has no samples (every figure n/a).
func ReadSamples(ctx context.Context, dir string) (*Samples, error) {
	s := &Samples{}
	corrupt, err := scanRequests(ctx, dir, func(_ record.LineAt, l *sender.Result) {
		s.add(l)
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	s.Corrupt = corrupt
	for i := range s.lat {
		for j := range s.lat[i] {
			slices.Sort(s.lat[i][j])
		}
	}
	return s, nil
}

// stateSlot is a request's per-state slot: 1 cold, 2 reused, -1 other.
func stateSlot(state string) int {
	switch state {
	case sender.StateCold:
		return 1
	case sender.StateReused:
		return 2
	}
	return -1
}

func (s *Samples) add(l *sender.Result) {
	if l.Phase == sender.PhaseWarmup || l.Phase == sender.PhaseReference {
		return
	}
	s.Measured++
	if p, k := l.PromptTokens, l.CachedTokens; p != nil && k != nil && *p >= 0 && *k >= 0 && *k <= *p && *p <= sender.MaxCount {
		s.prompt = append(s.prompt, float64(*p))
		s.cached = append(s.cached, float64(*k))
	}
	if !l.Successful {
		s.Failed++
		return
	}
	slot := stateSlot(l.CacheState)
	put := func(sample int, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		s.lat[sample][0] = append(s.lat[sample][0], v)
		if slot > 0 {
			s.lat[sample][slot] = append(s.lat[sample][slot], v)
		}
	}
	lat := l.RequestLatency * 1000
	put(sampleE2EL, lat)
	if l.ITLP50Ms != nil {
		put(sampleITL, *l.ITLP50Ms)
	}
	if l.TTFT == nil {
		return
	}
	ttft := *l.TTFT * 1000
	put(sampleTTFT, ttft)
	out := l.Chunks
	if c := l.CompletionTokens; c != nil && *c > 0 && *c <= sender.MaxCount {
		out = *c
	}
	if out > 1 && l.DecodeUnmeasured == nil {
		put(sampleTPOT, (lat-ttft)/float64(out-1))
	}
}

// latency is the sorted sample of m in state (nil for other kinds).
func (s *Samples) latency(m Metric, state string) []float64 {
	if m.Kind != Latency {
		return nil
	}
	i := 0
	if state != "" {
		i = stateSlot(state)
		if i < 0 {
			return nil
		}
	}
	return s.lat[m.sample][i]
}

// HitRatio is cached over prompt tokens, nil without valid counts.
func (s *Samples) HitRatio() *float64 {
	var c, p float64
	for i := range s.prompt {
		c += s.cached[i]
		p += s.prompt[i]
	}
	if len(s.prompt) == 0 || p == 0 {
		return nil
	}
	return f64(c / p)
}

// ErrorRate is the failed share of the measured requests, nil without
// any.
func (s *Samples) ErrorRate() *float64 {
	if s.Measured == 0 {
		return nil
	}
	return f64(float64(s.Failed) / float64(s.Measured))
}

// Value is the run's value of m in state: a percentile of its samples,
// its throughput (from its summary), its hit or error ratio; nil where
// undefined.
func (s *Samples) Value(m Metric, state string, sum *record.Summary) *float64 {
	if state != "" && m.Kind != Latency {
		return nil
	}
	switch m.Kind {
	case Latency:
		if x := s.latency(m, state); len(x) > 0 {
			return f64(stat.Percentile(x, m.p))
		}
		return nil
	case Throughput:
		return throughput(m, s, sum)
	case HitRatio:
		return s.HitRatio()
	}
	return s.ErrorRate()
}

// throughput is a run's request or output throughput: the summary's
// figures (serving.request_throughput, results.output_throughput), nil
// when it measured no request or none succeeded.
func throughput(m Metric, s *Samples, sum *record.Summary) *float64 {
	if sum == nil || s.Measured == 0 || sum.Results.SuccessfulRequests == 0 {
		return nil
	}
	if m.Key == "output_throughput" {
		return f64(sum.Results.OutputThroughput)
	}
	if sum.Serving != nil && sum.Serving.RequestThroughput != nil {
		return sum.Serving.RequestThroughput
	}
	if el := sum.Results.ElapsedTime; el > 0 {
		return f64(float64(sum.Results.SuccessfulRequests) / el)
	}
	return nil
}

// Values are every metric of the run, overall then per cache state, in
// the order of series.json's rows; then the headline's speedup.
func (s *Samples) Values(sum *record.Summary) []record.Value {
	var out []record.Value
	for _, st := range States {
		for _, m := range Metrics {
			if st != "" && m.Kind != Latency {
				continue
			}
			out = append(out, record.Value{Key: MetricKey(m.Key, st), Value: s.Value(m, st, sum)})
		}
	}
	var sp *float64
	if sum != nil && sum.Headline != nil {
		sp = sum.Headline.Speedup
	}
	return append(out, record.Value{Key: "speedup", Value: sp})
}

// MetricKeys are the keys of Values but the speedup: the metrics a
// series summary describes, in order.
func MetricKeys() []string {
	var out []string
	for _, st := range States {
		for _, m := range Metrics {
			if st == "" || m.Kind == Latency {
				out = append(out, MetricKey(m.Key, st))
			}
		}
	}
	return out
}
