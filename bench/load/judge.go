package load

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"
	"unsafe"

	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/stats"
)

// Hold says what kept a measured request from going at its release time.
type Hold int

const (
	// NotHeld: nothing but the client stood between release and submit.
	NotHeld Hold = iota
	// HeldByWorkload: the workload's own design (a busy chat session, its
	// in-flight cap, a request waiting for the one before it).
	HeldByWorkload
	// HeldByCap: --max-concurrency had no free slot.
	HeldByCap
)

// HoldBack describes how a workload holds requests back by design and
// what a user changes to deliver a higher rate.
type HoldBack struct {
	What string // "busy chat sessions (2 sessions: ...)"
	Fix  string // "give it more sessions through a larger --kv-cache-volume, or ..."
}

// Block is the summary's `load` block (spec/load.md).
type Block struct {
	TargetRate             *float64 `json:"target_rate"`
	AchievedRate           *float64 `json:"achieved_rate"`
	CompletionRate         *float64 `json:"completion_rate"` // sustain.completionRate
	Arrival                string   `json:"arrival"`
	Burstiness             *float64 `json:"burstiness"`
	MaxConcurrency         *int     `json:"max_concurrency"`
	ObservedMaxConcurrency int      `json:"observed_max_concurrency"`
	MeanConcurrency        *float64 `json:"mean_concurrency"`
	ScheduleLagP50ms       *float64 `json:"schedule_lag_p50_ms"`
	ScheduleLagP99ms       *float64 `json:"schedule_lag_p99_ms"`
	ScheduleLagMaxms       *float64 `json:"schedule_lag_max_ms"`
	Delivered              bool     `json:"delivered"`
	DegradedReasons        []string `json:"degraded_reasons"`
}

// SLOms is the `goodput.slo` object: limits in ms, null where not set.
type SLOms struct {
	TTFTms *float64 `json:"ttft_ms"`
	TPOTms *float64 `json:"tpot_ms"`
	E2Ems  *float64 `json:"e2e_ms"`
}

// Millis is the SLO's limits in ms, nil where not set.
func (s SLO) Millis() SLOms {
	ms := func(d time.Duration) *float64 {
		if d <= 0 {
			return nil
		}
		return ptr(float64(d) / float64(time.Millisecond))
	}
	return SLOms{TTFTms: ms(s.TTFT), TPOTms: ms(s.TPOT), E2Ems: ms(s.E2E)}
}

// Goodput is the summary's `goodput` block.
type Goodput struct {
	SLO              SLOms    `json:"slo"`
	GoodRequests     int      `json:"good_requests"`
	GoodFraction     *float64 `json:"good_fraction"`
	GoodputRPS       *float64 `json:"goodput_rps"`
	GoodputOutputTPS *float64 `json:"goodput_output_tps"`
}

// Met judges one request: nil without an SLO; else true when it
// succeeded and every limit set holds. TPOT is (latency - TTFT) /
// (output tokens - 1) and passes with at most one output token.
func (o *SLO) Met(r *sender.Result) *bool {
	if o == nil {
		return nil
	}
	ok := r.Successful
	if ok && o.TTFT > 0 {
		ok = r.TTFT != nil && *r.TTFT <= o.TTFT.Seconds()
	}
	if ok && o.E2E > 0 {
		ok = r.RequestLatency <= o.E2E.Seconds()
	}
	if ok && o.TPOT > 0 {
		// Output that arrived in one read has no measured TPOT
		// (spec/record.md): judged as one token is.
		if out := outputTokens(r); out > 1 && r.DecodeUnmeasured == nil {
			ttft := 0.0
			if r.TTFT != nil {
				ttft = *r.TTFT
			}
			ok = (r.RequestLatency-ttft)/float64(out-1) <= o.TPOT.Seconds()
		}
	}
	return &ok
}

// outputTokens is completion_tokens when > 0, else the content chunks
// (LMCache's num_output_tokens).
func outputTokens(r *sender.Result) int {
	if r.CompletionTokens != nil && *r.CompletionTokens > 0 {
		return *r.CompletionTokens
	}
	return r.Chunks
}

// Tracker follows the measured requests of a run for the `load` and
// `goodput` blocks and the live verdict. It is safe for concurrent use.
type Tracker struct {
	s     Settings
	limit float64 // ms of schedule lag allowed

	mu                  sync.Mutex
	inflight, maxFlight int
	n                   int
	first, last         time.Time // submits
	firstSch, lastSch   time.Time // scheduled times
	lags                []float64
	latSum              float64
	late                [3]int // requests over the lag limit, by Hold
	good, goodOut       int
	tpotSum             float64 // ms, over successful requests with 2+ tokens
	tpotN               int
	recent              [100]Hold // last requests: 0..2 a Hold, -1 on time
	recentN             int
	sus                 sustain
	// sortedLags, when set (LagsFrom), are the schedule lags, read at the
	// end: t keeps none of its own.
	sortedLags func() []float64
}

// NewTracker returns a tracker for a run with settings s.
func NewTracker(s Settings) *Tracker {
	return &Tracker{s: s, limit: LagLimitMs(s)}
}

