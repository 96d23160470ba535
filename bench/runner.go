// Package bench is kvbench's engine-agnostic core: it resolves a run's
// settings, wires config, workload, sender, stats and record together,
// and emits events that the front-ends (TUI and headless) consume. It
// imports no UI package.
package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/metrics"
	"github.com/kvbench/kvbench/bench/overload"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/stats"
	"github.com/kvbench/kvbench/bench/workload"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/errs"
)

// Version, Commit and Date describe the build (set through ldflags by
// main).
var (
	Version = "dev"
	Commit  = "none"
	Date    = "unknown"
)

// EventKind says what happened.
type EventKind int

const (
	RunStarted EventKind = iota
	PhaseChanged
	RequestSent
	RequestFinished
	LogLine
)

// Event is one thing that happened during a run.
type Event struct {
	Kind EventKind
	Time time.Time

	// PhaseChanged
	Phase    string
	Total    int           // requests in the phase, -1 when unknown
	Duration time.Duration // planned duration of the phase, 0 when none

	// RequestSent, RequestFinished
	RequestID string
	Result    *sender.Result

	// LogLine
	Text string
	Warn bool
}

// Finish is how a run ended. Run returns it, and it is the only carrier
// of the summary and the exit code: the event stream just closes.
type Finish struct {
	Summary  *record.Summary
	ExitCode int
	// Sections are the workload's own report sections (and the engine's
	// metrics), Reasons why the workload's check failed; both go under
	// the summary's text.
	Sections []report.Section
	Reasons  []string
	// RecordError says what the run record lacks when it could not be
	// written completely (exit code 4); empty otherwise.
	RecordError string
}

// Snapshot is the live state of a run, cheap enough to poll ~10x/s.
type Snapshot struct {
	stats.Snapshot
	Phase        string
	PhaseDone    int // requests finished in the current phase
	PhaseTotal   int // -1 when unknown
	PhaseStart   time.Time
	PhaseLength  time.Duration
	InFlight     int
	Sent         int
	Started      time.Time
	Elapsed      time.Duration
	CPUPercent   float64 // of one core, over the last second
	Cores        int
	Warning      string // client overload warning, empty when fine
	DroppedEvent int
	Finished     bool

	// TimingErrorP99Ms is how late the client's timestamps could be so
	// far (p99, spec/record.md Client overload), nil before a figure;
	// Note says the machine is busy while the client keeps time.
	TimingErrorP99Ms *float64
	Note             string
	// ServerHitRate is the engine's own prefix-cache hit rate over the
	// measured phase so far (--metrics-url), nil when unknown.
	ServerHitRate *float64
	// Load is the running delivered-load verdict and good fraction.
	Load load.Live
	// ExpectedHitRatio and ExpectedHitRatioLRU are the hits a replayed
	// trace predicts (unbounded, and with an LRU cache of the KV budget)
	// over the requests with valid receipts so far; nil for other
	// workloads, and the LRU one nil without a budget.
	ExpectedHitRatio    *float64
	ExpectedHitRatioLRU *float64
}

// Runner runs one benchmark. It composes the parts below, each with one
// job; their fields and methods are the Runner's own through embedding.
type Runner struct {
	engineLink
	runFiles
	eventStream
	liveFigures
	dispatch
	overloadMonitor

	log   *slog.Logger // the debug log (--log-file)
	wl    workload.Workload
	stats *stats.Collector

	cacheReset *string  // what dropped the engine's cache (--reset-cache), nil when not asked
	warnings   []string // what the workload's plan check found, before the first request
}

// engineLink is the run's hold on the engine: the resolved setup (which
// owns the built-in engine, when there is one) and the HTTP client the
// requests go out through.
type engineLink struct {
	prep   *Prepared
	client *sender.Client
}

// runFiles are the run folder's writers: the record (config.json,
// requests.jsonl, the CSV, the summary) and the engine's metrics samples.
type runFiles struct {
	rec       *record.Writer
	appendErr atomic.Int64 // failed appends to requests.jsonl

	metricsURL  string
	metricsFile *os.File
	sampler     *metrics.Sampler
}

// eventStream is what the front-ends are told as the run goes, stamped
// with the run's clock.
type eventStream struct {
	now     func() time.Time
	events  chan Event
	dropped atomic.Int64 // request events the consumer was too slow for
}

// liveFigures are the run's state as Snapshot shows it; the counters are
// atomic, the rest is guarded by mu.
type liveFigures struct {
	inflight  atomic.Int64
	sent      atomic.Int64
	phaseDone atomic.Int64

	mu          sync.Mutex
	phase       string
	phaseTotal  int
	phaseStart  time.Time
	phaseLen    time.Duration
	started     time.Time
	cpuPct      float64
	warning     string
	note        string
	finished    bool
	measuring   bool    // the measured phase has started
	firstSubmit float64 // first measured submit, Unix seconds

	expected  expectedHits     // trace replay's predicted hits so far
	overload  overload.Result  // the detector's conclusion so far
	ovFigures overload.Figures // what it was judged on
}

