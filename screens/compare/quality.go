package compare

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/theme"
)

// qualityBody is the answer quality of two rag-qa-quality runs: the
// headline figures, then each sample's F1 and TTFT in A and B, an F1 that
// rose in the OK colour and one that fell in the error colour (a TTFT
// the other way round).
func qualityBody(q *runs.QualityComparison, st *theme.Styles) string {
	var b strings.Builder
	b.WriteString(st.PanelTitle.Render("Answer quality") + st.Muted.Render("  samples paired by id") + "\n")
	if q.Note != "" {
		b.WriteString(st.Warn.Render(q.Note) + "\n")
		return b.String()
	}
	head := q.Headline()
	lw := 0
	for _, r := range head {
		lw = max(lw, ansi.StringWidth(r[0]))
	}
	for _, r := range head {
		style := lipgloss.NewStyle()
		switch {
		case strings.HasPrefix(r[0], "Mean F1 delta"):
			style = signStyle(st, r[1], true)
		case strings.HasPrefix(r[0], "Mean TTFT delta"):
			style = signStyle(st, r[1], false)
		case strings.HasPrefix(r[0], "Settings"):
			style = st.Warn
		}
		b.WriteString(r[0] + strings.Repeat(" ", lw-ansi.StringWidth(r[0])+2) + style.Render(r[1]) + "\n")
	}
	if len(q.Pairs) == 0 {
		return b.String()
	}
	rows := [][]string{runs.QualityHeader}
	for _, p := range q.Pairs {
		rows = append(rows, p.Row())
	}
	widths := make([]int, len(runs.QualityHeader))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	b.WriteByte('\n')
	for i, r := range rows {
		var parts []string
		for j, c := range r {
			pad := strings.Repeat(" ", widths[j]-ansi.StringWidth(c))
			cell := pad + c
			if j == 0 {
				cell = c + pad
			}
			style := lipgloss.NewStyle()
			switch {
			case i == 0:
				style = st.Muted
			case j == 1 || j == 4:
				style = st.SeriesA
			case j == 2 || j == 5:
				style = st.SeriesB
			case j == 3:
				style = signStyle(st, c, true)
			case j == 6:
				style = signStyle(st, c, false)
			}
			parts = append(parts, style.Render(cell))
		}
		b.WriteString(strings.Join(parts, "  ") + "\n")
	}
	return b.String()
}

// signStyle colours a signed change: up is better when higherBetter.
// "parsed A only" is a loss of an answer (B parsed nothing), "parsed B
// only" a gain.
func signStyle(st *theme.Styles, v string, higherBetter bool) lipgloss.Style {
	up := strings.HasPrefix(v, "+") || v == "parsed B only"
	down := (strings.HasPrefix(v, "-") && v != "-") || v == "parsed A only"
	switch {
	case up && higherBetter, down && !higherBetter:
		return st.OK
	case up, down:
		return st.StatusError
	}
	return st.Muted
}
