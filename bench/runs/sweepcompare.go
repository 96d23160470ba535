package runs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/internal/textclean"
)

// ErrSweepMismatch is why two sweeps cannot be overlaid: one varies the
// rate, the other the concurrency, so their x axes differ.
var ErrSweepMismatch = errors.New("sweeps of different dimensions")

// SweepSide is one sweep of a sweep comparison: its sweep.json as read
// (record.ReadSweep) and the workload its cells ran.
type SweepSide struct {
	ID, Dir string

	Name, Dimension       string
	ToolVersion           string
	StartedAt, FinishedAt string
	Interrupted           bool
	Search                bool
	GoodputTarget         *float64
	Cells                 []record.SweepCell
	// MaxValue is the highest delivered passing value (the result's; nil
	// without an SLO or a pass); UndeliveredAbove the values above it
	// whose load was not delivered, with the first reason.
	MaxValue, GoodFractionAtMax *float64
	UndeliveredAbove            []record.Undelivered
	// HasSLO is set when the sweep judged its cells against an SLO.
	HasSLO bool

	slo *load.SLOms
	// cellRuns are the cells' run folders found under cells/, in cell
	// order (a cell without one is left out).
	cellRuns []SweepCellRun
	workload string
}

// SweepCellRun is a sweep cell's value and its run folder.
type SweepCellRun struct {
	Value float64
	Dir   string
}

// LoadSweepSide reads a sweep folder's sweep.json and finds its cells'
// run folders (a cell whose folder is missing is left out, never fatal);
// raw is sweep.json as read (record.ReadSweep).
func LoadSweepSide(dir string) (s *SweepSide, raw []byte, err error) {
	id := FolderID(dir)
	j, raw, err := record.ReadSweep(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("sweep %s: %w", id, err)
	}
	s = &SweepSide{
		ID: id, Dir: dir, Name: textclean.Line(j.Sweep.Name), Dimension: textclean.Line(j.Sweep.Dimension),
		ToolVersion: j.Tool.Version, StartedAt: j.Sweep.StartedAt, FinishedAt: j.Sweep.FinishedAt,
		Interrupted: j.Sweep.Interrupted, GoodputTarget: j.Sweep.GoodputTarget, HasSLO: j.Sweep.SLO != nil,
		Cells: j.Cells, Search: j.Sweep.Search, slo: j.Sweep.SLO,
	}
	if j.Sweep.ID != "" {
		s.ID = textclean.Line(j.Sweep.ID)
	}
	if j.Result != nil {
		s.MaxValue, s.GoodFractionAtMax, s.UndeliveredAbove = j.Result.MaxValue, j.Result.GoodFractionAtMax, j.Result.UndeliveredAbove
	}
	cells := SweepCellDirs(filepath.Join(dir, record.SweepCellsDir))
	for _, c := range s.Cells {
		if d, ok := cells[c.RunID]; ok {
			s.cellRuns = append(s.cellRuns, SweepCellRun{c.Value, d})
		}
	}
	return s, raw, nil
}

// CellRuns are the run folders of the sweep's cells that were found, in
// cell order.
func (s *SweepSide) CellRuns() []SweepCellRun { return s.cellRuns }

// SetWorkload records the workload the sweep's cells ran, for a reader
// that has read the cells' folders itself.
func (s *SweepSide) SetWorkload(w string) { s.workload = w }

// Workload is the workload the sweep's cells ran ("" when no cell folder
// could be read): the first cell's folder that records one.
func (s *SweepSide) Workload() string { return s.workload }

// readWorkload sets the workload from the cells' run folders.
func (s *SweepSide) readWorkload() {
	for _, c := range s.cellRuns {
		if det, err := Load(c.Dir); err == nil && det.Run.Workload != "" {
			s.workload = det.Run.Workload
			return
		}
	}
}

// maxCellSummaryBytes caps a cell's bench_summary.json when finding the
// run id it records.
const maxCellSummaryBytes = 64 << 20