// dispatch is how requests go out: the load settings and their gate,
// the delivered-load tracker, the shard and its start, the salt, and the
// contexts that stop dispatch and the requests in flight.
type dispatch struct {
	load     load.Settings
	gate     *load.Gate // nil: the workload's own schedule, uncapped
	tracker  *load.Tracker
	released sync.Map            // *sender.Request -> load.Ticket, released ahead of Send
	salt     *PromptSalt         // --prompt-salt, applied to every request sent
	streams  workload.StreamPlan // requests in flight at once, as planned: connections opened ahead

	shard   config.Shard
	startAt time.Time       // --start-at, zero when not given
	runCtx  context.Context // Run's context, for the wait for startAt

	reqCtx    context.Context
	reqCancel context.CancelFunc
	// stopDispatch ends the workload's dispatch (a failed record write);
	// requests in flight still finish.
	stopDispatch context.CancelFunc
}

// overloadMonitor is how the client overload detector reads the
// machine: its sampling period and probes.
type overloadMonitor struct {
	monitorEvery time.Duration    // CPU and overload sampling period (tests shorten it)
	probe        overload.Probe   // the overload detector's readings (tests fake them)
	timing       *overload.Timing // the timing-error probe (tests give it their clock)
}

// New builds the workload (validating its settings), returns a failed
// preflight (*EngineError), drops the engine's prefix cache when
// --reset-cache asks (an *EngineError when nothing answered), creates the
// run folder and writes config.json. No benchmark request is sent yet.
// ctx bounds the building (the workload's questions to the engine, the
// cache reset); once it is done New creates nothing.
func New(ctx context.Context, p *Prepared) (*Runner, error) {
	// The run's settings, decoded once here (a Prepared may be built by
	// hand).
	p.Settings = p.Config.Settings()
	set := p.Settings
	wl, err := workload.New(ctx, workload.Params{
		Config:      p.Config,
		TokensPerGB: p.TokensPerGB,
		Seed:        int64(set.Seed),
		Endpoint:    sender.Endpoint(set.Endpoint),
		Shard:       p.Config.Shard(),
		Engine:      &workload.Engine{BaseURL: p.EngineURL, APIKey: p.apiKey, Model: p.RequestModel()},
		L1GB:        p.L1GB,
		Lookups:     p.lmcacheLookups(),
		Budget:      p.Budget,
	})
	var unavailable *workload.UnavailableError
	if errors.As(err, &unavailable) {
		return nil, &EngineError{Err: err}
	}
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	// Load settings that do not resolve are refused below, in their turn.
	ls, lsErr := load.FromConfig(p.Config)
	plan := wl.PlanStreams(ls)
	if err := checkDescriptors(p, plan); err != nil {
		return nil, &UsageError{Err: err}
	}
	if p.PreflightErr != nil {
		return nil, p.PreflightErr
	}
	var cacheReset *string
	if set.ResetCache {
		ep, err := ResetCache(ctx, ResetOptions{BaseURL: p.EngineURL, APIKey: p.apiKey, UserInfo: p.user})
		if err != nil {
			return nil, err
		}
		cacheReset = &ep
	}
	outDir := set.OutputDir
	if outDir == "" {
		outDir = record.RunsDir()
	}
	now := p.Now
	if now == nil {
		now = time.Now
	}
	if lsErr != nil {
		return nil, &UsageError{Err: lsErr}
	}
	// A shard's folder says which shard it is, so the shards of one run
	// written to one volume in the same second get telling names.
	folderName := set.Name
	if sh := p.Config.Shard(); sh.Sharded() {
		folderName = strings.TrimPrefix(fmt.Sprintf("%s-shard-%d-of-%d", record.Sanitize(folderName), sh.Index, sh.Count), "-")
	}
	if err := ctx.Err(); err != nil {
		// The asker gave up (Back while preparing): no folder for a run
		// that will never be run.
		return nil, err
	}
	var rec *record.Writer
	if p.RunFolder != "" {
		rec, err = record.CreateNamed(outDir, p.RunFolder)
	} else {
		rec, err = record.Create(outDir, p.Config.Workload(), folderName, now())
	}
	if err != nil {
		return nil, &UsageError{Err: fmt.Errorf("--output-dir: %v", err)}
	}
	if err := rec.WriteConfig(rawJSON(p.Config.RecordJSON())); err != nil {
		rec.Close()
		return nil, &UsageError{Err: fmt.Errorf("--output-dir: %v", err)}
	}
	if !set.NoCSV {
		// Rows are written as requests finish; should that fail, the CSV
		// is made from requests.jsonl at the end instead.
		_ = rec.StreamCSV()
	}
	extra, _ := p.extraBody()
	client := sender.New(sender.Options{
		BaseURL:          p.EngineURL,
		Model:            p.RequestModel(),
		Endpoint:         sender.Endpoint(set.Endpoint),
		APIKey:           p.apiKey,
		UserInfo:         p.user,
		ExtraBody:        extra,
		IgnoreEOS:        set.IgnoreEOS,
		RequestTimeout:   set.RequestTimeout,
		IdleTimeout:      set.IdleTimeout,
		MaxResponseBytes: int64(set.MaxResponseBytes),
	})
	r := &Runner{
		engineLink:  engineLink{prep: p, client: client},
		runFiles:    runFiles{rec: rec},
		eventStream: eventStream{now: now, events: make(chan Event, 4096)},
		dispatch: dispatch{
			shard:   p.Config.Shard(),
			startAt: p.Config.StartAt(),
			runCtx:  context.Background(),
			load:    ls,
			streams: plan,
			gate:    load.NewGate(ls, now),
			tracker: load.NewTracker(ls),
		},
		overloadMonitor: overloadMonitor{timing: overload.NewTiming(probeClock(p), overload.RuntimeSched())},
		wl:              wl,
		stats:           stats.New(),
		log:             p.logger(),
	}
	r.stats.SetPercentiles(p.Config.Percentiles())
	// The schedule lags are the dispatch lags the collector keeps of the
	// same requests (but one whose line could not be written, which the
	// summary leaves out): kept once.
	r.tracker.LagsFrom(r.stats.SortedLags)
	runKey := ""
	if r.shard.Sharded() {
		runKey = p.Config.RunKey()
	}
	r.cacheReset = cacheReset
	r.salt = NewPromptSalt(set.PromptSalt, rec.ID(), runKey)
	r.reqCtx, r.reqCancel = context.WithCancel(context.Background())
	if raw := p.Config.ConnURL("metrics_url"); raw != "" {
		if raw == "builtin" && p.builtin != nil {
			raw = p.builtin.URL() + "/metrics"
		}
		u, err := metrics.NormalizeURL(raw)
		if err != nil {
			rec.Close()
			return nil, &UsageError{Err: err}
		}
		f, err := os.OpenFile(filepath.Join(rec.Dir(), "metrics.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			rec.Close()
			return nil, &UsageError{Err: fmt.Errorf("--output-dir: %v", err)}
		}
		r.metricsURL, r.metricsFile = u, f
	}
	return r, nil
}

// descriptorLimit raises the descriptor limit and returns it (tests
// replace it).
var descriptorLimit = raiseFDLimit

// fdHeadroom is what a run needs besides one descriptor per stream: the
// record's files and their reserve, metrics, the terminal, DNS.
const fdHeadroom = 32

// checkDescriptors raises the soft RLIMIT_NOFILE to the hard limit and
// refuses a planned concurrency that would still not fit, instead of
// failing mid-run with "too many open files".
func checkDescriptors(p *Prepared, plan workload.StreamPlan) error {
	streams, flag := plan.Streams, plan.Flag
	limit := descriptorLimit()
	if streams <= 0 || limit <= 0 {
		return nil
	}
	per, why := 1, "one socket per stream"
	if p.builtin != nil {
		per, why = 2, "two per stream with the built-in engine in this process"
	}
	need := openFDs() + streams*per + fdHeadroom
	if need <= limit {
		return nil
	}
	if plan.Rate > 0 {
		// Little's law sized it: say from what, and what else bounds it.
		return fmt.Errorf("%s %g: about %d concurrent streams (%g requests/s, each expected to take up to %s, with headroom) need about %d file descriptors (%s), but this process may open %d: raise the limit (ulimit -n %d), lower %s or set --max-concurrency",
			flag, plan.Rate, streams, plan.Rate, plan.Latency.Round(time.Millisecond), need, why, limit, need, flag)
	}
	return fmt.Errorf("%s %d: %d concurrent streams need about %d file descriptors (%s), but this process may open %d: raise the limit (ulimit -n %d) or lower %s",
		flag, streams, streams, need, why, limit, need, flag)
}

// rawJSON lets the record writer store pre-rendered JSON as is.
type rawJSON []byte

func (j rawJSON) MarshalJSON() ([]byte, error) { return j, nil }

// UsageError is a configuration problem found before anything was sent
// (exit code 2): the one usage error of every command.
type UsageError = errs.Usage

// IsUsage reports whether err is a usage or configuration error.
func IsUsage(err error) bool { return errs.IsUsage(err) }

// Dir is the run folder.
func (f *runFiles) Dir() string { return f.rec.Dir() }

// ID is the run id (the folder name).
func (f *runFiles) ID() string { return f.rec.ID() }

// Prepared is the resolved setup the runner was built from.
func (e *engineLink) Prepared() *Prepared { return e.prep }

// Describe returns the workload's sizing lines.
func (r *Runner) Describe() []string { return r.wl.Describe() }

// Events delivers the run's events; it is closed when the run has ended,
// before Run returns (the Finish is Run's return value).
// Request events are dropped (and counted) rather than ever slowing the
// run when the consumer falls behind; the others are always delivered.
func (s *eventStream) Events() <-chan Event { return s.events }

func (s *eventStream) emit(e Event) {
	e.Time = s.now()
	switch e.Kind {
	case RequestSent, RequestFinished:
		select {
		case s.events <- e:
		default:
			s.dropped.Add(1)
		}
	default:
		s.events <- e
	}
}

// Snapshot returns the live state.
func (r *Runner) Snapshot() Snapshot {
	s := Snapshot{Snapshot: r.stats.Snapshot()}
	r.liveFigures.fill(&s)
	s.DroppedEvent = int(r.dropped.Load())
	s.Cores = runtime.GOMAXPROCS(0)
	if r.sampler != nil {
		s.ServerHitRate = r.sampler.LiveHitRate()
	}
	r.mu.Lock()
	s.ExpectedHitRatio, s.ExpectedHitRatioLRU = r.expected.ratios()
	r.mu.Unlock()
	if !s.Started.IsZero() {
		s.Elapsed = r.now().Sub(s.Started)
	}
	s.Load = r.tracker.Live()
	return s
}

// fill copies the phase, the clock readings, the monitor's verdict and
// the request counters into s.
func (l *liveFigures) fill(s *Snapshot) {
	l.mu.Lock()
	s.Phase, s.PhaseTotal, s.PhaseStart, s.PhaseLength = l.phase, l.phaseTotal, l.phaseStart, l.phaseLen
	s.Started, s.CPUPercent, s.Warning, s.Finished = l.started, l.cpuPct, l.warning, l.finished
	s.TimingErrorP99Ms, s.Note = l.overload.TimingErrorP99Ms, l.note
	l.mu.Unlock()
	s.PhaseDone = int(l.phaseDone.Load())
	s.InFlight = int(l.inflight.Load())
	s.Sent = int(l.sent.Load())
}

// MeanTPOTms is the mean time per output token of the measured requests
// (a sweep cell's figure), nil when no request had two tokens.
func (d *dispatch) MeanTPOTms() *float64 { return d.tracker.MeanTPOTms() }

// KeepTTFTThirds has the run keep what TTFTThirds reads (16 bytes a
// successful request): a sweep cell asks for it before Run.
func (d *dispatch) KeepTTFTThirds() { d.tracker.KeepSentOrder() }

// TTFTThirds is the TTFT p50 (ms) of the first and of the last third of
// the measured requests in the order they went out (a sweep cell's
// sustained-load figures), nil when too few succeeded.
func (d *dispatch) TTFTThirds() (first, last *float64) { return d.tracker.TTFTThirds() }

// FailRecordWritesAfter makes the run's requests.jsonl refuse writes with
// err once it holds limit bytes, as a full disk would: for fault drills
// and tests. Call it before Run.
func (f *runFiles) FailRecordWritesAfter(limit int64, err error) { f.rec.FailWritesAfter(limit, err) }

// Abort stops every request in flight at once (a second Ctrl-C).
func (d *dispatch) Abort() { d.reqCancel() }

// gated reports whether a phase's requests go through the load gate:
// every measured phase; warmups and references never wait.
func gated(phase string) bool {
	return phase != sender.PhaseWarmup && phase != sender.PhaseReference
}

// release is the workloads' Env.Release: it times req through the gate.
func (r *Runner) release(ctx context.Context, req *sender.Request) bool {
	if r.gate == nil || !gated(req.Phase) {
		return ctx.Err() == nil
	}
	t, ok := r.gate.Release(ctx)
	if !ok {
		return false
	}
	applyTicket(req, t)
	r.released.Store(req, t)
	return true
}

func applyTicket(req *sender.Request, t load.Ticket) {
	if !t.Scheduled.IsZero() {
		req.Scheduled = t.Scheduled
	}
	req.HeldBack = req.HeldBack || t.Capped
}

func (r *Runner) send(ctx context.Context, req *sender.Request) (sender.Result, bool) {
	var ticket load.Ticket
	if r.gate != nil && gated(req.Phase) {
		if v, ok := r.released.LoadAndDelete(req); ok {
			ticket = v.(load.Ticket)
		} else {
			if ctx.Err() != nil || r.reqCtx.Err() != nil {
				return sender.Result{}, false
			}
			t, ok := r.gate.Release(ctx)
			if !ok {
				return sender.Result{}, false
			}
			ticket = t
			applyTicket(req, t)
		}
		defer r.gate.Done()
	}
	if ctx.Err() != nil || r.reqCtx.Err() != nil {
		return sender.Result{}, false
	}
	req.KeepGaps = req.KeepGaps || req.Phase != sender.PhaseWarmup
	measured := gated(req.Phase)
	if measured {
		r.tracker.Begin()
	}
	r.inflight.Add(1)
	r.sent.Add(1)
	r.emit(Event{Kind: RequestSent, RequestID: req.ID, Phase: req.Phase})
	sent := *req // salted on a copy: a workload may send one request twice
	r.salt.Apply(&sent)
	res := r.client.Do(r.reqCtx, &sent)
	res.TraceExpectation = req.Expect
	if req.Expect != nil {
		r.mu.Lock()
		r.expected.add(&res)
		r.mu.Unlock()
	}
	r.inflight.Add(-1)
	res.SLOMet = r.load.SLO.Met(&res)
	if measured {
		hold := load.NotHeld
		switch {
		case ticket.Capped:
			hold = load.HeldByCap
		case req.HeldBack:
			hold = load.HeldByWorkload
		}
		r.tracker.Finish(&res, hold)
		// The overload rules' request figures: lags nothing but the
		// client caused, and the TTFTs the allowance is a share of.
		if hold == load.NotHeld && res.DispatchLagMs != nil {
			r.timing.NoteLag(*res.DispatchLagMs)
		}
		if res.Successful && res.TTFT != nil {
			r.timing.NoteTTFT(*res.TTFT * 1000)
		}
	}
	if r.shard.Sharded() {
		idx := r.shard.Index
		res.Shard = &idx
	}
	if res.Measured() && res.SubmitTime > 0 {
		r.mu.Lock()
		if r.firstSubmit == 0 || res.SubmitTime < r.firstSubmit {
			r.firstSubmit = res.SubmitTime
		}
		r.mu.Unlock()
	}
	// The summary counts what the record holds: a request whose line
	// could not be written is left out of both.
	if err := r.rec.Append(&res); err != nil {
		if r.appendErr.Add(1) == 1 {
			r.logf(true, "cannot append to requests.jsonl: %v; no new request is sent", err)
			r.stopDispatch()
		}
	} else {
		r.stats.Add(&res)
	}
	r.phaseDone.Add(1)
	if r.log.Enabled(context.Background(), slog.LevelDebug) {
		r.logRequest(&res)
	}
	out := res
	out.RoundGapsMs = nil
	out.Text = ""
	r.emit(Event{Kind: RequestFinished, RequestID: res.RequestID, Phase: res.Phase, Result: &out})
	return res, true
}

func (r *Runner) setPhase(name string, total int, d time.Duration) {
	if name != sender.PhaseWarmup && name != sender.PhaseReference {
		r.waitStartAt()
	}
	r.mu.Lock()
	r.phase, r.phaseTotal, r.phaseStart, r.phaseLen = name, total, r.now(), d
	startMeasuring := !r.measuring && name != sender.PhaseWarmup && name != sender.PhaseReference
	if startMeasuring {
		r.measuring = true
	}
	r.mu.Unlock()
	if startMeasuring {
		r.timing.Mark()
	}
	if startMeasuring && r.sampler != nil {
		r.sampler.MarkMeasuredStart()
	}
	r.phaseDone.Store(0)
	r.log.Info("phase", "run", r.rec.ID(), "phase", name, "requests", total, "planned", d.String())
	r.emit(Event{Kind: PhaseChanged, Phase: name, Total: total, Duration: d})
}

// logRequest writes one finished request to the debug log: its outcome,
// and whether it was retried.
func (r *Runner) logRequest(res *sender.Result) {
	attrs := []any{"id", res.RequestID, "phase", res.Phase, "ok", res.Successful, "cache", res.CacheState}
	if res.TTFT != nil {
		attrs = append(attrs, "ttft_ms", *res.TTFT*1000)
	}
	if res.Retries > 0 {
		r.log.Debug("request retried on a fresh connection", "id", res.RequestID, "retries", res.Retries)
	}
	if res.Error != nil {
		attrs = append(attrs, "error", *res.Error)
		if res.ErrorDetail != nil {
			attrs = append(attrs, "detail", *res.ErrorDetail)
		}
	}
	r.log.Debug("request", attrs...)
}

// waitStartAt holds the first measured phase until --start-at, so the
// shards of one run, each done with its warmups, start measuring together.
func (r *Runner) waitStartAt() {
	r.mu.Lock()
	first := !r.measuring
	r.mu.Unlock()
	if !first || r.startAt.IsZero() {
		return
	}
	at := r.startAt.Format(time.RFC3339Nano)
	wait := r.startAt.Sub(r.now())
	if wait <= 0 {
		r.logf(true, "the measured phase starts %s after --start-at %s (the warmups took longer)", (-wait).Round(time.Millisecond), at)
		return
	}
	r.logf(false, "waiting %s for --start-at %s", wait.Round(time.Millisecond), at)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.runCtx.Done():
	}
}