// LagsFrom has t read its schedule lags, sorted, from sortedLags when
// its block is made, keeping none of its own: a run's and a merge's
// collector keep the same figure (the dispatch lag) of the same requests
// (stats.Collector.SortedLags), and a million of them are 8 MB. Call it
// before the first Begin.
func (t *Tracker) LagsFrom(sortedLags func() []float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sortedLags = sortedLags
}

// KeepSentOrder has t keep each successful request's TTFT in the order
// sent (16 bytes a request), which TTFTThirds reads: a sweep cell asks
// for it; without it TTFTThirds says nil. Call it before the first Begin.
func (t *Tracker) KeepSentOrder() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sus.keepOrder = true
}

// LagLimitMs is the p99 schedule lag a delivered run may have:
// max(10 ms, 10% of the mean gap).
func LagLimitMs(s Settings) float64 {
	l := 10.0
	if s.Timed() {
		l = math.Max(l, 100/s.ProcessRate()) // 10% of 1000/rate ms
	}
	return l
}

// Begin notes a measured request going out.
func (t *Tracker) Begin() {
	t.mu.Lock()
	t.inflight++
	t.maxFlight = max(t.maxFlight, t.inflight)
	t.mu.Unlock()
}

// Finish notes a measured request that has ended (after Begin); hold
// says what held it back, if anything.
func (t *Tracker) Finish(r *sender.Result, hold Hold) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.inflight--
	t.n++
	if t.first.IsZero() || r.Submit.Before(t.first) {
		t.first = r.Submit
	}
	if r.Submit.After(t.last) {
		t.last = r.Submit
	}
	t.latSum += math.Max(r.RequestLatency, 0)
	state := Hold(-1)
	if r.DispatchLagMs != nil {
		lag := *r.DispatchLagMs
		if t.sortedLags == nil {
			t.lags = append(t.lags, lag)
		}
		sch := r.Submit.Add(-time.Duration(lag * float64(time.Millisecond)))
		if t.firstSch.IsZero() || sch.Before(t.firstSch) {
			t.firstSch = sch
		}
		if sch.After(t.lastSch) {
			t.lastSch = sch
		}
		if lag > t.limit {
			t.late[hold]++
			state = hold
		}
	}
	if out := outputTokens(r); r.Successful && out > 1 && r.TTFT != nil && r.DecodeUnmeasured == nil {
		t.tpotSum += 1000 * (r.RequestLatency - *r.TTFT) / float64(out-1)
		t.tpotN++
	}
	t.recent[t.recentN%len(t.recent)] = state
	t.recentN++
	t.sus.add(r)
	if r.SLOMet != nil && *r.SLOMet {
		t.good++
		if r.Successful {
			t.goodOut += outputTokens(r)
		}
	}
}

// MeanTPOTms is the mean time per output token, (latency - TTFT) /
// (tokens - 1), over successful measured requests with two tokens or
// more; nil when there are none.
func (t *Tracker) MeanTPOTms() *float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tpotN == 0 {
		return nil
	}
	return ptr(t.tpotSum / float64(t.tpotN))
}

// Live is the running verdict for the live screens.
type Live struct {
	// TargetRate is nil for a run keeping the workload's own schedule.
	TargetRate   *float64
	AchievedRate *float64
	// Slipping is set when recent requests went out later than the
	// delivered-load limit allows; Cause says why, in a few words.
	Slipping bool
	Cause    string
	// GoodFraction is the running share of measured requests meeting the
	// SLO, nil without an SLO or before the first request.
	GoodFraction *float64
	InFlight     int
}

// Live returns the running verdict.
func (t *Tracker) Live() Live {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := Live{TargetRate: t.target(), AchievedRate: t.achieved(), InFlight: t.inflight}
	if t.s.SLO != nil && t.n > 0 {
		f := float64(t.good) / float64(t.n)
		l.GoodFraction = &f
	}
	var by [3]int
	n := min(t.recentN, len(t.recent))
	for i := 0; i < n; i++ {
		if h := t.recent[i]; h >= 0 {
			by[h]++
		}
	}
	if late := by[0] + by[1] + by[2]; late > 0 && late*100 > n {
		l.Slipping = true
		switch {
		case by[HeldByWorkload] >= by[HeldByCap] && by[HeldByWorkload] >= by[NotHeld]:
			l.Cause = "held back by the workload"
		case by[HeldByCap] >= by[NotHeld]:
			l.Cause = "held back by --max-concurrency"
		default:
			l.Cause = "client sending late"
		}
	}
	return l
}

func (t *Tracker) target() *float64 {
	if !t.s.Timed() {
		return nil
	}
	// A shard is judged against its share of the run's rate.
	r := t.s.ProcessRate()
	return &r
}

func (t *Tracker) achieved() *float64 {
	if t.n < 2 || !t.last.After(t.first) {
		return nil
	}
	r := float64(t.n) / t.last.Sub(t.first).Seconds()
	return &r
}

