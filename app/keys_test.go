package app

import (
	"slices"
	"testing"

	"github.com/charmbracelet/bubbles/key"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/run"
)

// A move named the same in two screens' help is the same keys: every
// screen composes its moves from the shared key map.
func TestMovesAreTheSameKeysOnEveryScreen(t *testing.T) {
	c := testCommon(t.TempDir(), t.TempDir())
	km := c.KeyMap
	shared := map[string]key.Binding{
		"pgdn": km.PageDown, "pgup": km.PageUp, "g": km.Top, "G": km.Bottom,
		"↑/k": km.Up, "↓/j": km.Down, "esc": km.Back,
	}
	live := run.NewFromSource(c, &fakeSource{}, runInfo())
	finished := run.NewFromSource(c, &fakeSource{}, runInfo())
	finished.End(bench.Finish{Summary: finishedSummary()})
	screens := []common.Screen{live, finished}
	for _, i := range []common.Intent{
		common.OpenResults{}, common.OpenRunDetail{Dir: t.TempDir()}, common.OpenCompare{A: "a", B: "b"},
		common.OpenForm{Config: config.Default()}, common.OpenDoctor{},
	} {
		s, _ := route(c, i)
		screens = append(screens, s)
	}
	seen := map[string]int{}
	for _, s := range screens {
		for _, group := range s.FullHelp() {
			for _, b := range group {
				want, ok := shared[b.Help().Key]
				if !ok {
					continue
				}
				seen[b.Help().Key]++
				if !slices.Equal(b.Keys(), want.Keys()) {
					t.Errorf("%s: %q is %v, the shared map's is %v", s.Title(), b.Help().Key, b.Keys(), want.Keys())
				}
			}
		}
	}
	for _, k := range []string{"pgdn", "pgup", "↑/k", "esc"} {
		if seen[k] < 2 {
			t.Errorf("%q shown on %d screen(s): the check compares nothing", k, seen[k])
		}
	}
}
