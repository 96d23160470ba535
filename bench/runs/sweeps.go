package runs

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/kvbench/kvbench/internal/errs"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/textclean"
)

// A sweep's dimensions (spec/load.md; bench/sweep writes sweep.json).
// This package reads the few keys the explorer shows and does not import
// the sweep runner.
const (
	rateDim = "rate"
	concDim = "concurrency"
)

// readSweepRecord reads a sweep folder's sweep.json (record.ReadSweep).
func readSweepRecord(dir string) (*record.SweepSummary, error) {
	f, _, err := record.ReadSweep(dir)
	return f, err
}

func formatValue(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Sweep is what the explorer shows of a sweep folder besides a run's
// figures (spec/load.md "kvbench sweep"): one row for all its cells.
type Sweep struct {
	Dimension string // rate or concurrency
	Search    bool
	Values    []float64
	// Cells is how many cells ran (sweep.json's cells).
	Cells int
	// MaxValue is the highest value that met the goodput target (the
	// search's result, or a list sweep's best cell with an SLO); nil when
	// none did or no SLO was given.
	MaxValue      *float64
	GoodputTarget *float64
	// SLO is set when the sweep judged its cells against one.
	SLO bool
	// Undelivered are the values above MaxValue (all, when it is nil)
	// whose load was not delivered: the sweep says nothing about them.
	Undelivered []float64
	// Cut is the value of the cell whose record could not be written,
	// where the sweep stopped (nil when none was).
	Cut *float64
}

// Describe is the sweep in words, as short as width asks: the longest of
// its descriptions that fits ("" when none does).
func (s *Sweep) Describe(width int) string {
	for _, f := range s.Descriptions() {
		if len([]rune(f)) <= width {
			return f
		}
	}
	return ""
}

// Descriptions are the sweep in words, longest first: how many cells, a
// list or a capacity search, over what, and the highest value that met
// the goodput target.
func (s *Sweep) Descriptions() []string {
	cells := fmt.Sprintf("%d cells", s.Cells)
	if s.Cells == 1 {
		cells = "1 cell"
	}
	kind, short := "list", "list"
	if s.Search {
		kind, short = "capacity search", "search"
	}
	unit := "req/s"
	if s.Dimension == concDim {
		unit = "in flight"
	}
	var long, mid, brief string // the result in three lengths
	var undelivered []string
	for _, v := range s.Undelivered {
		undelivered = append(undelivered, formatValue(v))
	}
	switch {
	case s.MaxValue != nil:
		v := formatValue(*s.MaxValue)
		long = fmt.Sprintf(", max %s %s %s", s.Dimension, v, unit)
		mid = fmt.Sprintf(", max %s %s", v, unit)
		brief = ", max " + v
		if len(undelivered) > 0 {
			long += ", " + strings.Join(undelivered, ",") + " not delivered"
			mid += ", " + strings.Join(undelivered, ",") + " not delivered"
		}
	case len(undelivered) > 0:
		long = fmt.Sprintf(", not delivered at %s %s", strings.Join(undelivered, ","), unit)
		mid, brief = ", not delivered at "+strings.Join(undelivered, ","), ", not delivered"
	case s.SLO:
		long, mid, brief = ", no cell passed", ", none passed", ", none passed"
	}
	if s.Cut != nil {
		long += ", cut at " + formatValue(*s.Cut) + " (record incomplete)"
		mid += ", cut at " + formatValue(*s.Cut)
		brief += ", cut"
	}
	return []string{
		fmt.Sprintf("sweep of %s (%s over %s)%s", cells, kind, s.Dimension, long),
		fmt.Sprintf("sweep, %s, %s%s", cells, short, long),
		fmt.Sprintf("sweep, %s, %s%s", cells, short, mid),
		fmt.Sprintf("sweep, %s, %s%s", cells, short, brief),
		fmt.Sprintf("sweep %s%s", cells, brief),
		fmt.Sprintf("sweep %dc%s", s.Cells, brief),
		fmt.Sprintf("sweep %dc", s.Cells),
		"sweep",
	}
}

// ListSweeps reads every sweep folder of runsDir (a folder holding
// sweep.json), newest first. A missing runsDir is an empty list; a folder
// whose sweep.json cannot be read is listed with the error.
func ListSweeps(runsDir string) ([]Run, error) {
	entries, err := os.ReadDir(runsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sweeps: %w", err)
	}
	var out []Run
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(runsDir, e.Name())
		if !record.IsSweepDir(dir) {
			continue
		}
		out = append(out, *ReadSweep(dir))
	}
	sortNewest(out)
	return out, nil
}

