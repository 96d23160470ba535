package stats

import (
	"math"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/kvbench/kvbench/bench/sender"
)

// Snapshot is the live state of a run, for the run screen and progress.
type Snapshot struct {
	// Done counts finished measured requests, failures included; Failed
	// counts the failures among them.
	Done, Failed int
	// Warmup and WarmupFailed count finished warmup requests, Reference
	// finished reference requests; none of them enters any other figure.
	Warmup, WarmupFailed, Reference int

	// MeanTTFTms and P99TTFTms (linear) cover successful requests with a
	// first token; 0 when there are none.
	MeanTTFTms, P99TTFTms float64

	// Cold, Reused and Unverified count the receipts of successful
	// requests: a failed request is counted in Failed, not as unverified.
	Cold, Reused, Unverified int
	// HitRatio is cached/prompt tokens over requests with valid counts,
	// nil when there are none.
	HitRatio *float64

	// InputTokens and OutputTokens total the successful requests;
	// InputTPS and OutputTPS divide them by ElapsedS, the measured span so
	// far (last finish - first submit), as the results block does.
	InputTokens, OutputTokens int
	InputTPS, OutputTPS       float64
	ElapsedS                  float64

	// MaxDispatchLagMs is the largest dispatch lag so far (0 when none).
	MaxDispatchLagMs float64

	// Series has one point per completed second since the first measured
	// submit, the last SeriesWindow of them.
	Series []Point
}

// Collector aggregates results as they finish. It is safe for concurrent
// use: Add is O(1) amortised under one short lock, Snapshot can be called
// many times a second while requests finish.
type Collector struct {
	now func() time.Time

	mu sync.Mutex

	warmup, warmupFailed, reference int
	retries                         int // every phase

	done, failed int
	// failedUnverified are the failed requests among unverified, which
	// the final cache block counts (reason "error") and live progress
	// does not.
	failedUnverified int
	first, last      time.Time // measured span: first submit, last finish

	// Successful measured requests. Their TTFTs and latencies are kept
	// once, by cache state, in fig; ttftLive reads the live p99 in O(1).
	ttftLive                   liveQuantile
	ttftN, latN                int
	decode                     []float64
	sumTTFT, sumDecode, sumLat float64
	inTokens, outTokens        int
	cold, reused, unverified   int
	reasons                    map[string]int
	hitPrompt, hitCached, hitN int
	gaps                       []float32
	hist                       *sender.GapHistogram // gaps of streams too long for RoundGapsMs
	gapSum                     float64
	zeros                      int
	decodeUnmeasured           int
	tpcSum                     float64
	tpcN                       int
	prefill                    []float64
	prefillSum                 float64
	agg                        PrefillAggregate
	lags                       []float64
	maxLag                     float64
	series                     series
	hits                       []hitEntry    // every measured result, for the summary's series
	hitAnchor                  time.Time     // the first measured submit added: hits' times are from it
	hitFirst                   time.Duration // the earliest measured submit, from hitAnchor
	fig                        figures       // by cache state and serving
	percentiles                []float64     // --percentiles

	// offline is a record read back (a merge): nothing watches its live
	// view, so the live series keeps nothing, and the samples of every
	// measured result are sized for expect of them when first kept.
	offline bool
	expect  int
}

// SetPercentiles sets the percentiles of the serving figures and of the
// figures by cache state (--percentiles); nil keeps DefaultPercentiles.
func (c *Collector) SetPercentiles(ps []float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.percentiles = slices.Clone(ps)
}

// Offline makes c the collector of a record read back, as a merge reads
// shards: Snapshot's Series stays empty (nothing watches it, and a live
// series of a read-back record would keep every entry, since no second
// of it ever completes on the clock), and the samples every measured
// result gives are sized for at most n results at their first, so they
// never grow by copying (a growing slice holds its old and new arrays at
// once). Call it before the first Add.
func (c *Collector) Offline(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offline, c.expect = true, max(n, 0)
}