// planned is the rate the schedule itself asked for over the same
// requests (a short Poisson run's own rate differs from the target).
func (t *Tracker) planned() *float64 {
	if t.n < 2 || !t.lastSch.After(t.firstSch) {
		return nil
	}
	r := float64(t.n) / t.lastSch.Sub(t.firstSch).Seconds()
	return &r
}

// Final computes the `load` and `goodput` blocks. elapsed is the results
// block's elapsed_time; hb is the workload's way of holding requests
// back (nil when it never does); overload lists the client overload
// detector's reasons.
func (t *Tracker) Final(elapsed float64, hb *HoldBack, overload []string) (Block, *Goodput) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := Block{
		TargetRate:             t.target(),
		AchievedRate:           t.achieved(),
		CompletionRate:         t.sus.completionRate(),
		Arrival:                t.s.Arrival,
		ObservedMaxConcurrency: t.maxFlight,
		DegradedReasons:        []string{},
	}
	if t.s.Arrival != Constant {
		bu := t.s.Burstiness
		b.Burstiness = &bu
	}
	if t.s.MaxConcurrency > 0 {
		c := t.s.MaxConcurrency
		b.MaxConcurrency = &c
	}
	if elapsed > 0 {
		m := t.latSum / elapsed
		b.MeanConcurrency = &m
	}
	lags := t.lags
	if t.sortedLags != nil {
		lags = t.sortedLags()
	} else if len(lags) > 0 {
		lags = append([]float64(nil), lags...)
		sort.Float64s(lags)
	}
	if len(lags) > 0 {
		b.ScheduleLagP50ms = ptr(stats.Linear(lags, 50))
		b.ScheduleLagP99ms = ptr(stats.Linear(lags, 99))
		b.ScheduleLagMaxms = ptr(lags[len(lags)-1])
	}
	b.DegradedReasons = t.reasons(b, hb, overload)
	b.Delivered = len(b.DegradedReasons) == 0

	if t.s.SLO == nil {
		return b, nil
	}
	g := &Goodput{GoodRequests: t.good, SLO: t.s.SLO.Millis()}
	if t.n > 0 {
		g.GoodFraction = ptr(float64(t.good) / float64(t.n))
	}
	if elapsed > 0 {
		g.GoodputRPS = ptr(float64(t.good) / elapsed)
		g.GoodputOutputTPS = ptr(float64(t.goodOut) / elapsed)
	}
	return b, g
}

// reasons lists, in words, why the run did not deliver its load and what
// to change; empty when it did.
func (t *Tracker) reasons(b Block, hb *HoldBack, overload []string) []string {
	var out []string
	short := false
	if b.TargetRate != nil && b.AchievedRate != nil && t.n >= 50 {
		target := *b.TargetRate
		want := target
		if p := t.planned(); p != nil && *p < want {
			want = *p // the random schedule itself asked for less
		}
		if *b.AchievedRate < 0.95*want {
			short = true
			out = append(out, fmt.Sprintf("achieved %.2f req/s, %.0f%% of the %s req/s target",
				*b.AchievedRate, 100**b.AchievedRate/target, num(target)))
		}
	}
	slow := b.ScheduleLagP99ms != nil && *b.ScheduleLagP99ms > t.limit
	if slow {
		out = append(out, fmt.Sprintf("p99 schedule lag %.1f ms is over the %.1f ms allowed (max(10 ms, 10%% of the mean gap))",
			*b.ScheduleLagP99ms, t.limit))
	}
	if short || slow {
		if n := t.late[HeldByWorkload]; n > 0 {
			what, fix := "the workload's own order", "lower --request-rate"
			if hb != nil {
				what, fix = hb.What, hb.Fix
			}
			out = append(out, fmt.Sprintf("%d of %d requests were held back by the workload's design, not by an overloaded client: %s; to deliver the rate, %s",
				n, t.n, what, fix))
		}
		if n := t.late[HeldByCap]; n > 0 {
			out = append(out, fmt.Sprintf("%d of %d requests waited for a free slot under --max-concurrency %d: the engine does not finish requests fast enough for this rate with %d in flight; raise --max-concurrency or lower --request-rate",
				n, t.n, t.s.MaxConcurrency, t.s.MaxConcurrency))
		}
		if n := t.late[NotHeld]; n > 0 {
			out = append(out, fmt.Sprintf("%d of %d requests left the client late with nothing holding them back: the client cannot keep up; lower --request-rate or spread the load over more client processes",
				n, t.n))
		}
	}
	for _, o := range overload {
		out = append(out, "client overloaded: "+o+" (latencies may be inflated)")
	}
	return out
}

func ptr(v float64) *float64 { return &v }

func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%g", v)
}

// KeptBytes is the memory of the per-request figures t keeps (the
// schedule lags, the sustain check's TTFTs): pointer-free, see
// stats.Collector.KeptBytes.
func (t *Tracker) KeptBytes() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return uint64(cap(t.lags))*8 + uint64(cap(t.sus.ttft))*uint64(unsafe.Sizeof(sentTTFT{}))
}
