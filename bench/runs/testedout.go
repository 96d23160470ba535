package runs

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
)

// FormatRowValue renders a row's value in its unit: a share as a
// percentage, a latency in ms, a throughput with its unit; "n/a" for
// null.
func FormatRowValue(v *float64, unit string) string {
	if v == nil {
		return "n/a"
	}
	switch unit {
	case "%":
		return fmt.Sprintf("%.2f%%", *v*100)
	case "":
		return fmt.Sprintf("%.2f", *v)
	}
	return fmt.Sprintf("%.2f %s", *v, unit)
}

func signed(v float64) string {
	if math.Abs(v) < 0.05 {
		return fmt.Sprintf("%+.2f", v)
	}
	return fmt.Sprintf("%+.1f", v)
}

// FormatRowDelta renders a row's delta: +10.2% or -3.0pp; "n/a" without.
func FormatRowDelta(r *Row) string {
	if r.Delta == nil {
		return "n/a"
	}
	return signed(*r.Delta) + r.DeltaUnit
}

// FormatCI renders a row's interval: [+9.8%, +10.6%]; "-" without.
func FormatCI(r *Row) string {
	if r.CI95 == nil {
		return "-"
	}
	return "[" + signed(r.CI95[0]) + r.DeltaUnit + ", " + signed(r.CI95[1]) + r.DeltaUnit + "]"
}

// FormatP renders a p-value: <0.001, 0.042; "-" without a test.
func FormatP(p *float64) string {
	if p == nil {
		return "-"
	}
	if *p < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", *p)
}

// FormatPEq is a p-value after "p": "<0.001" or "=0.042".
func FormatPEq(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("=%.3f", p)
}

// RowCells are a row's cells as every output shows them: metric (with
// its state), A, B, delta, interval, p, word, note.
func (r *Row) Cells() []string {
	return []string{r.Key(), FormatRowValue(r.A, r.m.Unit), FormatRowValue(r.B, r.m.Unit), FormatRowDelta(r),
		FormatCI(r), FormatP(r.P), r.Word, r.Note}
}

// Label names the row for reading: the metric's label, with its cache
// state ("TTFT p50, cold requests").
func (r *Row) Label() string {
	if r.State == "" {
		return r.m.Label
	}
	return r.m.Label + ", " + r.State + " requests"
}

// RowHeader names the cells of Cells.
var RowHeader = []string{"metric", "A", "B", "delta", "95% interval", "p", "", ""}

// WriteText prints the tested rows (with the cache's note first when
// the hit ratios differ) and the gates.
func (t *Tested) WriteText(w io.Writer) error {
	var b strings.Builder
	t.writeText(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

func (t *Tested) writeText(b *strings.Builder) {
	b.WriteString("\n" + t.Method() + "\n")
	if t.CacheMoved {
		b.WriteString("\n" + t.CacheNote + "\n")
	}
	b.WriteString("\n")
	rows := [][]string{RowHeader}
	for i := range t.Rows {
		rows = append(rows, t.Rows[i].Cells())
	}
	writeTable(b, rows, []bool{false, true, true, true, true, true, false, false})
	if len(t.Gates) > 0 {
		fmt.Fprintf(b, "\nGates (%d of %d failed)\n", t.Failed(), len(t.Gates))
		rows = nil
		for _, g := range t.Gates {
			mark := "pass"
			if !g.Passed {
				mark = "FAIL"
			}
			rows = append(rows, []string{mark, g.Gate, g.Reason})
		}
		writeTable(b, rows, []bool{false, false, false})
	}
}

// WriteCompareText prints a comparison: who is A and B, the tested rows,
// the gates, then (two runs) every figure of both summaries with its
// plain delta and the config keys that differ.
func WriteCompareText(w io.Writer, c *Comparison, t *Tested) error {
	var b strings.Builder
	if c != nil {
		c.writeHeader(&b)
	} else {
		for _, s := range []struct {
			name string
			x    *Subject
		}{{"A", t.A}, {"B", t.B}} {
			fmt.Fprintf(&b, "%s: %s (%s)\n", s.name, s.x.ID, s.x.Describe())
		}
	}
	t.writeText(&b)
	if c != nil {
		b.WriteString("\nAll figures of both summaries (plain deltas, no test: the rows above say what changed)\n")
		c.writeTables(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

type rowJSON struct {
	Metric string      `json:"metric"`
	State  *string     `json:"state"`
	A      *float64    `json:"a"`
	B      *float64    `json:"b"`
	Delta  *float64    `json:"delta"`
	Unit   string      `json:"unit"`
	CI95   *[2]float64 `json:"ci95"`
	P      *float64    `json:"p"`
	Word   string      `json:"word"`
	Note   string      `json:"note,omitempty"`
	NA     int         `json:"n_a"`
	NB     int         `json:"n_b"`
}

type testedJSON struct {
	A         string       `json:"a"`
	B         string       `json:"b"`
	AKind     string       `json:"a_kind"`
	BKind     string       `json:"b_kind"`
	Samples   string       `json:"samples"`
	Alpha     float64      `json:"alpha"`
	CacheNote *string      `json:"cache_note"`
	Rows      []rowJSON    `json:"rows"`
	Gates     []GateResult `json:"gates"`
}

func kind(s *Subject) string {
	if s.IsSeries() {
		return "series"
	}
	return "run"
}

// WriteJSON prints {a, b, rows, gates} (spec/stats.md), two-space
// indented. Shares (hit_ratio, error_rate) are fractions; their delta
// and interval are in points.
func (t *Tested) WriteJSON(w io.Writer) error {
	j := testedJSON{A: t.A.ID, B: t.B.ID, AKind: kind(t.A), BKind: kind(t.B), Samples: "requests", Alpha: t.Alpha,
		Rows: []rowJSON{}, Gates: t.Gates}
	if t.ByRuns {
		j.Samples = "runs"
	}
	if t.CacheMoved {
		j.CacheNote = &t.CacheNote
	}
	if j.Gates == nil {
		j.Gates = []GateResult{}
	}
	for _, r := range t.Rows {
		var st *string
		if r.State != "" {
			s := r.State
			st = &s
		}
		j.Rows = append(j.Rows, rowJSON{Metric: r.Metric, State: st, A: r.A, B: r.B, Delta: r.Delta, Unit: r.DeltaUnit,
			CI95: r.CI95, P: r.P, Word: r.Word, Note: r.Note, NA: r.NA, NB: r.NB})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}