// startSkewMs is the first measured submit minus --start-at, nil when
// either is unknown.
func (r *Runner) startSkewMs() *float64 {
	r.mu.Lock()
	first := r.firstSubmit
	r.mu.Unlock()
	if r.startAt.IsZero() || first == 0 {
		return nil
	}
	ms := (first - float64(r.startAt.UnixNano())/1e9) * 1000
	return &ms
}

func (r *Runner) logf(warn bool, format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	if warn {
		r.log.Warn(text)
	} else {
		r.log.Info(text)
	}
	r.emit(Event{Kind: LogLine, Text: text, Warn: warn})
}

// Run runs the workload until it finishes or ctx is cancelled (an
// interrupt: dispatch stops, in-flight requests get up to the idle
// timeout to end). It always writes the summary and returns it with the
// exit code of spec/cli.md.
func (r *Runner) Run(ctx context.Context) Finish {
	defer close(r.events)
	defer r.reqCancel() // every request has ended; frees the interrupt timer
	defer r.client.Close()
	defer r.prep.Close()
	startedAt := time.Now()
	r.mu.Lock()
	r.started = r.now()
	r.mu.Unlock()
	r.runCtx = ctx
	// The exact figures kept per request cost their size, not twice it.
	defer boundGCHeadroom(func() uint64 { return r.stats.KeptBytes() + r.tracker.KeptBytes() }, runBound)()
	r.log.Info("run started", "run", r.rec.ID(), "dir", r.rec.Dir(), "workload", r.prep.Config.Workload(),
		"engine", r.prep.DisplayURL(), "model", r.prep.RequestModel())
	r.emit(Event{Kind: RunStarted})
	for _, line := range r.wl.Describe() {
		r.logf(false, "%s", line)
	}
	for _, w := range ShardWarnings(r.prep.Config) {
		r.logf(true, "%s", w)
	}
	r.warnings = r.planWarnings(ctx)
	for _, w := range r.warnings {
		r.logf(true, "%s", w)
	}

	if r.metricsURL != "" {
		key := ""
		if metrics.SameHost(r.prep.EngineURL, r.metricsURL) {
			key = r.prep.apiKey // llama.cpp's --api-key guards /metrics too
		}
		r.sampler = metrics.Start(context.Background(), metrics.SamplerOptions{
			URL:    r.metricsURL,
			APIKey: key,
			Out:    r.metricsFile,
			Logf:   func(f string, a ...any) { r.logf(true, f, a...) },
			Log:    r.log,
		})
	}
	if streams := r.streams.Streams; streams > 1 {
		t0 := time.Now()
		n := r.client.Prewarm(ctx, streams)
		r.log.Info("connections opened ahead", "run", r.rec.ID(), "want", streams, "opened", n, "took", time.Since(t0).String())
	}
	monitorDone := make(chan struct{})
	stopMonitor := make(chan struct{})
	go r.monitor(stopMonitor, monitorDone)

	// After an interrupt, requests in flight get at most the idle timeout.
	stopGrace := context.AfterFunc(ctx, func() {
		t := time.NewTimer(r.prep.Settings.IdleTimeout)
		select {
		case <-t.C:
			r.reqCancel()
		case <-r.reqCtx.Done():
			t.Stop()
		}
	})
	env := workload.Env{
		Send:    r.send,
		Release: r.release,
		Phase:   r.setPhase,
		Logf:    func(f string, a ...any) { r.logf(false, f, a...) },
		Now:     r.now,
		RunDir:  r.rec.Dir(),
	}
	wctx, stopDispatch := context.WithCancel(ctx)
	defer stopDispatch()
	r.stopDispatch = stopDispatch
	runErr := r.wl.Run(wctx, env)
	stopGrace()
	close(stopMonitor)
	<-monitorDone

	// Every request has finished, so the CSV (streamed as they did) is
	// finished first: it then follows the last request by a flush and a
	// rename, not by the final figures' sorting as well.
	// Idle connections go before the record's last files are written.
	r.client.Close()
	var missing []string
	if lost, err := r.rec.Failed(); err != nil {
		missing = append(missing, fmt.Sprintf("requests.jsonl holds %d complete lines and lacks %d finished request(s) (%v)",
			r.rec.Lines(), lost, errs.Root(err)))
	}
	if !r.prep.Settings.NoCSV {
		if err := r.rec.WriteCSV(); err != nil {
			r.logf(true, "cannot write bench_results.csv: %v", err)
			missing = append(missing, fmt.Sprintf("bench_results.csv was not written (%v)", errs.Root(err)))
		}
	}

	interrupted := ctx.Err() != nil
	if runErr != nil && !interrupted {
		r.logf(true, "workload: %v", runErr)
	}
	outcome := r.wl.Outcome()
	var server *metrics.ServerMetrics
	if r.sampler != nil {
		r.sampler.MarkMeasuredEnd()
		sm := r.sampler.Stop()
		server = &sm
		r.metricsFile.Close()
		title, rows := metrics.Section(sm)
		sec := report.Section{Title: title}
		for _, row := range rows {
			sec.Rows = append(sec.Rows, report.Row{Label: row[0], Value: row[1]})
		}
		outcome.Sections = append(outcome.Sections, sec)
	}
	if e := record.ExpectationIn(outcome.Block); e != nil && e.Verdict != record.VerdictMet && len(r.warnings) > 0 {
		// The plan check said why before the run; the verdict repeats it.
		e.Reason += "; before the run: " + r.warnings[0]
	}
	blocks := r.stats.Final(stats.ClientInfo{CPUSeconds: stats.ProcessCPU().Seconds()})
	ov := r.finalOverload(blocks.Results.P50TTFTms)
	cl := &blocks.Client
	cl.TimingErrorP99Ms, cl.TimingErrorMaxMs = ov.TimingErrorP99Ms, ov.TimingErrorMaxMs
	cl.SchedLatencyP99Ms, cl.MachineCPUBusyMax = ov.SchedLatencyP99Ms, ov.MachineBusyMax
	cl.Overloaded, cl.OverloadReasons = ov.Overloaded, ov.Reasons

	sum := summarise(r.prep.Config, r.prep.DisplayURL(), r.rec.Dir(), blocks, outcome, record.RunInfo{
		ID:          r.rec.ID(),
		Name:        r.prep.Settings.Name,
		StartedAt:   startedAt.UTC().Format(time.RFC3339),
		FinishedAt:  time.Now().UTC().Format(time.RFC3339),
		Interrupted: interrupted,
	}, runErr != nil)
	var hold *load.HoldBack
	if hb, ok := r.wl.(workload.HoldBacker); ok {
		hold = hb.HoldBack()
	}
	judgeRun(sum, blocks, r.tracker, hold, r.overloadReasons(blocks.Client), nil)
	if len(missing) > 0 {
		sum.Run.ExitCode = errs.ExitRecord
	}
	code := sum.Run.ExitCode
	sum.CacheReset = r.cacheReset
	sum.Warnings = r.warnings
	if server != nil {
		sum.ServerMetrics = server
	}
	if b := r.prep.Config.ShardBlock(); b != nil {
		sum.Shard = b
		sum.StartSkewMs = r.startSkewMs()
	}
	if err := r.rec.WriteSummary(sum); err != nil {
		r.logf(true, "cannot write bench_summary.json: %v", err)
		missing = append(missing, fmt.Sprintf("bench_summary.json was not written (%v)", errs.Root(err)))
		code, sum.Run.ExitCode = errs.ExitRecord, errs.ExitRecord
	}
	if err := r.rec.Close(); err != nil && len(missing) == 0 {
		missing = append(missing, fmt.Sprintf("requests.jsonl may not be on disk (%v)", errs.Root(err)))
		code, sum.Run.ExitCode = errs.ExitRecord, errs.ExitRecord
	}
	recordErr := ""
	if len(missing) > 0 {
		recordErr = "the run record in " + r.rec.Dir() + " is incomplete: " + strings.Join(missing, "; ")
		r.logf(true, "%s", recordErr)
	}
	r.mu.Lock()
	r.finished = true
	r.mu.Unlock()
	r.log.Info("run finished", "run", r.rec.ID(), "exit_code", code, "interrupted", interrupted,
		"requests", sum.Results.TotalRequests, "failed", sum.Results.FailedRequests, "record_error", recordErr,
		"took", time.Since(startedAt).Round(time.Millisecond).String())
	return Finish{Summary: sum, ExitCode: code, Sections: outcome.Sections, Reasons: outcome.Reasons, RecordError: recordErr}
}

