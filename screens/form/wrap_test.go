package form

import (
	"errors"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/screentest"
)

// TestErrorsWrapWhole: a refused start's message (a URL, a question at
// its end) is read whole on the summary at 60 and 80 columns, on lines
// no wider than the screen.
func TestErrorsWrapWhole(t *testing.T) {
	msg := "preflight: GET http://127.0.0.1/v1/models: connection refused: is the engine running and listening on 127.0.0.1:80?"
	for _, w := range []int{60, 80} {
		c := screentest.Common(w, 24, screentest.Now)
		c.RunsDir, c.ConfigDir = "/runs", "/cfg"
		cfg := config.Default()
		cfg.SetString("workload", config.LongDocQA)
		cfg.SetString("engine_url", "builtin")
		m := NewReview(c, cfg, false)
		m.done("", errors.New(msg))
		v := m.View()
		flat := strings.Join(strings.Fields(ansi.Strip(v)), " ")
		if !strings.Contains(flat, "✗ "+msg) {
			t.Errorf("%d columns: the error is cut:\n%s", w, v)
		}
		lines := strings.Split(ansi.Strip(v), "\n")
		for i, l := range lines {
			if !strings.HasPrefix(l, "✗ ") {
				continue
			}
			for j := i; j < len(lines) && (j == i || strings.HasPrefix(lines[j], "  ")); j++ {
				if ansi.StringWidth(lines[j]) > w {
					t.Errorf("%d columns: an error line of %d cells: %q", w, ansi.StringWidth(lines[j]), lines[j])
				}
			}
		}
	}
}
