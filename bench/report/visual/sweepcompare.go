package visual

import (
	"fmt"
	"io"
	"strings"

	"github.com/kvbench/kvbench/bench/runs"
)

// WriteSweepComparison prints the two curves side by side, one row per
// value of the swept dimension, and the capacity each sweep found.
func WriteSweepComparison(w io.Writer, c *runs.SweepComparison) error {
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

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// textTable prints rows in columns two spaces apart, indented by two,
// under a line of group titles, each right-aligned over its columns.
func textTable(b *strings.Builder, groups []runs.SweepGroup, rows [][]string, right []bool) {
	widths := runs.ColumnWidths(rows, len(right))
	span := func(g runs.SweepGroup) int {
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
