package common

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

func TestWrapKeepsEveryWord(t *testing.T) {
	msg := "✗ preflight: GET http://127.0.0.1/v1/models: connection refused: is the engine running and listening on 127.0.0.1:80? e.g. http://localhost:8000"
	for _, w := range []int{20, 40, 60, 80, 200} {
		lines := Wrap(msg, w)
		for _, l := range lines {
			if n := ansi.StringWidth(l); n > w {
				t.Errorf("width %d: line of %d cells: %q", w, n, l)
			}
		}
		if got := strings.Join(strings.Fields(strings.Join(lines, " ")), ""); got != strings.Join(strings.Fields(msg), "") {
			t.Errorf("width %d: text lost or changed:\n%q", w, lines)
		}
		if w >= len([]rune(msg)) && len(lines) != 1 {
			t.Errorf("width %d: %d lines for a message that fits", w, len(lines))
		}
	}
	if Wrap(msg, 0) != nil {
		t.Error("no width, yet lines")
	}
	out := WrapStyled(lipgloss.NewStyle(), msg, 30, 2)
	for i, l := range strings.Split(out, "\n") {
		if i > 0 && !strings.HasPrefix(l, "  ") {
			t.Errorf("continuation line %d not indented: %q", i, l)
		}
		if ansi.StringWidth(l) > 30 {
			t.Errorf("styled line too wide: %q", l)
		}
	}
}