// sized is s with room for c's expected results when c is offline and s
// has none yet.
func sized[T any](c *Collector, s []T) []T {
	if c.offline && s == nil && c.expect > 0 {
		return make([]T, 0, c.expect)
	}
	return s
}

// New returns a Collector reading time.Now.
func New() *Collector { return NewWithClock(time.Now) }

// NewWithClock returns a Collector whose Snapshot reads now, so tests can
// decide which seconds are complete.
func NewWithClock(now func() time.Time) *Collector {
	return &Collector{now: now, reasons: map[string]int{}}
}

// Add records one finished result of any phase.
func (c *Collector) Add(r *sender.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fig.add(r)
	c.retries += r.Retries
	switch {
	case r.Phase == sender.PhaseWarmup:
		c.warmup++
		if !r.Successful {
			c.warmupFailed++
		}
		return
	case !r.Measured():
		c.reference++
		return
	}

	submit, finish := submitOf(r), finishOf(r)
	c.done++
	if c.first.IsZero() || submit.Before(c.first) {
		c.first = submit
	}
	if finish.After(c.last) {
		c.last = finish
	}
	c.agg.Add(r)
	if r.DispatchLagMs != nil {
		lag := finite(*r.DispatchLagMs)
		c.lags = append(sized(c, c.lags), lag)
		if len(c.lags) == 1 || lag > c.maxLag {
			c.maxLag = lag
		}
	}
	c.addCache(r)
	if len(c.hits) == 0 {
		c.hitAnchor = submit
	}
	c.hitFirst = min(c.hitFirst, submit.Sub(c.hitAnchor))
	c.hits = append(sized(c, c.hits), hitEntryOf(r, c.hitAnchor, finish))

	e := newEntry(r)
	if !r.Successful {
		c.failed++
		if r.CacheState != sender.StateCold && r.CacheState != sender.StateReused {
			c.failedUnverified++
		}
		c.addSeries(submit, finish, e)
		return
	}
	if r.TTFT != nil {
		ms := finite(*r.TTFT * 1000)
		c.ttftLive.add(ms)
		c.ttftN++
		c.sumTTFT += ms
		e.ttftMs = float32(ms)
	}
	if r.DecodeSpeed != nil {
		dec := finite(*r.DecodeSpeed)
		c.decode = append(sized(c, c.decode), dec)
		c.sumDecode += dec
	}
	lat := finite(r.RequestLatency * 1000)
	c.latN++
	c.sumLat += lat
	in, out := inputTokens(r), outputTokens(r)
	c.inTokens = addCount(c.inTokens, in)
	c.outTokens = addCount(c.outTokens, out)
	e.out = int32(min(out, math.MaxInt32))
	c.addSeries(submit, finish, e)
	c.addLatency(r)
}

// addSeries places a result in the live series, unless c is offline.
func (c *Collector) addSeries(submit, finish time.Time, e entry) {
	if !c.offline {
		c.series.add(submit, finish, e)
	}
}

func (c *Collector) addCache(r *sender.Result) {
	switch r.CacheState {
	case sender.StateCold:
		c.cold++
	case sender.StateReused:
		c.reused++
	default:
		c.unverified++
		reason := "unknown"
		if r.UnverifiedReason != nil && *r.UnverifiedReason != "" {
			reason = *r.UnverifiedReason
		}
		c.reasons[reason]++
	}
	if p, k := r.PromptTokens, r.CachedTokens; p != nil && k != nil && validCount(*p) && validCount(*k) && *k <= *p {
		c.hitPrompt = addCount(c.hitPrompt, *p)
		c.hitCached = addCount(c.hitCached, *k)
		c.hitN++
	}
}