// SweepCellDirs maps the run ids found under cells/ (the folder name, and
// the run id its summary records) to their folders.
func SweepCellDirs(cellsDir string) map[string]string {
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
		if b, err := record.ReadJSON(filepath.Join(d, record.SummaryFile), maxCellSummaryBytes); err == nil {
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

// Label is how a sweep is named in legends.
func (s *SweepSide) Label() string {
	if s.Name != "" {
		return s.Name
	}
	return s.ID
}

// AchievedLoad is a cell's x on the sweep's curve: its achieved rate (a
// rate sweep) or mean concurrency, nil when unmeasured.
func (s *SweepSide) AchievedLoad(c record.SweepCell) *float64 {
	if s.Dimension == "concurrency" {
		return c.MeanConcurrency
	}
	return c.AchievedRate
}

// CellLabel names a value of the sweep's dimension with its unit ("4
// req/s", "8 in flight").
func (s *SweepSide) CellLabel(v float64) string { return CellLabel(s.Dimension, v) }

// CellLabel names a value of dimension dim with its unit.
func CellLabel(dim string, v float64) string {
	unit := "req/s"
	switch dim {
	case "concurrency":
		unit = "in flight"
	case record.DimWorkingSet:
		unit = "tokens"
	}
	return strings.TrimSpace(FormatNum(v) + " " + unit)
}

// FormatNum is v with at most three decimals and no trailing zeros, "n/a"
// for NaN or infinity.
func FormatNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%.0f", v)
	}
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// Status is a cell's status (record.Cell*) under the sweep's goodput
// target.
func (s *SweepSide) Status(c record.SweepCell) string {
	var target *float64
	if s.HasSLO {
		target = s.GoodputTarget
	}
	return c.Verdict(target)
}

// CellsWith are the labels of the cells whose status is st.
func (s *SweepSide) CellsWith(st string) []string {
	var out []string
	for _, c := range s.Cells {
		if s.Status(c) == st {
			out = append(out, s.CellLabel(c.Value))
		}
	}
	return out
}

// UndeliveredText lists the result's undelivered values with their first
// reason ("" when there are none).
func (s *SweepSide) UndeliveredText() string {
	var parts []string
	for _, u := range s.UndeliveredAbove {
		parts = append(parts, s.CellLabel(u.Value)+" ("+u.Reason+")")
	}
	return strings.Join(parts, ", ")
}

// SLO is the sweep's --slo as text ("ttft 500 ms, e2e 2000 ms"), ""
// without one.
func (s *SweepSide) SLO() string {
	if s.slo == nil {
		return ""
	}
	var parts []string
	for _, l := range []struct {
		name string
		v    *float64
	}{{"ttft", s.slo.TTFTms}, {"tpot", s.slo.TPOTms}, {"e2e", s.slo.E2Ems}} {
		if l.v != nil {
			parts = append(parts, l.name+" "+FormatNum(*l.v)+" ms")
		}
	}
	return strings.Join(parts, ", ")
}

// Capacity says what the sweep found: the highest value that met the
// goodput target with its good fraction, or why there is none, and
// under which SLO.
func (s *SweepSide) Capacity() string {
	out := s.capacity()
	if slo := s.SLO(); slo != "" {
		out += "; SLO " + slo
	}
	return out
}

func (s *SweepSide) capacity() string {
	und := s.UndeliveredText()
	switch {
	case s.MaxValue != nil:
		g := "n/a"
		if s.GoodFractionAtMax != nil {
			g = fmt.Sprintf("%.1f%%", *s.GoodFractionAtMax*100)
		}
		out := fmt.Sprintf("%s (good fraction %s", s.CellLabel(*s.MaxValue), g)
		if s.GoodputTarget != nil {
			out += fmt.Sprintf(" >= target %.0f%%", *s.GoodputTarget*100)
		}
		out += ")"
		if und != "" {
			out = "at least " + out + "; not delivered, so not judged: " + und
		}
		return out
	case s.GoodputTarget == nil:
		return "n/a: no --slo, so no goodput target"
	case und != "":
		return fmt.Sprintf("none established: no delivered cell reached the good fraction target %.0f%%; not delivered, so not judged: %s", *s.GoodputTarget*100, und)
	}
	return fmt.Sprintf("none: no cell reached the good fraction target %.0f%%", *s.GoodputTarget*100)
}

// Describe is one line naming a sweep: id, workload, dimension, cells.
func (s *SweepSide) Describe() string {
	parts := []string{}
	if w := s.Workload(); w != "" {
		parts = append(parts, w)
	}
	parts = append(parts, orDash(s.Dimension)+" sweep", fmt.Sprintf("%d cells", len(s.Cells)))
	if s.Search {
		parts = append(parts, "capacity search")
	}
	if s.Interrupted {
		parts = append(parts, "interrupted")
	}
	return s.ID + " (" + strings.Join(parts, ", ") + ")"
}

// ResolveSweep finds a sweep folder named by id in runsDir, by a unique
// prefix of one (as FolderID shows it or as it is on disk), or by path;
// ok is false when the name is no sweep.
func ResolveSweep(runsDir, name string) (dir string, ok bool) {
	if dir, ok := SweepDir(runsDir, name); ok {
		return dir, true
	}
	if name == "" || strings.ContainsRune(name, '/') || strings.ContainsRune(name, os.PathSeparator) {
		return "", false
	}
	entries, _ := os.ReadDir(runsDir)
	var hits []string
	for _, e := range entries {
		match := strings.HasPrefix(e.Name(), name) || strings.HasPrefix(textclean.Line(e.Name()), name)
		if e.IsDir() && match && record.IsSweepDir(filepath.Join(runsDir, e.Name())) {
			hits = append(hits, e.Name())
		}
	}
	if len(hits) != 1 {
		return "", false
	}
	return filepath.Join(runsDir, hits[0]), true
}

// SweepDir finds a sweep folder named by id (in runsDir) or by path.
func SweepDir(runsDir, a string) (string, bool) {
	if !strings.ContainsRune(a, '/') && !strings.ContainsRune(a, os.PathSeparator) {
		if d := filepath.Join(runsDir, a); record.IsSweepDir(d) {
			return d, true
		}
	}
	if record.IsSweepDir(a) {
		return a, true
	}
	return "", false
}

// SweepRow is one value of the swept dimension and each sweep's cell at
// it (nil where that sweep ran none).
type SweepRow struct {
	Value float64
	A, B  *record.SweepCell
}

// SweepComparison sets sweep B's curve beside sweep A's, cell by cell at
// the same value of the swept dimension.
type SweepComparison struct {
	A, B *SweepSide
	Rows []SweepRow
	// Notes are plain remarks on what is compared (different workloads,
	// an interrupted sweep).
	Notes []string
}

// OpenSweeps resolves and reads two sweep folders and compares B
// against A.
func OpenSweeps(runsDir, a, b string) (*SweepComparison, error) {
	var ss [2]*SweepSide
	for i, name := range []string{a, b} {
		dir, ok := ResolveSweep(runsDir, name)
		if !ok {
			return nil, fmt.Errorf("%s: not a sweep folder (no %s)", name, record.SweepFile)
		}
		s, _, err := LoadSweepSide(dir)
		if err != nil {
			return nil, err
		}
		s.readWorkload()
		ss[i] = s
	}
	return CompareSweeps(ss[0], ss[1])
}

// CompareSweeps pairs the cells of two sweeps of the same dimension by
// their value, in ascending order. Sweeps of different dimensions are
// ErrSweepMismatch.
func CompareSweeps(a, b *SweepSide) (*SweepComparison, error) {
	if a.Dimension != b.Dimension {
		return nil, fmt.Errorf("A (%s) sweeps %s and B (%s) sweeps %s: their curves share no x axis: %w",
			a.ID, orDash(a.Dimension), b.ID, orDash(b.Dimension), ErrSweepMismatch)
	}
	c := &SweepComparison{A: a, B: b}
	byValue := map[float64]*SweepRow{}
	var values []float64
	for side, s := range []*SweepSide{a, b} {
		for i := range s.Cells {
			cell := &s.Cells[i]
			row := byValue[cell.Value]
			if row == nil {
				row = &SweepRow{Value: cell.Value}
				byValue[cell.Value] = row
				values = append(values, cell.Value)
			}
			// A value run twice keeps its first cell.
			if side == 0 && row.A == nil {
				row.A = cell
			} else if side == 1 && row.B == nil {
				row.B = cell
			}
		}
	}
	slices.Sort(values)
	for _, v := range values {
		c.Rows = append(c.Rows, *byValue[v])
	}
	if wa, wb := a.Workload(), b.Workload(); wa != "" && wb != "" && wa != wb {
		c.Notes = append(c.Notes, fmt.Sprintf("A ran %s and B %s: the curves are of different workloads.", wa, wb))
	}
	for i, s := range []*SweepSide{a, b} {
		if s.Interrupted {
			c.Notes = append(c.Notes, fmt.Sprintf("%c was interrupted: its curve ends where it stopped.", 'A'+i))
		}
	}
	return c, nil
}

// Swapped is the comparison with A and B exchanged.
func (c *SweepComparison) Swapped() *SweepComparison {
	s, _ := CompareSweeps(c.B, c.A)
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// SweepGroup is a column group of SweepRow.Cells: a title over columns
// From..To (inclusive).
type SweepGroup struct {
	Title    string
	From, To int
}

// SweepHeader is the header of SweepRow.Cells: the groups over the
// columns, and each column's own name.
func (c *SweepComparison) SweepHeader() ([]SweepGroup, []string) {
	achieved := "achieved req/s"
	if c.A.Dimension == "concurrency" {
		achieved = "mean in flight"
	}
	groups := []SweepGroup{{achieved, 1, 2}, {"p50 TTFT ms", 3, 4}, {"p99 TTFT ms", 5, 7}, {"good %", 8, 9}}
	return groups, []string{orDash(c.A.Dimension), "A", "B", "A", "B", "A", "B", "delta", "A", "B"}
}

// Cells is the row as text, in SweepHeader's order. A cell whose load
// was not delivered has its achieved figure marked with "*"; "-" stands
// where a sweep ran no cell at the value, "n/a" for an unmeasured figure.
func (r SweepRow) Cells(s *SweepSide) []string {
	num := func(c *record.SweepCell, get func(*record.SweepCell) *float64, scale float64, prec int) string {
		if c == nil {
			return "-"
		}
		v := get(c)
		if v == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.*f", prec, *v*scale)
	}
	achieved := func(c *record.SweepCell) string {
		out := num(c, func(c *record.SweepCell) *float64 { return s.AchievedLoad(*c) }, 1, 2)
		if c != nil && c.Delivered != nil && !*c.Delivered {
			out += "*"
		}
		return out
	}
	p50 := func(c *record.SweepCell) *float64 { return c.P50TTFTms }
	p99 := func(c *record.SweepCell) *float64 { return c.P99TTFTms }
	good := func(c *record.SweepCell) *float64 { return c.GoodFraction }
	return []string{
		FormatNum(r.Value),
		achieved(r.A), achieved(r.B),
		num(r.A, p50, 1, 1), num(r.B, p50, 1, 1),
		num(r.A, p99, 1, 1), num(r.B, p99, 1, 1),
		r.P99Delta(),
		num(r.A, good, 100, 1), num(r.B, good, 100, 1),
	}
}

// P99Delta is B's p99 TTFT against A's as a signed percentage, "-" when
// either is missing.
func (r SweepRow) P99Delta() string {
	if r.A == nil || r.B == nil || r.A.P99TTFTms == nil || r.B.P99TTFTms == nil || *r.A.P99TTFTms == 0 {
		return "-"
	}
	d := (*r.B.P99TTFTms - *r.A.P99TTFTms) / *r.A.P99TTFTms * 100
	if d > -0.05 && d < 0.05 {
		return "0.0%"
	}
	return fmt.Sprintf("%+.1f%%", d)
}
