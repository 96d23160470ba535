package app

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/run"
)

// TestStatusLineWraps: a long error on the status line is read whole at
// 60, 80 and 200 columns (it used to end in "…e.g. http:/"), and the
// frame keeps the terminal's size: the screen gives up the lines.
func TestStatusLineWraps(t *testing.T) {
	msg := `--engine-url "localhost:8000": not an engine URL; give a scheme and host, e.g. http://localhost:8000`
	for _, sz := range [][2]int{{60, 20}, {80, 24}, {200, 60}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			c := testCommon("/runs", "/cfg")
			m := sized(c, run.NewFromSource(c, &fakeSource{}, runInfo()), sz[0], sz[1])
			before := c.Height
			m.Update(common.StatusMsg{Text: msg, Err: true})
			out := m.render()
			checkFits(t, out, sz[0], sz[1])
			if got := strings.Join(strings.Fields(ansi.Strip(out)), " "); !strings.Contains(got, msg) {
				t.Errorf("the message is cut:\n%s", out)
			}
			if n := len(common.Wrap(msg, sz[0]-1)); c.Height != before-(n-1) {
				t.Errorf("the screen has %d lines with a %d-line status, %d before", c.Height, n, before)
			}
			// A key clears it, and the screen has its lines back.
			m.Update(tea.KeyMsg{Type: tea.KeyTab})
			if c.Height != before {
				t.Errorf("the screen has %d lines once the status is gone, want %d", c.Height, before)
			}
		})
	}
}