func (c *Collector) addLatency(r *sender.Result) {
	if r.DecodeUnmeasured != nil {
		c.decodeUnmeasured++
	}
	tokens := -1
	if r.CompletionTokens != nil && validCount(*r.CompletionTokens) {
		tokens = *r.CompletionTokens
	}
	chunks := min(max(r.Chunks, 0), sender.MaxCount)
	if h := r.RoundGapHist; h != nil && h.Count() > 0 && len(r.RoundGapsMs) == 0 {
		if c.hist == nil {
			c.hist = new(sender.GapHistogram)
		}
		c.hist.Merge(h)
		c.gapSum += float64(h.Sum()) / float64(time.Millisecond)
		if tokens > chunks {
			c.zeros = addCount(c.zeros, tokens-chunks)
		}
	}
	if len(r.RoundGapsMs) > 0 {
		if need := len(c.gaps) + len(r.RoundGapsMs); need > cap(c.gaps) {
			// Double: append's 1.25x growth of a large slice leaves about
			// four times the pooled gaps behind as garbage by the end.
			g := make([]float32, len(c.gaps), max(need, 2*cap(c.gaps), 1024))
			copy(g, c.gaps)
			c.gaps = g
		}
		for _, g := range r.RoundGapsMs {
			g = max(finite(g), 0)
			c.gaps = append(c.gaps, float32(g))
			c.gapSum += g
		}
		if tokens > chunks {
			c.zeros = addCount(c.zeros, tokens-chunks)
		}
	}
	if r.TokensPerChunk != nil {
		c.tpcSum += finite(*r.TokensPerChunk)
		c.tpcN++
	}
	if r.CacheState == sender.StateCold && r.PrefillTPS != nil {
		v := finite(*r.PrefillTPS)
		c.prefill = append(c.prefill, v)
		c.prefillSum += v
	}
}

// inputTokens is LMCache's num_input_tokens: the server's prompt count.
// A count outside [0, sender.MaxCount] (a line edited by hand: the sender
// never keeps one) counts as none.
func inputTokens(r *sender.Result) int {
	if r.PromptTokens != nil && *r.PromptTokens > 0 && validCount(*r.PromptTokens) {
		return *r.PromptTokens
	}
	return 0
}

// outputTokens is LMCache's num_output_tokens: completion_tokens when > 0,
// else the number of content chunks (both bounded as inputTokens is).
func outputTokens(r *sender.Result) int {
	if r.CompletionTokens != nil && *r.CompletionTokens > 0 && validCount(*r.CompletionTokens) {
		return *r.CompletionTokens
	}
	return min(max(r.Chunks, 0), sender.MaxCount)
}

// validCount: a token count the record can hold (spec/record.md).
func validCount(n int) bool { return n >= 0 && n <= sender.MaxCount }