// summarise is bench_summary.json from what a run's request records
// gave: the collector's blocks and the workload's outcome. A run and the
// merge of a sharded run's folders both build their summary here, so the
// figures mean the same in both. The exit code follows spec/cli.md.
func summarise(cfg *config.Config, engineURL, dir string, blocks stats.Blocks, outcome workload.Outcome, run record.RunInfo, runFailed bool) *record.Summary {
	switch {
	case run.Interrupted:
		run.ExitCode = errs.ExitInterrupted
	case blocks.Results.FailedRequests > 0 || outcome.Failed || runFailed:
		run.ExitCode = errs.ExitFailed
	default:
		run.ExitCode = errs.ExitOK
	}
	record.ExpectationIn(outcome.Block).CountFailures(blocks.Results.FailedRequests, blocks.Results.TotalRequests)
	sum := &record.Summary{
		SchemaVersion: record.SchemaVersion,
		Run:           run,
		Config:        record.SummaryConfig(cfg, engineURL, dir),
		Results:       blocks.Results,
		Cache:         blocks.Cache,
		Latency:       blocks.Latency,
		Client:        blocks.Client,
		Workload:      outcome.Block,
		ByCacheState:  &blocks.ByCacheState,
		Serving:       &blocks.Serving,
		Errors:        &blocks.Errors,
		Series:        blocks.Series,
	}
	sum.Tool.Name = "kvbench"
	sum.Tool.Version = Version
	return sum
}

