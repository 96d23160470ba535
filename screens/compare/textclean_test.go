//go:build unix

package compare_test

import (
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/internal/textclean/cleantest"
	"github.com/kvbench/kvbench/screens/compare"
	"github.com/kvbench/kvbench/screens/screentest"
)

// Two runs, and two sweeps, with terminal controls in their folder
// names, names, model ids and configs compare on screen cleaned.
func TestCompareScreenShowsHostileRunsClean(t *testing.T) {
	screentest.PinColors()
	dir := t.TempDir()
	a := runstest.Hostile(t, dir, runstest.Spec{Started: t0, Requests: 6, Summary: true}, true)
	b := runstest.Hostile(t, dir, runstest.Spec{Started: t0.Add(time.Hour), Requests: 6, BaseTTFTms: 50, Summary: true,
		Config: map[string]any{"seed": 7}}, false)
	cells := []runstest.SweepCell{{Value: 2, Achieved: runstest.F(2), P50TTFTms: runstest.F(40), P99TTFTms: runstest.F(90)}}
	sa := runstest.HostileSweep(t, dir, runstest.SweepSpec{Started: t0.Add(2 * time.Hour), Cells: cells})
	sb := runstest.HostileSweep(t, dir, runstest.SweepSpec{Started: t0.Add(3 * time.Hour), Cells: cells})
	for _, sz := range [][2]int{{80, 24}, {250, 80}} {
		c := screentest.Common(sz[0], sz[1], screentest.Now)
		c.RunsDir = dir
		for _, pair := range [][2]string{{a, b}, {sa, sb}} {
			s := compare.New(c, pair[0], pair[1])
			m, _ := s.Update(s.Init()())
			cleantest.Check(t, "compare screen", m.View())
			cleantest.Clean(t, "compare title", s.Title())
		}
	}
}