// addCount adds two counts, saturating rather than wrapping: the totals
// of a run of 2^23 requests of 2^40 tokens still fit, and nothing larger
// ever turns negative.
func addCount(a, b int) int {
	if b > 0 && a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

func (c *Collector) hitRatio() *float64 {
	if c.hitN == 0 || c.hitPrompt == 0 {
		return nil
	}
	return ptr(float64(c.hitCached) / float64(c.hitPrompt))
}

func (c *Collector) elapsed() float64 {
	if c.done == 0 {
		return 0
	}
	return max(c.last.Sub(c.first).Seconds(), 0)
}

func perSecond(n int, s float64) float64 {
	if s <= 0 {
		return 0
	}
	return float64(n) / s
}

// Snapshot returns the live aggregates.
func (c *Collector) Snapshot() Snapshot {
	now := c.now()
	c.mu.Lock()
	el := c.elapsed()
	s := Snapshot{
		Done:             c.done,
		Failed:           c.failed,
		Warmup:           c.warmup,
		WarmupFailed:     c.warmupFailed,
		Reference:        c.reference,
		MeanTTFTms:       mean(c.sumTTFT, c.ttftN),
		P99TTFTms:        c.ttftLive.linear(99),
		Cold:             c.cold,
		Reused:           c.reused,
		Unverified:       c.unverified - c.failedUnverified,
		HitRatio:         c.hitRatio(),
		InputTokens:      c.inTokens,
		OutputTokens:     c.outTokens,
		InputTPS:         perSecond(c.inTokens, el),
		OutputTPS:        perSecond(c.outTokens, el),
		ElapsedS:         el,
		MaxDispatchLagMs: c.maxLag,
		Series:           c.series.points(now),
	}
	c.mu.Unlock()
	return s
}

// optMean is sum/n, nil when there is no sample.
func optMean(sum float64, n int) *float64 {
	if n == 0 {
		return nil
	}
	return ptr(mean(sum, n))
}

// optLinear is Linear over sorted, nil when there is no sample.
func optLinear(sorted []float64, p float64) *float64 {
	if len(sorted) == 0 {
		return nil
	}
	return ptr(Linear(sorted, p))
}

// histSpreads are the pooled ITL and round-gap figures once a stream's
// gaps came as a histogram: the exact gaps join a copy of it, and every
// percentile comes from the histogram (within 1/128, see
// sender.GapHistogram); the means stay exact.
func (c *Collector) histSpreads() (itl, gap Spread) {
	h := *c.hist
	for _, g := range c.gaps {
		h.Add(time.Duration(float64(g) * float64(time.Millisecond)))
	}
	n := h.Count()
	if n == 0 {
		return
	}
	zeros := uint64(c.zeros)
	rank := func(total uint64, zeros uint64, p float64) float64 {
		i := uint64(nearestRankIndex(int(min(total, math.MaxInt)), p))
		if i < zeros {
			return 0
		}
		return float64(h.Rank(i-zeros+1)) / float64(time.Millisecond)
	}
	itl = Spread{
		Mean: ptr(c.gapSum / float64(n+zeros)),
		P50:  ptr(rank(n+zeros, zeros, 50)),
		P95:  ptr(rank(n+zeros, zeros, 95)),
	}
	gap = Spread{
		Mean: ptr(c.gapSum / float64(n)),
		P50:  ptr(rank(n, 0, 50)),
		P95:  ptr(rank(n, 0, 95)),
	}
	return itl, gap
}

// Final computes the summary blocks from everything added so far.
func (c *Collector) Final(client ClientInfo) Blocks {
	c.mu.Lock()
	defer c.mu.Unlock()

	var b Blocks
	b.Series = secondSeries(c.hits, c.hitFirst)
	el := c.elapsed()
	// Sorted in place: no figure depends on the order of samples. The
	// cache states' samples of one figure are pooled at a time.
	pool := c.fig.sortAll()
	slices.Sort(c.decode)
	dec := c.decode
	ttft := pool.of(ttftOf)
	ttftN, p50TTFT, p90TTFT, p99TTFT := len(ttft), optLinear(ttft, 50), optLinear(ttft, 90), optLinear(ttft, 99)
	lat := pool.of(e2Of)
	b.Results = Results{
		TotalRequests:        c.done,
		SuccessfulRequests:   c.done - c.failed,
		FailedRequests:       c.failed,
		ElapsedTime:          el,
		MeanTTFTms:           optMean(c.sumTTFT, ttftN),
		MeanDecodeSpeed:      optMean(c.sumDecode, len(dec)),
		MeanRequestLatencyMs: optMean(c.sumLat, len(lat)),
		InputThroughput:      perSecond(c.inTokens, el),
		OutputThroughput:     perSecond(c.outTokens, el),
		TotalInputTokens:     c.inTokens,
		TotalOutputTokens:    c.outTokens,
		P50TTFTms:            p50TTFT,
		P90TTFTms:            p90TTFT,
		P99TTFTms:            p99TTFT,
		P50DecodeSpeed:       optLinear(dec, 50),
		P90DecodeSpeed:       optLinear(dec, 90),
		P99DecodeSpeed:       optLinear(dec, 99),
		P50RequestLatencyMs:  optLinear(lat, 50),
		P90RequestLatencyMs:  optLinear(lat, 90),
		P99RequestLatencyMs:  optLinear(lat, 99),
	}

	reasons := make(map[string]int, len(c.reasons))
	for k, v := range c.reasons {
		reasons[k] = v
	}
	b.Cache = Cache{
		Cold:              c.cold,
		Reused:            c.reused,
		Unverified:        c.unverified,
		UnverifiedReasons: reasons,
		PromptTokens:      c.hitPrompt,
		CachedTokens:      c.hitCached,
		HitRatio:          c.hitRatio(),
	}

	// Order does not matter to any figure, so the pooled gaps (the largest
	// store) are sorted in place rather than copied.
	slices.Sort(c.gaps)
	if c.hist != nil {
		b.Latency.ITLms, b.Latency.RoundGapMs = c.histSpreads()
	} else if n := len(c.gaps) + c.zeros; n > 0 && len(c.gaps) > 0 {
		b.Latency.ITLms = Spread{
			Mean: ptr(c.gapSum / float64(n)),
			P50:  ptr(nearestRankZeros(c.gaps, c.zeros, 50)),
			P95:  ptr(nearestRankZeros(c.gaps, c.zeros, 95)),
		}
		b.Latency.RoundGapMs = Spread{
			Mean: ptr(c.gapSum / float64(len(c.gaps))),
			P50:  ptr(nearestRankZeros(c.gaps, 0, 50)),
			P95:  ptr(nearestRankZeros(c.gaps, 0, 95)),
		}
	}
	if c.tpcN > 0 {
		b.Latency.TokensPerChunkMean = ptr(c.tpcSum / float64(c.tpcN))
	}
	b.Latency.DecodeUnmeasured = c.decodeUnmeasured
	if len(c.prefill) > 0 {
		slices.Sort(c.prefill)
		pf := c.prefill
		b.Latency.PrefillTPS = MeanP50{
			Mean: ptr(c.prefillSum / float64(len(pf))),
			P50:  ptr(NearestRank(pf, 50)),
		}
	}
	b.Latency.AggregatePrefillTPS = c.agg.Value()

	b.ByCacheState = c.fig.byState(c.percentiles)
	b.Serving = c.fig.serving(pool, c.percentiles, c.done-c.failed, c.inTokens, c.outTokens, el)
	b.Speedup = c.fig.speedup()
	b.Errors = map[string]int{}
	for k, v := range c.fig.errors {
		b.Errors[k] = v
	}

	b.Client.CPUSeconds = finite(client.CPUSeconds)
	b.Client.OverloadReasons = []string{}
	b.Client.Retries = c.retries
	if len(c.lags) > 0 {
		slices.Sort(c.lags)
		lags := c.lags
		b.Client.MaxDispatchLagMs = ptr(lags[len(lags)-1])
		b.Client.P99DispatchLagMs = ptr(Linear(lags, 99))
	}
	return b
}

// SortedLags are the dispatch lags (ms) of the measured results added,
// sorted in place; valid until the next Add. A merge's load tracker reads
// its schedule lags from them (load.Tracker.Offline): the same figure of
// the same requests, kept once.
func (c *Collector) SortedLags() []float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	slices.Sort(c.lags)
	return c.lags
}

// KeptBytes is the memory of the per-request samples c keeps for the
// final figures (their slices' capacity): pointer-free, so the garbage
// collector never scans it, and what the run's GC headroom leaves out of
// the heap it lets grow.
func (c *Collector) KeptBytes() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	const f64, f32 = 8, 4
	n := uint64(cap(c.decode)+cap(c.prefill)+cap(c.lags))*f64 +
		uint64(cap(c.gaps))*f32 +
		uint64(cap(c.hits))*uint64(unsafe.Sizeof(hitEntry{}))
	return n + c.fig.keptBytes()
}
