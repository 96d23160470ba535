//go:build unix

package visual

import (
	"bytes"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/internal/textclean/cleantest"
)

// Runs and sweeps whose folder names, names, model ids and notes hold
// terminal controls make an HTML page and SVG charts that hold none (XML
// 1.0 refuses most C0 characters even escaped): every chart parses as
// XML, and the names are there, cleaned.
func TestHostileNamesMakeValidReports(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)
	a := runstest.Hostile(t, dir, runstest.Spec{Started: t0, Requests: 30, ReusedEvery: 2, Summary: true}, true)
	b := runstest.Hostile(t, dir, runstest.Spec{Started: t0.Add(time.Hour), Requests: 30, BaseTTFTms: 50, Summary: true}, false)
	for _, args := range [][]string{{a}, {a, b}} {
		html := loadHTML(t, dir, args...)
		cleantest.Check(t, "HTML report", html)
		rep, err := Open(dir, args)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{ChartTTFTCDF, ChartTTFTTime, ChartThroughputTime} {
			var buf bytes.Buffer
			if err := rep.SVG(&buf, name); err != nil {
				t.Fatal(err)
			}
			parseSVG(t, buf.Bytes())
			cleantest.Clean(t, name+" SVG", buf.String())
			if len(args) == 2 {
				// Two runs: the legend names them.
				cleantest.Check(t, name+" SVG", buf.String())
			}
		}
		if len(args) == 2 {
			// A comparison is named after the runs' ids (one run's
			// report goes into its folder, whatever its name).
			cleantest.Check(t, "comparison's file name", rep.DefaultPath("html", ""))
		}
	}

	sa := runstest.HostileSweep(t, dir, runstest.SweepSpec{Started: t0.Add(2 * time.Hour),
		Cells: []runstest.SweepCell{{Value: 2, Achieved: runstest.F(1.9), P50TTFTms: runstest.F(40), P99TTFTms: runstest.F(90)}}})
	sb := runstest.HostileSweep(t, dir, runstest.SweepSpec{Started: t0.Add(3 * time.Hour),
		Cells: []runstest.SweepCell{{Value: 2, Achieved: runstest.F(2), P50TTFTms: runstest.F(30), P99TTFTms: runstest.F(80)}}})
	cleantest.Check(t, "sweep HTML report", loadHTML(t, dir, sa, sb))
	rep, err := Open(dir, []string{sa, sb})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.SVG(&buf, ChartSweepCurve); err != nil {
		t.Fatal(err)
	}
	parseSVG(t, buf.Bytes())
	cleantest.Check(t, "sweep curve SVG", buf.String())
	cmp, err := runs.OpenSweeps(dir, sa, sb)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := WriteSweepComparison(&text, cmp); err != nil {
		t.Fatal(err)
	}
	cleantest.Check(t, "sweep comparison", text.String())
}