// overloadReasons are the client overload detector's findings, which
// make the run's load undelivered.
func (r *Runner) overloadReasons(c stats.Client) []string {
	if !c.Overloaded {
		return nil
	}
	return c.OverloadReasons
}

// Overload is the client overload detector's conclusion so far
// (spec/record.md, Client overload); final once Run has returned.
func (l *liveFigures) Overload() overload.Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	res := l.overload
	res.Reasons = append([]string{}, res.Reasons...)
	return res
}

// probeClock is what the timing probe wakes on: the built-in engine's
// path (a timer's goroutine writing to the reader) when the engine is in
// the process, a kernel event like a socket's otherwise.
func probeClock(p *Prepared) overload.Clock {
	if p.Builtin() {
		return overload.InProcessClock()
	}
	return overload.WakeClock()
}

// finalOverload judges the run on the monitor's last figures and the
// results' TTFT p50, and keeps the verdict for Overload.
func (l *liveFigures) finalOverload(ttftP50Ms *float64) overload.Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.ovFigures
	f.TTFTP50Ms, f.TTFTPending = ttftP50Ms, false
	l.overload = overload.Judge(f)
	res := l.overload
	res.Reasons = append([]string{}, res.Reasons...)
	return res
}

// monitor runs the timing probe and samples, once a second, the
// process's and the machine's CPU; it judges the run so far and warns
// (once per reason) when the client may have read its sockets late. A
// last sample is taken at stop.
func (r *Runner) monitor(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	probeDone := make(chan struct{})
	go func() {
		defer close(probeDone)
		r.timing.Run(stop)
	}()
	defer func() { <-probeDone }()
	every := r.period()
	probe := r.readings()
	t := time.NewTicker(every)
	defer t.Stop()
	d := overload.New(runtime.GOMAXPROCS(0))
	lagLimit := load.LagLimitMs(r.load)
	measuring := func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.measuring
	}
	last := time.Now()
	d.Observe(probe(last), measuring())
	warned := map[string]bool{}
	for {
		stopping := false
		select {
		case <-stop:
			stopping = true
		case <-t.C:
		}
		// A last sample only when it covers enough time to mean something.
		if now := time.Now(); !stopping || now.Sub(last) >= every/2 {
			d.Observe(probe(now), measuring())
			last = now
		}
		tf := r.timing.Figures()
		f := d.Figures(tf, tf.TTFTP50Ms, lagLimit)
		// Live, the allowance waits for a first token.
		f.TTFTPending = tf.TTFTP50Ms == nil
		res := overload.Judge(f)
		var fired []string
		for i, reason := range res.Reasons {
			if !warned[res.Rules[i]] {
				warned[res.Rules[i]] = true
				fired = append(fired, reason)
			}
		}
		r.mu.Lock()
		r.overload, r.ovFigures = res, f
		r.cpuPct = res.CPUPercent
		r.warning, r.note = res.Warning(), res.Note
		r.mu.Unlock()
		for _, reason := range fired {
			in := overload.Inflation(res.TimingErrorP99Ms, res.TimingErrorMaxMs)
			if in != "" {
				in = " " + in
			}
			r.logf(true, "client overloaded, latencies may be inflated%s: %s", in, reason)
		}
		if stopping {
			return
		}
	}
}

