package visual

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	bsweep "github.com/kvbench/kvbench/bench/sweep"
	"github.com/kvbench/kvbench/internal/textclean"
)

// SweepCell is one cell of sweep.json: the record's type. Figures a
// cell could not measure are null.
type SweepCell = record.SweepCell

// Sweep is a sweep folder: sweep.json and, where they are there, its
// cells' run folders.
type Sweep struct {
	ID, Dir string

	Name, Dimension       string
	ToolVersion           string
	StartedAt, FinishedAt string
	Interrupted           bool
	Search                bool
	GoodputTarget         *float64
	Cells                 []SweepCell
	// MaxValue is the highest delivered passing value (the result's; nil
	// without an SLO or a pass); UndeliveredAbove the values above it
	// whose load was not delivered, with the first reason.
	MaxValue, GoodFractionAtMax *float64
	UndeliveredAbove            []record.Undelivered
	// HasSLO is set when the sweep judged its cells against an SLO.
	HasSLO bool

	summary *node
	// runs are the cells' run folders that could be read, in cell order.
	runs []*Run
}

// Label is how a sweep is named in legends.
func (s *Sweep) Label() string {
	if s.Name != "" {
		return s.Name
	}
	return s.ID
}

// LoadSweep reads a sweep folder's sweep.json and the run folders of its
// cells (a cell whose folder is missing or unreadable is left out of the
// per-cell charts, never fatal).
func LoadSweep(dir string) (*Sweep, error) {
	id := runs.FolderID(dir)
	j, b, err := record.ReadSweep(dir)
	if err != nil {
		return nil, fmt.Errorf("sweep %s: %w", id, err)
	}
	n, err := parseOrdered(b)
	if err != nil {
		return nil, fmt.Errorf("sweep %s: %s: %w", id, record.SweepFile, err)
	}
	s := &Sweep{
		ID: id, Dir: dir, Name: textclean.Line(j.Sweep.Name), Dimension: textclean.Line(j.Sweep.Dimension),
		ToolVersion: j.Tool.Version, StartedAt: j.Sweep.StartedAt, FinishedAt: j.Sweep.FinishedAt,
		Interrupted: j.Sweep.Interrupted, GoodputTarget: j.Sweep.GoodputTarget, HasSLO: j.Sweep.SLO != nil,
		Cells: j.Cells, summary: n, Search: j.Sweep.Search,
	}
	if j.Sweep.ID != "" {
		s.ID = textclean.Line(j.Sweep.ID)
	}
	if j.Result != nil {
		s.MaxValue, s.GoodFractionAtMax, s.UndeliveredAbove = j.Result.MaxValue, j.Result.GoodFractionAtMax, j.Result.UndeliveredAbove
	}
	cells := cellDirs(filepath.Join(dir, record.SweepCellsDir))
	for _, c := range s.Cells {
		d, ok := cells[c.RunID]
		if !ok {
			continue
		}
		if r, err := LoadRun(d); err == nil {
			r.Name = cellLabel(s.Dimension, c.Value)
			s.runs = append(s.runs, r)
		}
	}
	return s, nil
}

// cellDirs maps the run ids found under cells/ (the folder name, and the
// run id its summary records) to their folders.
func cellDirs(cellsDir string) map[string]string {
	out := map[string]string{}
	entries, err := os.ReadDir(cellsDir)
	if err != nil {
		return out
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		d := filepath.Join(cellsDir, e.Name())
		out[e.Name()] = d
		if b, err := readSmall(filepath.Join(d, "bench_summary.json")); err == nil {
			var s struct {
				Run struct {
					ID string `json:"id"`
				} `json:"run"`
			}
			if json.Unmarshal(b, &s) == nil && s.Run.ID != "" {
				if _, taken := out[s.Run.ID]; !taken {
					out[s.Run.ID] = d
				}
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			continue
		}
	}
	return out
}

// status is a cell's status (record.Cell*) under the sweep's goodput
// target.
func (s *Sweep) status(c SweepCell) string {
	var target *float64
	if s.HasSLO {
		target = s.GoodputTarget
	}
	return c.Verdict(target)
}

// cellsWith are the labels of the cells whose status is st.
func (s *Sweep) cellsWith(st string) []string {
	var out []string
	for _, c := range s.Cells {
		if s.status(c) == st {
			out = append(out, cellLabel(s.Dimension, c.Value))
		}
	}
	return out
}

// undeliveredText lists the result's undelivered values with their first
// reason ("" when there are none).
func (s *Sweep) undeliveredText() string {
	var parts []string
	for _, u := range s.UndeliveredAbove {
		parts = append(parts, cellLabel(s.Dimension, u.Value)+" ("+u.Reason+")")
	}
	return strings.Join(parts, ", ")
}

func cellLabel(dim string, v float64) string {
	unit := "req/s"
	switch dim {
	case "concurrency":
		unit = "in flight"
	case bsweep.WorkingSet:
		unit = "tokens"
	}
	return strings.TrimSpace(fmtNum(v) + " " + unit)
}

// loadAxis is the sweep's x value of a cell: the achieved rate of a rate
// sweep, the mean concurrency of a concurrency sweep; nil when unmeasured.
func (s *Sweep) loadAxis(c SweepCell) *float64 {
	if s.Dimension == "concurrency" {
		return c.MeanConcurrency
	}
	return c.AchievedRate
}

func (s *Sweep) loadAxisLabel() string {
	if s.Dimension == "concurrency" {
		return "Achieved mean concurrency (requests in flight)"
	}
	return "Achieved request rate (req/s)"
}
