package runs_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
)

var sweepCmpT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)

func TestCompareSweepsPairsCellsByValue(t *testing.T) {
	dir, a, b := runstest.TwoSweeps(t, sweepCmpT0)
	c, err := runs.OpenSweeps(dir, filepath.Base(a), b)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range c.Rows {
		got = append(got, strings.Join(r.Cells(c.A), " "))
	}
	want := []string{
		"2 1.98 - 40.0 - 100.0 - - 100.0 -",
		"4 3.90 3.95 60.0 30.0 200.0 150.0 -25.0% 95.0 100.0",
		"8 5.50* 7.80 300.0 50.0 900.0 450.0 -50.0% 40.0 92.0",
		"16 - 12.00 - 400.0 - 2000.0 - - 10.0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(c.Notes) != 0 {
		t.Errorf("notes for sweeps of one workload: %v", c.Notes)
	}

	s := c.Swapped()
	if s.A.ID != c.B.ID || s.Rows[1].P99Delta() != "+33.3%" {
		t.Errorf("swapped: A %s, p99 delta at 4 %s", s.A.ID, s.Rows[1].P99Delta())
	}
}

func TestCompareSweepsCapacityWords(t *testing.T) {
	dir := t.TempDir()
	F := runstest.F
	cells := []runstest.SweepCell{{Value: 2, Achieved: F(2), P50TTFTms: F(10), P99TTFTms: F(20)}}
	noSLO := runstest.WriteSweep(t, dir, runstest.SweepSpec{Name: "noslo", Started: sweepCmpT0, Cells: cells})
	none := runstest.WriteSweep(t, dir, runstest.SweepSpec{Name: "none", Started: sweepCmpT0.Add(time.Hour), GoodputTarget: F(0.9), Cells: cells, Interrupted: true})
	c, err := runs.OpenSweeps(dir, noSLO, none)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.A.Capacity(); got != "n/a: no --slo, so no goodput target" {
		t.Errorf("without an SLO: %q", got)
	}
	if got := c.B.Capacity(); got != "none: no cell reached the good fraction target 90%; SLO ttft 500 ms" {
		t.Errorf("nothing passed: %q", got)
	}
	if len(c.Notes) != 1 || c.Notes[0] != "B was interrupted: its curve ends where it stopped." {
		t.Errorf("notes %v", c.Notes)
	}
}

// Sweeps over different dimensions cannot share an axis; sweeps of
// different workloads are overlaid with a note.
func TestCompareSweepsMismatch(t *testing.T) {
	dir := t.TempDir()
	F := runstest.F
	cells := []runstest.SweepCell{{Value: 4, Achieved: F(3.9), P50TTFTms: F(10), P99TTFTms: F(20)}}
	rate := runstest.WriteSweep(t, dir, runstest.SweepSpec{Name: "r", Started: sweepCmpT0, Cells: cells})
	conc := runstest.WriteSweep(t, dir, runstest.SweepSpec{Name: "c", Dimension: "concurrency", Started: sweepCmpT0.Add(time.Hour), Cells: cells})
	other := runstest.WriteSweep(t, dir, runstest.SweepSpec{Name: "o", Workload: "random-prefill", Started: sweepCmpT0.Add(2 * time.Hour), Cells: cells})
	if _, err := runs.OpenSweeps(dir, rate, conc); !errors.Is(err, runs.ErrSweepMismatch) || !strings.Contains(err.Error(), "sweeps rate and B") {
		t.Errorf("rate against concurrency: %v", err)
	}
	c, err := runs.OpenSweeps(dir, rate, other)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Notes) != 1 || c.Notes[0] != "A ran long-doc-qa and B random-prefill: the curves are of different workloads." {
		t.Errorf("notes %v", c.Notes)
	}
}

func TestResolveSweep(t *testing.T) {
	dir, a, _ := runstest.TwoSweeps(t, sweepCmpT0)
	run := runstest.Write(t, dir, runstest.Spec{Name: "r", Started: sweepCmpT0, Requests: 2, Summary: true})
	for name, want := range map[string]string{
		filepath.Base(a):             a,  // id
		a:                            a,  // path
		"20260301-120000-sweep-long": a,  // unique prefix
		"20260301":                   "", // ambiguous: both sweeps start so
		filepath.Base(run):           "", // a run, not a sweep
		"nothing":                    "",
	} {
		got, ok := runs.ResolveSweep(dir, name)
		if got != want || ok != (want != "") {
			t.Errorf("ResolveSweep(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}
