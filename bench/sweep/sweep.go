package sweep

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"github.com/kvbench/kvbench/internal/errs"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/workload"
	"github.com/kvbench/kvbench/config"
)

// sweep.csv sits beside record.SweepFile in a sweep folder.
const CSVFile = "sweep.csv"

// Dimensions a sweep varies.
const (
	Rate        = "rate"
	Concurrency = "concurrency"
)

// Options describe one sweep.
type Options struct {
	// Config is the cells' run config (flags as for `kvbench run`).
	Config    *config.Config
	Dimension string    // Rate, Concurrency or WorkingSet
	Values    []float64 // the list; a search starts at its first value
	Search    bool
	// GoodputTarget is the good fraction a cell must reach to pass;
	// Precision ends a search when the last pass and the first fail are
	// within it of each other (relative); MaxCells bounds a search.
	GoodputTarget, Precision float64
	MaxCells                 int
	// HitTarget is a working-set cell's pass mark: its hit ratio at
	// least HitTarget x its ideal hit ratio.
	HitTarget float64
	// Now is the clock of the folder name and times; nil is time.Now.
	Now func() time.Time
	// Started is called once the sweep folder exists; Cell after each
	// cell with its index and figures; CellStarted before each. Any may
	// be nil.
	Started     func(dir string)
	CellStarted func(i int, value float64, r *bench.Runner)
	Cell        func(i int, c Cell)
	// RunCell drives one cell's runner to its end (a front-end consumes
	// its events); nil drains the events and runs it.
	RunCell func(ctx context.Context, r *bench.Runner) bench.Finish
}

// sweep.json's types are the record's (bench/record/sweep.go), under the
// names the sweep runner and its front-ends use.
type (
	Info   = record.SweepInfo
	Cell   = record.SweepCell
	Result = record.SweepResult
	File   = record.SweepSummary
)

// Validate checks the options before anything runs (exit code 2).
func (o *Options) Validate() error {
	switch o.Dimension {
	case Rate, Concurrency:
	case WorkingSet:
		return o.validateWorkingSet()
	default:
		return fmt.Errorf("give --sweep-rate LIST, --sweep-concurrency LIST or --sweep-working-set LIST")
	}
	if len(o.Values) == 0 {
		return fmt.Errorf("--sweep-%s: empty list", o.Dimension)
	}
	if o.Dimension == Concurrency {
		for _, v := range o.Values {
			if v != math.Trunc(v) || v < 1 || v > config.MaxStreams {
				return fmt.Errorf("--sweep-concurrency: %s is not a whole number in [1, %d]", Format(v), config.MaxStreams)
			}
		}
	} else {
		for _, v := range o.Values {
			if v > config.MaxRate {
				return fmt.Errorf("--sweep-rate: %s is over %d requests/s", Format(v), config.MaxRate)
			}
		}
	}
	set := o.Config.Settings()
	slo, err := load.ParseSLO(set.Load.SLO)
	if err != nil {
		return err
	}
	if o.Search {
		if slo == nil {
			return fmt.Errorf("--search needs --slo (e.g. --slo ttft=500ms): a cell passes when its good fraction reaches --goodput-target")
		}
		if !(o.GoodputTarget > 0 && o.GoodputTarget <= 1) {
			return fmt.Errorf("--goodput-target must be in (0, 1] (got %v)", o.GoodputTarget)
		}
		if !(o.Precision > 0 && o.Precision < 1) {
			return fmt.Errorf("--search-precision must be in (0, 1) (got %v)", o.Precision)
		}
		if o.MaxCells < 1 || o.MaxCells > 1000 {
			return fmt.Errorf("--search-max-cells must be in [1, 1000] (got %d)", o.MaxCells)
		}
	}
	if r := config.RateOf(o.Config.Workload()); o.Dimension == Rate && r != nil && o.Config.IsSet(r.Key) {
		return fmt.Errorf("--sweep-rate sets the rate of each cell: drop %s", r.Flag())
	}
	if o.Dimension == Rate && set.Load.RequestRateGiven {
		return fmt.Errorf("--sweep-rate sets --request-rate for each cell: drop --request-rate")
	}
	if o.Dimension == Concurrency && set.Load.MaxConcurrencyGiven {
		return fmt.Errorf("--sweep-concurrency sets --max-concurrency for each cell: drop --max-concurrency")
	}
	return nil
}

