package common

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// Wrap breaks a message into lines of at most w cells: at spaces where it
// can, inside a word (a URL, a path) where it must. A message is read
// whole at every width; it is never cut. w < 1 gives no line.
func Wrap(s string, w int) []string {
	if w < 1 {
		return nil
	}
	lines := strings.Split(ansi.Wrap(s, w, ""), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return lines
}

// WrapStyled is Wrap with each line rendered in st, joined by newlines;
// continuation lines are indented by indent cells (under the text after
// a mark such as "✗ ").
func WrapStyled(st lipgloss.Style, s string, w, indent int) string {
	if w < 1 {
		return ""
	}
	first := Wrap(s, w)
	if len(first) <= 1 || indent <= 0 || indent >= w {
		return renderLines(st, first)
	}
	// The first line at full width, the rest under the text.
	head := first[0]
	rest := strings.TrimSpace(strings.TrimPrefix(ansi.Strip(s), ansi.Strip(head)))
	lines := []string{head}
	for _, l := range Wrap(rest, w-indent) {
		lines = append(lines, strings.Repeat(" ", indent)+l)
	}
	return renderLines(st, lines)
}

func renderLines(st lipgloss.Style, lines []string) string {
	for i, l := range lines {
		lines[i] = st.Render(l)
	}
	return strings.Join(lines, "\n")
}