// period is the sampling period: a second unless a test shortens it.
func (m *overloadMonitor) period() time.Duration {
	if m.monitorEvery <= 0 {
		return time.Second
	}
	return m.monitorEvery
}

// readings is the detector's probe: the process's and the machine's
// CPU unless a test fakes them.
func (m *overloadMonitor) readings() overload.Probe {
	if m.probe == nil {
		return overload.SystemProbe(stats.ProcessCPU)
	}
	return m.probe
}

// planCheckTime bounds the plan check's questions to the engine (its
// context length, a few /tokenize calls).
const planCheckTime = 5 * time.Second

// planWarnings asks the workload to check its plan against the engine
// (spec/workloads.md, "sizes are checked up front").
func (r *Runner) planWarnings(ctx context.Context) []string {
	pc, ok := r.wl.(workload.PlanChecker)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, planCheckTime)
	defer cancel()
	e := &workload.Engine{BaseURL: r.prep.EngineURL, APIKey: r.prep.apiKey, Model: r.prep.RequestModel()}
	check := workload.PlanCheck{ContextLength: workload.ContextLength(ctx, e), Tokens: workload.EngineTokens(e)}
	if line := r.salt.Line("plan"); line != "" {
		check.SaltTokens = len(strings.Fields(line)) + 1
		if n, ok := check.Tokens(ctx, line); ok {
			check.SaltTokens = n
		}
	}
	return pc.PlanWarnings(ctx, check)
}

