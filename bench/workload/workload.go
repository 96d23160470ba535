// Package workload holds kvbench's workloads: each builds its prompts and
// schedule from the config and dispatches requests through an Env that the
// runner provides. Workloads never touch the record, the stats or a UI.
package workload

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
)

// Env is what a workload may use while it runs.
type Env struct {
	// Send dispatches one request and blocks until it has finished; the
	// runner records it, counts it and emits its events. If ctx is already
	// done Send sends nothing and returns ok=false. Once sent, a request is
	// not cancelled by ctx: it ends on its own or by the runner's timeouts.
	Send func(ctx context.Context, req *sender.Request) (res sender.Result, ok bool)
	// Phase announces a phase ("warmup", "measuring", ...) and its request
	// total (-1 when unknown) or its planned duration (0 when none).
	Phase func(name string, total int, duration time.Duration)
	// Logf adds a line to the run's log.
	Logf func(format string, args ...any)
	// Now is the clock (the runner's; tests inject one).
	Now func() time.Time
	// RunDir is the run folder, for a workload's own output files.
	RunDir string
	// Release times the next eligible measured request (spec/load.md):
	// it blocks until the run's arrival process and concurrency cap let
	// req go and marks it with its release time. A workload that sends
	// several requests at once calls it in its own order, one request
	// after another, before handing each to Send; Send releases any
	// request not released yet. ok is false when ctx ended first. Nil
	// means no load shaping.
	Release func(ctx context.Context, req *sender.Request) (ok bool)
}

// release calls env.Release when there is one.
func (env Env) release(ctx context.Context, req *sender.Request) bool {
	if env.Release == nil {
		return ctx.Err() == nil
	}
	return env.Release(ctx, req)
}

// HoldBacker is a workload that holds measured requests back by design
// (an in-flight cap, a busy chat session, one request after another):
// it says how, and what a user changes to deliver a higher rate.
type HoldBacker interface {
	HoldBack() *load.HoldBack
}

// Params are the resolved run-wide values a workload sizes itself from.
type Params struct {
	Config *config.Config
	// Settings are Config's general settings, decoded by New.
	Settings    config.Settings
	TokensPerGB int
	Seed        int64
	// Endpoint is the endpoint requests go to unless a workload needs a
	// specific one.
	Endpoint sender.Endpoint
	// L1GB is the LMCache server's first tier in GB (its /status), 0 when
	// unknown; kv-tier-pressure derives its pool from it.
	L1GB float64
	// Lookups reads the LMCache server's lookup counters; nil without
	// --lmcache-url.
	Lookups LookupSource
	// Tokenize replaces the engine's /tokenize (tests); nil means Engine's.
	Tokenize TokenizeFunc
	// Shard is the share of the run this process sends
	// (spec/scale-out.md); the zero value and {0, 1} are the whole run.
	Shard config.Shard
	// Engine reaches the engine outside the run's requests (trace replay
	// learns its token pool through /tokenize); nil when unknown.
	Engine *Engine
	// Budget is the KV cache the workload's expectation counts on; the
	// zero value means BudgetFromConfig.
	Budget KVBudget
	// FromRecord builds the workload to rebuild a finished run's outcome
	// from its record (kvbench merge): it reads no input file and asks no
	// engine, and only ShardOf, AddShardBlock, Observe and Outcome are
	// called.
	FromRecord bool
}

// budget is p.Budget, else the one the config gives.
func (p Params) budget() KVBudget {
	if p.Budget.Tokens > 0 || p.Budget.What != "" {
		return p.Budget
	}
	return BudgetFromConfig(p.Config, p.TokensPerGB)
}

// shard is p.Shard with the zero value read as the whole run.
func (p Params) shard() config.Shard {
	if p.Shard.Count < 1 {
		return config.Shard{Index: 0, Count: 1}
	}
	return p.Shard
}

// Engine is how a workload may query the engine before the run.
type Engine struct {
	BaseURL string // normalised, ends in /v1
	APIKey  string // never printed or stored
	Model   string // the model field sent in requests
}

