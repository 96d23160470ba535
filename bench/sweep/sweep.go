package sweep

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
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
	Dimension string    // Rate or Concurrency
	Values    []float64 // the list; a search starts at its first value
	Search    bool
	// GoodputTarget is the good fraction a cell must reach to pass;
	// Precision ends a search when the last pass and the first fail are
	// within it of each other (relative); MaxCells bounds a search.
	GoodputTarget, Precision float64
	MaxCells                 int
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
	default:
		return fmt.Errorf("give --sweep-rate LIST or --sweep-concurrency LIST")
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
	slo, err := load.ParseSLO(o.Config.String("slo"))
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
	if o.Dimension == Rate && o.Config.Workload() == config.MultiRoundChat && o.Config.IsSet("mrc_qps") {
		return fmt.Errorf("--sweep-rate sets the rate of each cell: drop --mrc-qps")
	}
	if o.Dimension == Rate && o.Config.IsSet("request_rate") {
		return fmt.Errorf("--sweep-rate sets --request-rate for each cell: drop --request-rate")
	}
	if o.Dimension == Concurrency && o.Config.IsSet("max_concurrency") {
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
	slo, _ := load.ParseSLO(o.Config.String("slo"))
	f := &File{SchemaVersion: 1, Tool: record.Tool{Name: "kvbench", Version: bench.Version}}
	f.Sweep = Info{Name: o.Config.String("name"), Dimension: o.Dimension, Values: o.Values, Search: o.Search}
	if slo != nil {
		g := o.GoodputTarget
		f.Sweep.GoodputTarget = &g
		ms := slo.Millis()
		f.Sweep.SLO = &ms
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
}

func (s *sweeper) run(ctx context.Context) (int, error) {
	code := 0
	note := func(c Cell) {
		switch {
		case c.ExitCode == 130:
			code = 130
		case c.ExitCode == 4 && code != 130:
			code = 4
		case (c.ExitCode == 1 || c.FailedRequests > 0) && code == 0:
			code = 1
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
			return 130, nil
		}
		c, err := s.cell(ctx, i, v)
		if err != nil {
			if bench.IsUsage(err) {
				return 2, err
			}
			if bench.IsEngineUnavailable(err) {
				return 3, err
			}
			return 1, err
		}
		s.f.Cells = append(s.f.Cells, c)
		if werr := s.write(); werr != nil {
			return 4, werr
		}
		if s.o.Cell != nil {
			s.o.Cell(i, c)
		}
		note(c)
		if c.ExitCode == 130 || ctx.Err() != nil {
			s.f.Sweep.Interrupted = true
			return 130, nil
		}
	}
	return code, nil
}

// plan yields the value of cell i: the list in order, or the search's
// next step from the cells so far.
func (s *sweeper) plan() func(i int) (float64, bool) {
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

// pass reports whether a cell met the goodput target.
func (s *sweeper) pass(c Cell) bool {
	return c.GoodFraction != nil && *c.GoodFraction >= s.o.GoodputTarget
}

// bounds are the highest passing value and the lowest failing value
// above it (0 when none).
func (s *sweeper) bounds() (lo, hi float64) {
	for _, c := range s.f.Cells {
		if s.pass(c) && c.Value > lo {
			lo = c.Value
		}
	}
	for _, c := range s.f.Cells {
		if !s.pass(c) && c.Value > lo && (hi == 0 || c.Value < hi) {
			hi = c.Value
		}
	}
	return lo, hi
}

func (s *sweeper) result() *Result {
	if s.slo == nil {
		return nil
	}
	var best *Cell
	for i := range s.f.Cells {
		c := &s.f.Cells[i]
		if s.pass(*c) && (best == nil || c.Value > best.Value) {
			best = c
		}
	}
	if best == nil {
		return nil
	}
	return &Result{MaxValue: best.Value, GoodFractionAtMax: best.GoodFraction}
}

// cellConfig is the base config with the cell's value and its own salt.
func (s *sweeper) cellConfig(i int, v float64) (*config.Config, error) {
	c := s.o.Config.Clone()
	var err error
	if s.o.Dimension == Rate {
		err = c.SetString("request_rate", Format(v))
		if err == nil && c.Workload() == config.MultiRoundChat {
			err = c.Set("mrc_qps", v)
		}
	} else {
		err = c.Set("max_concurrency", int(v))
	}
	if err != nil {
		return nil, err
	}
	// Cells never warm each other: auto salts are unique per run; a fixed
	// salt gets the cell's number.
	if salt := c.String("prompt_salt"); salt != "auto" && salt != "none" {
		if err := c.Set("prompt_salt", fmt.Sprintf("%s cell %02d", salt, i+1)); err != nil {
			return nil, err
		}
	}
	return c, c.Set("output_dir", filepath.Join(s.dir, record.SweepCellsDir))
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
	p.RunFolder = fmt.Sprintf("%02d-%s-%s", i+1, s.o.Dimension, Format(v))
	r, err := bench.New(ctx, p)
	if err != nil {
		p.Close()
		return Cell{}, err
	}
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
	return cellOf(v, r.ID(), fin.Summary, r.MeanTPOTms(), fin.ExitCode), nil
}

func cellOf(v float64, id string, sum *record.Summary, tpot *float64, code int) Cell {
	c := Cell{Value: v, RunID: id, ExitCode: code, MeanTPOTms: tpot}
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
	}
	if g := sum.Goodput; g != nil {
		c.GoodFraction, c.GoodputRPS = g.GoodFraction, g.GoodputRPS
	}
	return c
}

// create makes the sweep folder <output-dir>/<stamp>-sweep-<workload>[-<name>].
func (s *sweeper) create() error {
	out := s.o.Config.String("output_dir")
	if out == "" {
		out = record.RunsDir()
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("--output-dir: %v", err)
	}
	started := s.now()
	base := record.FolderName("sweep-"+s.o.Config.Workload(), s.o.Config.String("name"), started)
	for i := 1; i < 10000; i++ {
		id := base
		if i > 1 {
			id += "-" + strconv.Itoa(i)
		}
		dir := filepath.Join(out, id)
		err := os.Mkdir(dir, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("--output-dir: %v", err)
		}
		// Best effort, as a run's: without it the sweep reads as incomplete.
		s.lock, _ = record.LockDir(dir)
		s.dir = dir
		s.f.Sweep.ID = id
		s.f.Sweep.StartedAt = started.UTC().Format(time.RFC3339)
		return nil
	}
	return fmt.Errorf("--output-dir: %s and its numbered variants are taken", base)
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
	"hit_ratio", "good_fraction", "goodput_rps"}

// CSV renders the cells, one row each; null is an empty field.
func CSV(cells []Cell) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(CSVHeader)
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
		w.Write([]string{Format(c.Value), c.RunID, f(c.TargetRate), f(c.AchievedRate), f(c.MeanConcurrency), delivered,
			strconv.Itoa(c.TotalRequests), strconv.Itoa(c.FailedRequests), f(c.P50TTFTms), f(c.P99TTFTms), f(c.MeanTPOTms),
			f(&out), f(c.HitRatio), f(c.GoodFraction), f(c.GoodputRPS)})
	}
	w.Flush()
	return b.Bytes()
}
