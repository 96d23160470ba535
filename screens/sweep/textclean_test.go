//go:build unix

package sweep

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/internal/textclean/cleantest"
	"github.com/kvbench/kvbench/screens/screentest"
)

// A sweep whose folder name and sweep.json hold terminal controls is
// reviewed cleaned: its title, its view, and the error of one whose
// sweep.json cannot be read.
func TestReviewOfAHostileSweepIsClean(t *testing.T) {
	sd := runstest.HostileSweep(t, t.TempDir(), runstest.SweepSpec{Started: time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local),
		Cells: []runstest.SweepCell{{Value: 2, Achieved: f(2), P50TTFTms: f(40), P99TTFTms: f(90)}}})
	m := NewReview(screentest.Common(200, 60, screentest.Now), sd)
	m.Update(m.Init()())
	cleantest.Check(t, "review title", m.Title())
	cleantest.Clean(t, "review", m.View())

	if err := os.WriteFile(filepath.Join(sd, record.SweepFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	m = NewReview(screentest.Common(200, 60, screentest.Now), sd)
	m.Update(m.Init()())
	cleantest.Check(t, "review of an unreadable sweep", m.View())
}
