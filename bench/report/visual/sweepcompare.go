package visual

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/internal/textclean"
)

// ErrSweepMismatch is why two sweeps cannot be overlaid: one varies the
// rate, the other the concurrency, so their x axes differ.
var ErrSweepMismatch = errors.New("sweeps of different dimensions")

// ResolveSweep finds a sweep folder named by id in runsDir, by a unique
// prefix of one (as runs.FolderID shows it or as it is on disk), or by
// path; ok is false when the name is no sweep.
func ResolveSweep(runsDir, name string) (dir string, ok bool) {
	if dir, ok := sweepDir(runsDir, name); ok {
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

// Workload is the workload the sweep's cells ran ("" when no cell
// folder could be read).
func (s *Sweep) Workload() string {
	for _, r := range s.runs {
		if r.Workload != "" {
			return r.Workload
		}
	}
	return ""
}

// AchievedLoad is a cell's x on the sweep's curve: its achieved rate (a
// rate sweep) or mean concurrency, nil when unmeasured.
func (s *Sweep) AchievedLoad(c SweepCell) *float64 { return s.loadAxis(c) }

// CellLabel names a value of the sweep's dimension with its unit ("4
// req/s", "8 in flight").
func (s *Sweep) CellLabel(v float64) string { return cellLabel(s.Dimension, v) }

// SLO is the sweep's --slo as text ("ttft 500 ms, e2e 2000 ms"), ""
// without one.
func (s *Sweep) SLO() string {
	slo := s.summary.get("sweep", "slo")
	var parts []string
	for _, k := range []string{"ttft", "tpot", "e2e"} {
		if v, ok := slo.get(k + "_ms").num(); ok {
			parts = append(parts, k+" "+fmtNum(v)+" ms")
		}
	}
	return strings.Join(parts, ", ")
}

// Capacity says what the sweep found: the highest value that met the
// goodput target with its good fraction, or why there is none, and
// under which SLO.
func (s *Sweep) Capacity() string {
	out := s.capacity()
	if slo := s.SLO(); slo != "" {
		out += "; SLO " + slo
	}
	return out
}

func (s *Sweep) capacity() string {
	und := s.undeliveredText()
	switch {
	case s.MaxValue != nil:
		g := "n/a"
		if s.GoodFractionAtMax != nil {
			g = fmt.Sprintf("%.1f%%", *s.GoodFractionAtMax*100)
		}
		out := fmt.Sprintf("%s (good fraction %s", cellLabel(s.Dimension, *s.MaxValue), g)
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

// SweepRow is one value of the swept dimension and each sweep's cell at
// it (nil where that sweep ran none).
type SweepRow struct {
	Value float64
	A, B  *SweepCell
}

// SweepComparison sets sweep B's curve beside sweep A's, cell by cell at
// the same value of the swept dimension.
type SweepComparison struct {
	A, B *Sweep
	Rows []SweepRow
	// Notes are plain remarks on what is compared (different workloads,
	// an interrupted sweep).
	Notes []string
}

// OpenSweeps resolves and reads two sweep folders and compares B
// against A.
func OpenSweeps(runsDir, a, b string) (*SweepComparison, error) {
	var ss [2]*Sweep
	for i, name := range []string{a, b} {
		dir, ok := ResolveSweep(runsDir, name)
		if !ok {
			return nil, fmt.Errorf("%s: not a sweep folder (no %s)", name, record.SweepFile)
		}
		s, err := LoadSweep(dir)
		if err != nil {
			return nil, err
		}
		ss[i] = s
	}
	return CompareSweeps(ss[0], ss[1])
}

// CompareSweeps pairs the cells of two sweeps of the same dimension by
// their value, in ascending order. Sweeps of different dimensions are
// ErrSweepMismatch.
func CompareSweeps(a, b *Sweep) (*SweepComparison, error) {
	if a.Dimension != b.Dimension {
		return nil, fmt.Errorf("A (%s) sweeps %s and B (%s) sweeps %s: their curves share no x axis: %w",
			a.ID, orDash(a.Dimension), b.ID, orDash(b.Dimension), ErrSweepMismatch)
	}
	c := &SweepComparison{A: a, B: b}
	byValue := map[float64]*SweepRow{}
	var values []float64
	for side, s := range []*Sweep{a, b} {
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
	for i, s := range []*Sweep{a, b} {
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

// SweepGroups are the column groups of SweepRow.Cells: a title over
// columns From..To (inclusive).
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

// Cells is the row as text, in SweepColumns' order. A cell whose load
// was not delivered has its achieved figure marked with "*"; "-" stands
// where a sweep ran no cell at the value, "n/a" for an unmeasured figure.
func (r SweepRow) Cells(s *Sweep) []string {
	num := func(c *SweepCell, get func(*SweepCell) *float64, scale float64, prec int) string {
		if c == nil {
			return "-"
		}
		v := get(c)
		if v == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.*f", prec, *v*scale)
	}
	achieved := func(c *SweepCell) string {
		out := num(c, func(c *SweepCell) *float64 { return s.loadAxis(*c) }, 1, 2)
		if c != nil && c.Delivered != nil && !*c.Delivered {
			out += "*"
		}
		return out
	}
	p50 := func(c *SweepCell) *float64 { return c.P50TTFTms }
	p99 := func(c *SweepCell) *float64 { return c.P99TTFTms }
	good := func(c *SweepCell) *float64 { return c.GoodFraction }
	return []string{
		fmtNum(r.Value),
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

// Describe is one line naming a sweep: id, workload, dimension, cells.
func (s *Sweep) Describe() string {
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

// WriteText prints the two curves side by side, one row per value of
// the swept dimension, and the capacity each sweep found.
func (c *SweepComparison) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "A: %s\n", c.A.Describe())
	fmt.Fprintf(&b, "B: %s\n", c.B.Describe())
	for _, n := range c.Notes {
		b.WriteString("  " + n + "\n")
	}
	b.WriteString("\nCapacity (highest " + orDash(c.A.Dimension) + " meeting the goodput target)\n")
	fmt.Fprintf(&b, "  A  %s\n  B  %s\n", c.A.Capacity(), c.B.Capacity())
	b.WriteString("\nCurves\n")
	groups, head := c.SweepHeader()
	rows := [][]string{head}
	marked := false
	for _, r := range c.Rows {
		cells := r.Cells(c.A)
		for _, x := range cells[1:3] {
			marked = marked || strings.HasSuffix(x, "*")
		}
		rows = append(rows, cells)
	}
	right := make([]bool, len(rows[0]))
	for i := range right {
		right[i] = true
	}
	textTable(&b, groups, rows, right)
	if marked {
		b.WriteString("  * the cell did not deliver its load: its latencies understate that load\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// textTable prints rows in columns two spaces apart, indented by two,
// under a line of group titles, each right-aligned over its columns.
func textTable(b *strings.Builder, groups []SweepGroup, rows [][]string, right []bool) {
	widths := runs.ColumnWidths(rows, len(right))
	span := func(g SweepGroup) int {
		n := 2 * (g.To - g.From)
		for i := g.From; i <= g.To; i++ {
			n += widths[i]
		}
		return n
	}
	for _, g := range groups {
		if short := len([]rune(g.Title)) - span(g); short > 0 {
			widths[g.To] += short
		}
	}
	if len(groups) > 0 {
		var line strings.Builder
		line.WriteString("  ")
		col := 0
		for _, g := range groups {
			for ; col < g.From; col++ {
				line.WriteString(strings.Repeat(" ", widths[col]+2))
			}
			line.WriteString(strings.Repeat(" ", span(g)-len([]rune(g.Title))) + g.Title + "  ")
			col = g.To + 1
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	runs.WriteColumns(b, rows, widths, right)
}