// Run runs the sweep. It returns sweep.json's content, the sweep folder
// ("" when nothing was created) and the exit code of spec/load.md; err
// is a usage or engine problem that stopped it (what ran is recorded).
func Run(ctx context.Context, o Options) (*File, string, int, error) {
	if err := o.Validate(); err != nil {
		return nil, "", 2, &bench.UsageError{Err: err}
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	set := o.Config.Settings()
	slo, _ := load.ParseSLO(set.Load.SLO)
	f := &File{SchemaVersion: 1, Tool: record.Tool{Name: "kvbench", Version: bench.Version}}
	f.Sweep = Info{Name: set.Name, Dimension: o.Dimension, Values: o.Values, Search: o.Search}
	if slo != nil {
		g := o.GoodputTarget
		f.Sweep.GoodputTarget = &g
		ms := slo.Millis()
		f.Sweep.SLO = &ms
	}
	if o.Dimension == WorkingSet {
		h := o.HitTarget
		f.Sweep.HitTarget = &h
	}
	f.Cells = []Cell{}
	s := &sweeper{o: o, f: f, now: now, slo: slo}
	code, err := s.run(ctx)
	if s.dir != "" {
		f.Sweep.FinishedAt = now().UTC().Format(time.RFC3339)
		f.Result = s.result()
		if werr := s.write(); werr != nil && err == nil {
			err, code = werr, 4
		}
	}
	s.lock.Unlock()
	return f, s.dir, code, err
}

type sweeper struct {
	o   Options
	f   *File
	now func() time.Time
	slo *load.SLO
	dir string
	// lock marks the sweep folder as in progress (record.LockFile) from
	// its creation to the last write of sweep.json.
	lock *record.Lock
	// tpg is the tokens per GB the first cell resolved; declared what
	// the engine says its cache holds (working-set sweeps).
	tpg      int
	declared *record.Declared
	// ws is what the current working-set cell sends.
	ws workload.WorkingSet
}

func (s *sweeper) run(ctx context.Context) (int, error) {
	code := errs.ExitOK
	note := func(c Cell) {
		switch {
		case c.ExitCode == errs.ExitInterrupted:
			code = errs.ExitInterrupted
		case c.ExitCode == errs.ExitRecord && code != errs.ExitInterrupted:
			code = errs.ExitRecord
		case (c.ExitCode == errs.ExitFailed || c.FailedRequests > 0) && code == errs.ExitOK:
			code = errs.ExitFailed
		}
	}
	next := s.plan()
	for i := 0; ; i++ {
		v, ok := next(i)
		if !ok {
			break
		}
		if ctx.Err() != nil {
			s.f.Sweep.Interrupted = true
			return errs.ExitInterrupted, nil
		}
		c, err := s.cell(ctx, i, v)
		if err != nil {
			if code, ok := errs.CodeOf(err); ok {
				return code, err
			}
			return errs.ExitFailed, err
		}
		s.f.Cells = append(s.f.Cells, c)
		if werr := s.write(); werr != nil {
			return errs.ExitRecord, werr
		}
		if s.o.Cell != nil {
			s.o.Cell(i, c)
		}
		note(c)
		if c.ExitCode == errs.ExitInterrupted || ctx.Err() != nil {
			s.f.Sweep.Interrupted = true
			return errs.ExitInterrupted, nil
		}
		if c.Status == record.CellCut {
			// The disk (or the descriptors) gave out: a next cell would
			// be cut too, or leave no record at all.
			return errs.ExitRecord, nil
		}
	}
	return code, nil
}

// plan yields the value of cell i: the list in order, or the search's
// next step from the cells so far.
func (s *sweeper) plan() func(i int) (float64, bool) {
	if s.o.Search && s.o.Dimension == WorkingSet {
		return s.workingSetPlan()
	}
	if !s.o.Search {
		return func(i int) (float64, bool) {
			if i >= len(s.o.Values) {
				return 0, false
			}
			return s.o.Values[i], true
		}
	}
	return func(i int) (float64, bool) {
		if i == 0 {
			return s.o.Values[0], true
		}
		if i >= s.o.MaxCells {
			return 0, false
		}
		lo, hi := s.bounds()
		if lo == 0 && hi > 0 && s.undelivered(hi) {
			// Nothing passed and the lowest load tried was not delivered:
			// halving further would only lengthen the cells (a cell is a
			// fixed number of requests) while the client, not the
			// engine, is what falls short.
			return 0, false
		}
		var v float64
		switch {
		case hi == 0: // every cell passed: double
			v = 2 * lo
		case s.o.Dimension == Concurrency:
			if hi-lo <= 1 {
				return 0, false
			}
			v = math.Floor((lo + hi) / 2)
		default:
			if lo > 0 && hi-lo <= s.o.Precision*hi {
				return 0, false
			}
			v = round((lo + hi) / 2)
			if v < 1e-3 {
				return 0, false
			}
		}
		if s.o.Dimension == Rate && v > config.MaxRate || s.o.Dimension == Concurrency && v > config.MaxStreams {
			return 0, false
		}
		return v, true
	}
}

// status is a cell's verdict: its recorded status (cells made without
// one, as in the search's tests, are judged by their good fraction).
func (s *sweeper) status(c Cell) string { return c.Verdict(&s.o.GoodputTarget) }

// pass reports whether a cell passed: delivered, sustained and at the
// goodput target.
func (s *sweeper) pass(c Cell) bool { return s.status(c) == record.CellPass }

// bounds are the highest passing value and the lowest value above it
// that failed or whose load was not delivered (0 when none): a search
// learns nothing at or above a load it could not deliver, so it bisects
// below it too.
func (s *sweeper) bounds() (lo, hi float64) {
	for _, c := range s.f.Cells {
		if s.pass(c) && c.Value > lo {
			lo = c.Value
		}
	}
	for _, c := range s.f.Cells {
		st := s.status(c)
		if (record.Fails(st) || st == record.CellNotDelivered) && c.Value > lo && (hi == 0 || c.Value < hi) {
			hi = c.Value
		}
	}
	return lo, hi
}

// undelivered reports whether a cell at value v was not delivered.
func (s *sweeper) undelivered(v float64) bool {
	for _, c := range s.f.Cells {
		if c.Value == v && s.status(c) == record.CellNotDelivered {
			return true
		}
	}
	return false
}

func (s *sweeper) result() *Result {
	if s.o.Dimension == WorkingSet {
		return s.workingSetResult()
	}
	if s.slo == nil {
		return nil
	}
	return ResultOf(s.f.Cells, s.o.GoodputTarget)
}

// ResultOf is what the cells of a sweep with an SLO (cells pass at
// target) established: the highest delivered passing value, and the
// values above it whose load was not delivered, each with its first
// reason; nil when no cell passed and every load was delivered.
func ResultOf(cells []Cell, target float64) *Result {
	var best *Cell
	for i := range cells {
		c := &cells[i]
		if c.Verdict(&target) == record.CellPass && (best == nil || c.Value > best.Value) {
			best = c
		}
	}
	r := &Result{UndeliveredAbove: []record.Undelivered{}}
	if best != nil {
		v := best.Value
		r.MaxValue, r.GoodFractionAtMax = &v, best.GoodFraction
	}
	seen := map[float64]bool{}
	for _, c := range cells {
		if c.Verdict(&target) != record.CellNotDelivered || best != nil && c.Value <= best.Value || seen[c.Value] {
			continue
		}
		seen[c.Value] = true
		why := "the load was not delivered"
		if len(c.Reasons) > 0 {
			why = c.Reasons[0]
		}
		r.UndeliveredAbove = append(r.UndeliveredAbove, record.Undelivered{Value: c.Value, Reason: why})
	}
	sort.Slice(r.UndeliveredAbove, func(i, j int) bool { return r.UndeliveredAbove[i].Value < r.UndeliveredAbove[j].Value })
	if best == nil && len(r.UndeliveredAbove) == 0 {
		return nil
	}
	return r
}

// cellConfig is the base config with the cell's value and its own salt.
func (s *sweeper) cellConfig(i int, v float64) (*config.Config, error) {
	c := s.o.Config.Clone()
	var err error
	if s.o.Dimension == WorkingSet {
		c, s.ws, err = s.size(v)
	} else if s.o.Dimension == Rate {
		err = c.SetRequestRate(Format(v))
		if r := config.RateOf(c.Workload()); err == nil && r != nil {
			err = c.Set(r.Key, v)
		}
	} else {
		err = c.SetMaxConcurrency(int(v))
	}
	if err != nil {
		return nil, err
	}
	// Cells never warm each other: auto salts are unique per run; a fixed
	// salt gets the cell's number.
	if salt := c.Settings().PromptSalt; salt != "auto" && salt != "none" {
		if err := c.SetPromptSalt(fmt.Sprintf("%s cell %02d", salt, i+1)); err != nil {
			return nil, err
		}
	}
	return c, c.SetOutputDir(filepath.Join(s.dir, record.SweepCellsDir))
}

// cell runs cell i at value v.
func (s *sweeper) cell(ctx context.Context, i int, v float64) (Cell, error) {
	c := s.o.Config.Clone()
	if s.dir == "" {
		// The first cell's engine checks come before the sweep folder, so
		// an unavailable engine leaves nothing behind.
		p, err := bench.Prepare(ctx, c)
		if err != nil {
			return Cell{}, err
		}
		perr := p.PreflightErr
		if perr == nil && s.o.Dimension == WorkingSet {
			s.tpg = p.TokensPerGB
			s.declared = p.DeclaredCache(ctx)
		}
		p.Close()
		if perr != nil {
			return Cell{}, perr
		}
		if err := s.create(); err != nil {
			return Cell{}, &bench.UsageError{Err: err}
		}
	}
	cfg, err := s.cellConfig(i, v)
	if err != nil {
		return Cell{}, &bench.UsageError{Err: err}
	}
	p, err := bench.Prepare(ctx, cfg)
	if err != nil {
		return Cell{}, err
	}
	p.RunFolder = fmt.Sprintf("%02d-%s-%s", i+1, cellDimension(s.o.Dimension), Format(v))
	r, err := bench.New(ctx, p)
	if err != nil {
		p.Close()
		return Cell{}, err
	}
	r.KeepTTFTThirds() // whether the cell was sustained
	if s.o.CellStarted != nil {
		s.o.CellStarted(i, v, r)
	}
	run := s.o.RunCell
	if run == nil {
		run = func(ctx context.Context, r *bench.Runner) bench.Finish {
			go func() {
				for range r.Events() {
				}
			}()
			return r.Run(ctx)
		}
	}
	fin := run(ctx, r)
	cell := cellOf(v, r.ID(), fin, r.MeanTPOTms())
	cell.TTFTP50FirstThirdms, cell.TTFTP50LastThirdms = r.TTFTThirds()
	if s.o.Dimension == WorkingSet {
		s.workingSetFigures(&cell, s.ws, fin)
		JudgeWorkingSet(&cell, s.o.HitTarget, fin.RecordError)
		return cell, nil
	}
	s.judge(&cell, fin.RecordError)
	return cell, nil
}

func cellOf(v float64, id string, fin bench.Finish, tpot *float64) Cell {
	c := Cell{Value: v, RunID: id, ExitCode: fin.ExitCode, MeanTPOTms: tpot, Reasons: []string{}}
	sum := fin.Summary
	if sum == nil {
		return c
	}
	res := sum.Results
	c.TotalRequests, c.FailedRequests, c.OutputThroughput, c.HitRatio = res.TotalRequests, res.FailedRequests, res.OutputThroughput, sum.Cache.HitRatio
	if res.SuccessfulRequests > 0 {
		c.P50TTFTms, c.P99TTFTms = res.P50TTFTms, res.P99TTFTms
	}
	if l := sum.Load; l != nil {
		d := l.Delivered
		c.TargetRate, c.AchievedRate, c.MeanConcurrency, c.Delivered = l.TargetRate, l.AchievedRate, l.MeanConcurrency, &d
		c.CompletionRate = l.CompletionRate
		if !d {
			c.Reasons = append(c.Reasons, l.DegradedReasons...)
		}
	}
	if g := sum.Goodput; g != nil {
		c.GoodFraction, c.GoodputRPS = g.GoodFraction, g.GoodputRPS
	}
	return c
}

// Sustained-load limits (spec/load.md, docs/load.md): a rate cell
// completes at least minCompletion of its rate; TTFT p50 of its last
// third stays under maxTTFTGrowth times that of its first, a rise of
// less than minTTFTRise ms not counting (timer and scheduling noise,
// not a queue), nor, under a TTFT limit, a rise that carried on through
// a cell projectedLength times as long would still keep that cell's last
// third within the limit (a queue filling up to a level it holds, not
// one growing without end); cells of fewer than minSustainRequests
// measured requests are not judged (their spans are too short to tell,
// as the delivered rule's achieved rate needs 50).
const (
	minCompletion      = 0.95
	maxTTFTGrowth      = 1.5
	minTTFTRise        = 10.0
	projectedLength    = 3
	minSustainRequests = 50
)

// Criteria are what a sweep's cells are judged by.
type Criteria struct {
	Dimension string // Rate or Concurrency
	// GoodputTarget is the good fraction a cell must reach, nil without
	// an SLO; TTFTLimitms the SLO's TTFT limit, nil when it sets none.
	GoodputTarget, TTFTLimitms *float64
}

// criteria are the sweep's own.
func (s *sweeper) criteria() Criteria {
	k := Criteria{Dimension: s.o.Dimension}
	if s.slo != nil {
		g := s.o.GoodputTarget
		k.GoodputTarget, k.TTFTLimitms = &g, s.slo.Millis().TTFTms
	}
	return k
}

// projectedTTFT is the TTFT p50 of the last third of a cell
// projectedLength times as long, had TTFT kept rising at the pace it rose
// from first to last (medians at 1/6 and 5/6 of the cell).
func projectedTTFT(first, last float64) float64 {
	return first + (last-first)*(5*projectedLength-1)/4
}

// Sustained checks that the engine kept up with a cell's load, not only
// that it was sent: why not, in words (empty when it did, or when the
// figures are not there to tell). A rate cell's completion rate is held
// against its target, or against its achieved rate when that is lower
// (a short Poisson cell's own schedule may be slower than the target and
// still delivered: the engine is judged on what it was sent).
func Sustained(c Cell, k Criteria) []string {
	if c.TotalRequests < minSustainRequests {
		return nil
	}
	var out []string
	if k.Dimension == Rate && c.TargetRate != nil && c.CompletionRate != nil && *c.TargetRate > 0 {
		ref, of := *c.TargetRate, "the "+Format(*c.TargetRate)+" req/s target"
		if c.AchievedRate != nil && *c.AchievedRate < ref {
			ref, of = *c.AchievedRate, fmt.Sprintf("the %.2f req/s sent", *c.AchievedRate)
		}
		if *c.CompletionRate < minCompletion*ref {
			out = append(out, fmt.Sprintf("not sustained: the engine completed %.2f req/s, %.0f%% of %s (at least %.0f%% needed): its queue grew through the cell",
				*c.CompletionRate, 100**c.CompletionRate/ref, of, 100*minCompletion))
		}
	}
	f, l := c.TTFTP50FirstThirdms, c.TTFTP50LastThirdms
	if f == nil || l == nil || *f <= 0 || *l < maxTTFTGrowth**f || *l-*f < minTTFTRise {
		return out
	}
	why := fmt.Sprintf("not sustained: TTFT p50 rose from %.1f ms in the cell's first third to %.1f ms in its last (%.2fx, under %.1fx needed): a queue grew through the cell",
		*f, *l, *l / *f, maxTTFTGrowth)
	if lim := k.TTFTLimitms; lim != nil {
		p := projectedTTFT(*f, *l)
		if p <= *lim {
			return out
		}
		why += fmt.Sprintf(", and rising so through a cell %d times as long it would reach %.0f ms, over the %s ms TTFT limit", projectedLength, p, Format(*lim))
	}
	return append(out, why)
}

// judge sets the cell's status and reasons (Judge) by the sweep's
// criteria.
func (s *sweeper) judge(c *Cell, recordErr string) { Judge(c, s.criteria(), recordErr) }

// Judge sets a cell's status and reasons (record.Cell*): cut when its
// record is incomplete (recordErr says what it lacks), interrupted, not
// delivered, then, with a goodput target (none: no SLO), fail under it,
// not sustained, or pass.
func Judge(c *Cell, k Criteria, recordErr string) {
	if c.Reasons == nil {
		c.Reasons = []string{}
	}
	target := k.GoodputTarget
	sustained := Sustained(*c, k)
	switch {
	case c.ExitCode == 4:
		c.Status = record.CellCut
		if recordErr == "" {
			recordErr = "the run record could not be written completely"
		}
		c.Reasons = []string{recordErr}
	case c.ExitCode == errs.ExitInterrupted:
		c.Status = record.CellInterrupted
		c.Reasons = []string{"interrupted before every request ran: its figures cover part of the load"}
	case c.Delivered != nil && !*c.Delivered:
		c.Status = record.CellNotDelivered
		if len(c.Reasons) == 0 {
			c.Reasons = []string{"the load was not delivered"}
		}
	case target != nil && (c.GoodFraction == nil || *c.GoodFraction < *target):
		c.Status = record.CellFail
		g := "n/a"
		if c.GoodFraction != nil {
			g = fmt.Sprintf("%.1f%%", *c.GoodFraction*100)
		}
		c.Reasons = append([]string{fmt.Sprintf("good fraction %s is under the %.0f%% target", g, *target*100)}, sustained...)
	case len(sustained) > 0:
		c.Status, c.Reasons = record.CellNotSustained, sustained
	case target != nil:
		c.Status = record.CellPass
	default:
		c.Status = record.CellDone
	}
}

// create makes the sweep folder <output-dir>/<stamp>-sweep-<workload>[-<name>].
func (s *sweeper) create() error {
	set := s.o.Config.Settings()
	started := s.now()
	dir, id, err := record.NewOutputFolder(set.OutputDir, "sweep", set.Workload, set.Name, started)
	if err != nil {
		return err
	}
	// Best effort, as a run's: without it the sweep reads as incomplete.
	s.lock, _ = record.LockDir(dir)
	s.dir = dir
	s.f.Sweep.ID = id
	s.f.Sweep.StartedAt = started.UTC().Format(time.RFC3339)
	// A valid sweep.json from the start: should the disk fill up
	// later, the folder still reads as the sweep that it is.
	return s.write()
}

// write stores sweep.json and sweep.csv (after every cell, so a crash
// keeps what ran).
func (s *sweeper) write() error {
	b, err := json.MarshalIndent(s.f, "", "  ")
	if err != nil {
		return err
	}
	if err := config.WriteFileAtomic(filepath.Join(s.dir, record.SweepFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %v", record.SweepFile, err)
	}
	if err := config.WriteFileAtomic(filepath.Join(s.dir, CSVFile), CSV(s.f.Cells), 0o644); err != nil {
		return fmt.Errorf("write %s: %v", CSVFile, err)
	}
	return nil
}

// CSVHeader is sweep.csv's header: the cell keys of sweep.json in order.
var CSVHeader = []string{"value", "run_id", "target_rate", "achieved_rate", "mean_concurrency", "delivered",
	"total_requests", "failed_requests", "p50_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "output_throughput",
	"hit_ratio", "good_fraction", "goodput_rps",
	// docs/load.md: beyond the spec's keys, as in sweep.json
	"completion_rate", "ttft_p50_first_third_ms", "ttft_p50_last_third_ms", "status", "reasons"}

// CSV renders the cells, one row each; null is an empty field.
func CSV(cells []Cell) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	ws := false
	for _, c := range cells {
		ws = ws || c.WorkingSetCell != nil
	}
	if ws {
		w.Write(append(append([]string{}, CSVHeader...), WorkingSetCSVHeader...))
	} else {
		w.Write(CSVHeader)
	}
	f := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'f', -1, 64)
	}
	for _, c := range cells {
		delivered := ""
		if c.Delivered != nil {
			delivered = strconv.FormatBool(*c.Delivered)
		}
		out := c.OutputThroughput
		row := []string{Format(c.Value), c.RunID, f(c.TargetRate), f(c.AchievedRate), f(c.MeanConcurrency), delivered,
			strconv.Itoa(c.TotalRequests), strconv.Itoa(c.FailedRequests), f(c.P50TTFTms), f(c.P99TTFTms), f(c.MeanTPOTms),
			f(&out), f(c.HitRatio), f(c.GoodFraction), f(c.GoodputRPS),
			f(c.CompletionRate), f(c.TTFTP50FirstThirdms), f(c.TTFTP50LastThirdms), c.Status, strings.Join(c.Reasons, "; ")}
		if ws {
			row = append(row, workingSetRow(c, f)...)
		}
		w.Write(row)
	}
	w.Flush()
	return b.Bytes()
}
