//go:build unix && !aix && !solaris

package sweep

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/simtest"
)

// A sweep holds its folder's lock from its creation to its last write of
// sweep.json, between cells too; each cell holds its own while it runs.
func TestSweepHoldsLock(t *testing.T) {
	url := simtest.Start(t, func(c *sim.Config) { c.Speed = 50 })
	cfg := baseConfig(t, url, nil)
	var sweepDir string
	var atStart, atEnd []string
	_, dir, code, err := Run(context.Background(), Options{Config: cfg, Dimension: Rate, Values: []float64{100, 200},
		CellStarted: func(i int, _ float64, r *bench.Runner) {
			sweepDir = filepath.Dir(filepath.Dir(r.Dir()))
			atStart = append(atStart, string(runs.ReadSweep(sweepDir).Status()))
			if !record.Locked(r.Dir()) {
				t.Errorf("cell %d: its folder is not locked", i)
			}
		},
		Cell: func(i int, c Cell) {
			atEnd = append(atEnd, string(runs.ReadSweep(sweepDir).Status()))
			if cell := record.SweepCellDir(sweepDir, c.RunID); record.Locked(cell) {
				t.Errorf("cell %d: locked after it ended", i)
			}
		}})
	if err != nil || code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	if dir != sweepDir {
		t.Fatalf("sweep folder %s, cells under %s", dir, sweepDir)
	}
	for i := range 2 {
		if atStart[i] != "running" || atEnd[i] != "running" {
			t.Errorf("cell %d: sweep %s at its start, %s at its end; want running", i, atStart[i], atEnd[i])
		}
	}
	if record.Locked(dir) {
		t.Error("the sweep folder is locked after the sweep")
	}
	if s := runs.ReadSweep(dir); s.Status() != runs.StatusOK {
		t.Errorf("finished sweep: %s", s.Status())
	}
}