// UnavailableError is an engine that cannot do what the workload needs,
// found before anything was sent (exit 3).
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string { return e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

// Warmup reports whether warmup phases run (not --no-warmup).
func (p Params) Warmup() bool { return !p.Settings.NoWarmup }

// Outcome is what a workload reports when it has finished.
type Outcome struct {
	// Block is the `workload` block of bench_summary.json.
	Block any
	// Sections are the workload's lines in the text summary: what it
	// expected next to what the receipts observed.
	Sections []report.Section
	// Failed reports a failed qualification (cache-probe) or an exactness
	// difference (concurrent-exactness): exit 1 with Reasons listed.
	Failed  bool
	Reasons []string
}

// Workload is one benchmark.
type Workload interface {
	// Name is the workload's name (config.Workloads).
	Name() string
	// Describe returns the sizing lines logged before the run starts.
	Describe() []string
	// Run dispatches every request; it returns when all have finished or
	// ctx is done (no new dispatch; in-flight requests still finish).
	Run(ctx context.Context, env Env) error
	// Outcome is called once after Run returned.
	Outcome() Outcome
	// PlanStreams is the most requests it holds in flight at once under
	// the load ls, from its own settings (an in-flight setting, its
	// concurrency levels, its sessions), the --max-concurrency cap and,
	// for arrivals at a rate, Little's law.
	PlanStreams(ls load.Settings) StreamPlan
}

// Observer is a workload whose outcome is built from the records of its
// finished requests alone, in the order their lines are read: the run
// feeds it each result as it finishes, and kvbench merge rebuilds the
// outcome of a sharded run from the merged lines with the same code.
type Observer interface {
	Workload
	// Observe adds one finished request (any phase) as recorded. Calls
	// are serialised by the caller.
	Observe(r *sender.Result)
}

// ShardCounter is a workload whose outcome also holds run-time counters
// that the records do not carry; merge adds each shard's from the
// workload block of its summary.
type ShardCounter interface {
	AddShardBlock(block []byte) error
}

// ShardOwner is a workload whose request ids say which shard of a
// sharded run sends them (spec/scale-out.md): merge checks that every
// line of a shard is one that shard sends.
type ShardOwner interface {
	// ShardOf is the index of the shard of count that sends request id,
	// AnyShard when the id does not say (a trace split by conversation);
	// ok is false when id is none this workload sends.
	ShardOf(id string, count int) (shard int, ok bool)
}

// AnyShard is ShardOf's index for an id that does not name its shard.
const AnyShard = -1

// idNumber reads s as a number the way fmt's %d writes a non-negative
// int: digits only, no sign, no leading zero (so one number is one id).
func idNumber(s string) (int, bool) {
	if s == "" || len(s) > 18 || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// idNumbers reads id as prefix, a number, then for each further
// separator that separator and a number ("doc3_q1": "doc", "_q").
func idNumbers(id, prefix string, seps ...string) ([]int, bool) {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok {
		return nil, false
	}
	var out []int
	for _, sep := range seps {
		head, tail, found := strings.Cut(rest, sep)
		n, ok := idNumber(head)
		if !found || !ok {
			return nil, false
		}
		out, rest = append(out, n), tail
	}
	n, ok := idNumber(rest)
	return append(out, n), ok
}

// Factory builds a workload from resolved parameters; validation errors
// name the flag and the allowed range. ctx bounds what the building asks
// of the engine or the network (a vocabulary, a dataset, a context
// length): the caller's cancel stops it.
type Factory func(ctx context.Context, p Params) (Workload, error)

// New validates the parameters and builds the named workload.
func New(ctx context.Context, p Params) (Workload, error) {
	p.Settings = p.Config.Settings()
	name := p.Settings.Workload
	k, ok := kinds[name]
	if !ok {
		return nil, fmt.Errorf("--workload %q is not available", name)
	}
	if p.FromRecord && !k.Rebuildable {
		return nil, fmt.Errorf("the outcome of %s is not rebuilt from its record", name)
	}
	if p.TokensPerGB > config.MaxTokensPerGB {
		return nil, fmt.Errorf("tokens per GB %d (from --lmcache-url) is out of range: at most %d", p.TokensPerGB, config.MaxTokensPerGB)
	}
	if err := CheckPlan(p.Config, p.TokensPerGB); err != nil {
		return nil, err
	}
	return k.New(ctx, p)
}
