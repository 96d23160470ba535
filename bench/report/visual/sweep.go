package visual

import (
	"fmt"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
)

// SweepCell is one cell of sweep.json: the record's type. Figures a
// cell could not measure are null.
type SweepCell = record.SweepCell

// Sweep is a sweep folder: sweep.json as compared (runs.SweepSide) and,
// where they are there, its cells' run folders.
type Sweep struct {
	*runs.SweepSide

	summary *node
	// runs are the cells' run folders that could be read, in cell order.
	runs []*Run
}

// LoadSweep reads a sweep folder's sweep.json and the run folders of its
// cells (a cell whose folder is missing or unreadable is left out of the
// per-cell charts, never fatal).
func LoadSweep(dir string) (*Sweep, error) {
	side, b, err := runs.LoadSweepSide(dir)
	if err != nil {
		return nil, err
	}
	n, err := parseOrdered(b)
	if err != nil {
		return nil, fmt.Errorf("sweep %s: %s: %w", runs.FolderID(dir), record.SweepFile, err)
	}
	s := &Sweep{SweepSide: side, summary: n}
	for _, c := range side.CellRuns() {
		if r, err := LoadRun(c.Dir); err == nil {
			r.Name = cellLabel(s.Dimension, c.Value)
			s.runs = append(s.runs, r)
		}
	}
	for _, r := range s.runs {
		if r.Workload != "" {
			side.SetWorkload(r.Workload)
			break
		}
	}
	return s, nil
}

func cellLabel(dim string, v float64) string { return runs.CellLabel(dim, v) }

// loadAxis is the sweep's x value of a cell: the achieved rate of a rate
// sweep, the mean concurrency of a concurrency sweep; nil when unmeasured.
func (s *Sweep) loadAxis(c SweepCell) *float64 { return s.AchievedLoad(c) }

func (s *Sweep) loadAxisLabel() string {
	if s.Dimension == "concurrency" {
		return "Achieved mean concurrency (requests in flight)"
	}
	return "Achieved request rate (req/s)"
}