// ListAll is every run, sweep and series of runsDir (List, ListSweeps
// and ListSeries), newest first; a sweep's row has Sweep set, a series'
// Series.
func ListAll(runsDir string) ([]Run, error) {
	rs, err := List(runsDir)
	sw, serr := ListSweeps(runsDir)
	se, seerr := ListSeries(runsDir)
	all := append(append(rs, sw...), se...)
	sortNewest(all)
	// They fail together (the runs directory cannot be read): one error.
	return all, cmp.Or(err, serr, seerr)
}

// ReadSweep is the row of the sweep folder dir: its name, workload, model
// and engine (from its first cell), start time, its cells' request
// totals, and its status (running while the sweep holds its folder's
// lock, incomplete after a crash, interrupted, failed when a cell had a
// failed request or was cut).
func ReadSweep(dir string) *Run {
	r := &Run{ID: FolderID(dir), Dir: dir, Interrupted: true, Sweep: &Sweep{}}
	f, err := readSweepRecord(dir)
	if err != nil {
		r.Err = err
		r.Workload = sweepWorkload(r.ID)
		r.StartedAt, _ = parseFolderName(r.ID, "")
		r.annotate()
		return r.markRunning()
	}
	s := f.Sweep
	r.Name = textclean.Line(s.Name)
	r.StartedAt = record.RunInfo{StartedAt: s.StartedAt}.StartedTime()
	if r.StartedAt.IsZero() {
		r.StartedAt, _ = parseFolderName(r.ID, "")
	}
	r.Complete = s.FinishedAt != ""
	r.Interrupted = s.Interrupted || !r.Complete
	r.Sweep = &Sweep{Dimension: textclean.Line(s.Dimension), Search: s.Search, Values: s.Values, Cells: len(f.Cells),
		GoodputTarget: s.GoodputTarget, SLO: s.SLO != nil}
	if f.Result != nil && f.Result.MaxValue != nil {
		v := *f.Result.MaxValue
		r.Sweep.MaxValue = &v
	}
	var target *float64
	if s.SLO != nil {
		target = s.GoodputTarget
	}
	for _, c := range f.Cells {
		r.TotalRequests += c.TotalRequests
		r.FailedRequests += c.FailedRequests
		switch c.Verdict(target) {
		case record.CellNotDelivered:
			if r.Sweep.MaxValue == nil || c.Value > *r.Sweep.MaxValue {
				r.Sweep.Undelivered = append(r.Sweep.Undelivered, c.Value)
			}
		case record.CellCut:
			v := c.Value
			r.Sweep.Cut = &v
		}
	}
	slices.Sort(r.Sweep.Undelivered)
	r.Sweep.Undelivered = slices.Compact(r.Sweep.Undelivered)
	r.SuccessfulRequests = r.TotalRequests - r.FailedRequests
	if r.FailedRequests > 0 {
		r.ExitCode = errs.ExitFailed
	}
	if r.Sweep.Cut != nil {
		r.ExitCode = errs.ExitRecord
	}
	if s.Interrupted {
		r.ExitCode = errs.ExitInterrupted
	}
	if len(f.Cells) > 0 {
		if cell := readRecord(record.SweepCellDir(dir, f.Cells[0].RunID)); cell != nil {
			r.Workload, r.Model, r.EngineURL = cell.Workload, cell.Model, cell.EngineURL
		}
	}
	if r.Workload == "" {
		r.Workload = sweepWorkload(r.ID)
	}
	r.annotate()
	return r.markRunning()
}

// sweepWorkload reads the workload from a sweep folder's name,
// <stamp>-sweep-<workload>[-<name>].
func sweepWorkload(id string) string {
	_, rest, ok := strings.Cut(id, "-sweep-")
	if !ok {
		return ""
	}
	return workloadPrefix(rest)
}

// workloadPrefix is the longest workload that rest is or starts with
// (followed by a dash).
func workloadPrefix(rest string) string {
	best := ""
	for _, w := range config.Workloads {
		if (rest == w || strings.HasPrefix(rest, w+"-")) && len(w) > len(best) {
			best = w
		}
	}
	return best
}

// DeleteSweep removes a sweep folder and its cells. It refuses a
// directory that is not a sweep folder.
func DeleteSweep(dir string) error {
	if !record.IsSweepDir(dir) {
		return fmt.Errorf("delete %s: not a sweep folder", dir)
	}
	if err := refuseRunning(dir); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("delete sweep: %w", err)
	}
	return nil
}

// DeleteAny removes a run folder, a sweep folder or a series folder.
func DeleteAny(dir string) error {
	if record.IsSweepDir(dir) {
		return DeleteSweep(dir)
	}
	if record.IsSeriesDir(dir) {
		return DeleteSeries(dir)
	}
	return Delete(dir)
}