// ShardWarnings are the warnings a shard gives about what splitting does
// to its run: independent gamma arrivals do not add up to a gamma
// process (Poisson ones do).
func ShardWarnings(c *config.Config) []string {
	sh := c.Shard()
	if !sh.Sharded() {
		return nil
	}
	ls, err := load.FromConfig(c)
	if err != nil || !ls.Timed() || ls.Arrival != load.Gamma || ls.Burstiness == 1 {
		return nil
	}
	return []string{fmt.Sprintf("shard %s sends 1/%d of the rate with gamma gaps (--burstiness %g): the sum of %d gamma processes is not a gamma process, so the merged run's arrivals are not the burstiness asked for",
		sh, sh.Count, ls.Burstiness, sh.Count)}
}

// expectedHits sums trace replay's predictions over the requests whose
// receipts are valid, for the live figures.
type expectedHits struct {
	input, unbounded, lru int
	lruKnown              bool
}

func (e *expectedHits) add(res *sender.Result) {
	x := res.TraceExpectation
	if res.CacheState == sender.StateUnverified || res.PromptTokens == nil || res.CachedTokens == nil {
		return
	}
	e.input += x.InputTokens
	e.unbounded += x.ExpectedCachedTokens
	if x.ExpectedCachedTokensLRU != nil {
		e.lru += *x.ExpectedCachedTokensLRU
		e.lruKnown = true
	}
}

func (e *expectedHits) ratios() (unbounded, lru *float64) {
	if e.input == 0 {
		return nil, nil
	}
	u := float64(e.unbounded) / float64(e.input)
	if e.lruKnown {
		l := float64(e.lru) / float64(e.input)
		lru = &l
	}
	return &u, lru
}

// Discard gives up a runner that was prepared but will never run (its
// screen went away while it was being prepared): the built-in engine
// stops, connections close, and the run folder, which holds nothing
// measured, is removed.
func (r *Runner) Discard() error {
	r.client.Close()
	r.prep.Close()
	if r.metricsFile != nil {
		r.metricsFile.Close()
	}
	dir := r.rec.Dir()
	if err := r.rec.Close(); err != nil {
		return fmt.Errorf("discard run %s: %w", r.rec.ID(), err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("discard run %s: %w", r.rec.ID(), err)
	}
	r.log.Info("prepared run discarded: its screen went away", "run", r.rec.ID())
	return nil
}
