package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/simtest"
)

func fp(v float64) *float64 { return &v }

// judged is a cell as the sweep records it, under a 90% goodput target.
func judged(c Cell) Cell {
	Judge(&c, Criteria{Dimension: Rate, GoodputTarget: fp(0.9)}, "")
	return c
}

// A rate list 2,5,10 whose every cell was held back by the workload's
// in-flight cap at 5 req/s: no cell passes or fails, max_value is null,
// and undelivered_above lists all three with their first reason. A list
// without --slo has no result at all.
func TestResultOnlyFromDeliveredCells(t *testing.T) {
	no := false
	held := "100 of 150 requests were held back by the workload's design: its in-flight cap"
	var cells []Cell
	for _, v := range []float64{2, 5, 10} {
		cells = append(cells, judged(Cell{Value: v, TargetRate: fp(v), AchievedRate: fp(min(v, 5)), Delivered: &no, GoodFraction: fp(1),
			Reasons: []string{held, "client overloaded: none"}}))
	}
	for _, c := range cells {
		if c.Status != record.CellNotDelivered {
			t.Fatalf("cell %v: status %q", c.Value, c.Status)
		}
	}
	r := ResultOf(cells, 0.9)
	if r == nil || r.MaxValue != nil || len(r.UndeliveredAbove) != 3 || r.UndeliveredAbove[0] != (record.Undelivered{Value: 2, Reason: held}) {
		t.Fatalf("result %+v", r)
	}
	f := &File{Sweep: Info{Dimension: Rate, GoodputTarget: fp(0.9)}, Cells: cells, Result: r}
	var b bytes.Buffer
	WriteTable(&b, f)
	out := b.String()
	for _, want := range []string{"not delivered\n", "rate 10 not delivered: " + held,
		"no delivered rate reached a good fraction of 90%; not delivered, so not judged: 2 (" + held + "), 5 ("} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "highest rate") {
		t.Errorf("table claims a capacity:\n%s", out)
	}
	s := &sweeper{o: Options{Dimension: Rate, GoodputTarget: 0.9}, f: &File{Cells: cells}}
	if s.result() != nil {
		t.Error("a list without --slo reports a result")
	}

	// "capacity >= 48; 64 was not delivered", never "capacity 64".
	yes := true
	cells = []Cell{
		judged(Cell{Value: 32, Delivered: &yes, GoodFraction: fp(1)}),
		judged(Cell{Value: 64, Delivered: &no, GoodFraction: fp(0.95), Reasons: []string{"client overloaded: dispatch lag 40 ms > 10 ms"}}),
		judged(Cell{Value: 48, Delivered: &yes, GoodFraction: fp(0.93)}),
	}
	r = ResultOf(cells, 0.9)
	if r == nil || r.MaxValue == nil || *r.MaxValue != 48 || len(r.UndeliveredAbove) != 1 || r.UndeliveredAbove[0].Value != 64 {
		t.Fatalf("result %+v", r)
	}
	line := ResultLine(&File{Sweep: Info{Dimension: Rate, GoodputTarget: fp(0.9)}, Result: r})
	if want := "highest rate with good fraction >= 90%: at least 48 (93.0% good); not delivered, so not judged: 64 (client overloaded: dispatch lag 40 ms > 10 ms)"; line != want {
		t.Errorf("result line %q, want %q", line, want)
	}
}

// A search whose client cannot deliver above 30 req/s (the engine would
// pass up to 38) bisects below the first undelivered value: it ends
// with the highest delivered pass, never a value it could not deliver,
// within its 12 cells. Started above what the client delivers, with no
// pass below, it stops at once rather than halve into ever longer cells.
func TestSearchBisectsBelowUndelivered(t *testing.T) {
	search := func(start float64) []Cell {
		s := &sweeper{o: Options{Dimension: Rate, Values: []float64{start}, Search: true, GoodputTarget: 0.9, Precision: 0.05, MaxCells: 12}, f: &File{}}
		next := s.plan()
		for i := 0; ; i++ {
			v, ok := next(i)
			if !ok {
				break
			}
			delivered := v <= 30
			g := 0.5
			if v <= 38 {
				g = 0.95
			}
			c := Cell{Value: v, Delivered: &delivered, GoodFraction: &g}
			if !delivered {
				c.Reasons = []string{"client overloaded"}
			}
			s.f.Cells = append(s.f.Cells, judged(c))
		}
		return s.f.Cells
	}
	cells := search(4)
	if len(cells) > 12 {
		t.Fatalf("%d cells", len(cells))
	}
	r := ResultOf(cells, 0.9)
	if r == nil || r.MaxValue == nil || *r.MaxValue > 30 || *r.MaxValue < 30*0.95 {
		t.Fatalf("result %+v (cells %v)", r, values(cells))
	}
	for _, u := range r.UndeliveredAbove {
		if u.Value <= 30 {
			t.Errorf("%v listed as not delivered", u.Value)
		}
	}
	cells = search(64)
	if r := ResultOf(cells, 0.9); len(cells) != 1 || r == nil || r.MaxValue != nil || len(r.UndeliveredAbove) != 1 {
		t.Errorf("start not delivered: cells %v, result %+v", values(cells), r)
	}
}

// The sustained-load check: a rate cell that completed under 95% of
// its target (or of its achieved rate, when that is lower), or whose
// TTFT p50 grew 1.5x from its first third to its last, is not
// sustained, with the figures; short cells and rises within noise are
// not judged.
func TestSustained(t *testing.T) {
	yes := true
	base := Cell{Value: 48, TargetRate: fp(48), AchievedRate: fp(48.5), CompletionRate: fp(37.2), TotalRequests: 150, Delivered: &yes,
		GoodFraction: fp(0.97), TTFTP50FirstThirdms: fp(30), TTFTP50LastThirdms: fp(32)}
	c := judged(base)
	if c.Status != record.CellNotSustained || len(c.Reasons) != 1 || !strings.Contains(c.Reasons[0], "completed 37.20 req/s, 78% of the 48 req/s target") {
		t.Errorf("growing queue: %q %q", c.Status, c.Reasons)
	}
	ok := base
	ok.CompletionRate = fp(47)
	if c := judged(ok); c.Status != record.CellPass {
		t.Errorf("kept up: %q %q", c.Status, c.Reasons)
	}
	slow := ok
	slow.AchievedRate, slow.CompletionRate = fp(44), fp(43) // a slow Poisson draw, delivered, kept up with
	if c := judged(slow); c.Status != record.CellPass {
		t.Errorf("judged against the target, not what was sent: %q %q", c.Status, c.Reasons)
	}
	grow := ok
	grow.TTFTP50LastThirdms = fp(480)
	if c := judged(grow); c.Status != record.CellNotSustained || !strings.Contains(c.Reasons[0], "from 30.0 ms in the cell's first third to 480.0 ms in its last (16.00x") {
		t.Errorf("TTFT grew: %q %q", c.Status, c.Reasons)
	}
	noise := ok
	noise.TTFTP50FirstThirdms, noise.TTFTP50LastThirdms = fp(4), fp(9)
	if c := judged(noise); c.Status != record.CellPass {
		t.Errorf("a 5 ms rise: %q %q", c.Status, c.Reasons)
	}
	// Under a 1 s TTFT limit, a queue filling from 48 to 120 ms (a cell
	// three times as long would reach 48 + 72 x 3.5 = 300 ms) does not
	// count; one rising from 72 to 300 ms (projected 870 ms) neither;
	// from 100 to 400 ms (projected 1150 ms) does.
	for _, c := range []struct {
		first, last float64
		sustained   bool
	}{{48, 120, true}, {72, 300, true}, {100, 400, false}} {
		x := ok
		x.TTFTP50FirstThirdms, x.TTFTP50LastThirdms = fp(c.first), fp(c.last)
		Judge(&x, Criteria{Dimension: Rate, GoodputTarget: fp(0.9), TTFTLimitms: fp(1000)}, "")
		if (x.Status == record.CellPass) != c.sustained {
			t.Errorf("%v -> %v ms under a 1 s limit: %q %q", c.first, c.last, x.Status, x.Reasons)
		}
		if !c.sustained && !strings.Contains(x.Reasons[0], "it would reach 1150 ms, over the 1000 ms TTFT limit") {
			t.Errorf("reason %q", x.Reasons)
		}
	}
	short := base
	short.TotalRequests = 20
	if c := judged(short); c.Status != record.CellPass {
		t.Errorf("a 20-request cell: %q %q", c.Status, c.Reasons)
	}
	failing := base
	failing.GoodFraction = fp(0.5)
	if c := judged(failing); c.Status != record.CellFail || len(c.Reasons) != 2 {
		t.Errorf("under the target and not sustained: %q %q", c.Status, c.Reasons)
	}
	// A concurrency cell has no rate to complete: only the TTFT check.
	conc := grow
	conc.TargetRate = nil
	Judge(&conc, Criteria{Dimension: Concurrency, GoodputTarget: fp(0.9)}, "")
	if conc.Status != record.CellNotSustained || len(conc.Reasons) != 1 {
		t.Errorf("concurrency cell: %q %q", conc.Status, conc.Reasons)
	}
}

// A short cell of a growing queue on the simulator (4 sequences, a
// serial prefill lane: about 19 req/s in model time) offered twice what
// the engine completes is not sustained, though its good fraction meets
// the SLO: it completes half its rate, and its TTFT, rising on, would
// break the 1 s limit in a longer cell. A cell at about 40% of the
// engine's rate is sustained and passes.
func TestShortCellOfGrowingQueueIsNotSustained(t *testing.T) {
	const speed = 5
	url := simtest.Start(t, func(c *sim.Config) {
		c.Speed, c.MaxNumSeqs, c.PrefillTPS = speed, 4, 1000
	})
	cfg := baseConfig(t, url, map[string]any{"slo": "ttft=1s", "rp_num_requests": 120, "rp_request_length": 40, "arrival": "constant"})
	// Model time: about 52 prompt tokens at 1000 tokens/s, one prefill at
	// a time: some 96 req/s at speed 5.
	f, _, code, err := Run(context.Background(), Options{Config: cfg, Dimension: Rate, Values: []float64{40, 200},
		GoodputTarget: 0.9, RunCell: deliveredCells})
	if err != nil || code != 0 || len(f.Cells) != 2 {
		t.Fatalf("exit %d: %v (%d cells)", code, err, len(f.Cells))
	}
	low, high := f.Cells[0], f.Cells[1]
	for _, c := range f.Cells {
		t.Logf("rate %v: achieved %v, completion %v, TTFT p50 thirds %v -> %v ms: %s", c.Value, deref(c.AchievedRate), deref(c.CompletionRate),
			deref(c.TTFTP50FirstThirdms), deref(c.TTFTP50LastThirdms), c.Status)
	}
	if low.Status != record.CellPass {
		t.Errorf("cell at 40%% of capacity: %q %q (completion %v of %v, TTFT thirds %v -> %v)", low.Status, low.Reasons,
			deref(low.CompletionRate), deref(low.AchievedRate), deref(low.TTFTP50FirstThirdms), deref(low.TTFTP50LastThirdms))
	}
	if high.GoodFraction == nil || *high.GoodFraction < 0.9 {
		t.Fatalf("the overloaded cell must meet the loose SLO for the check to matter: %v", deref(high.GoodFraction))
	}
	if high.Status != record.CellNotSustained || high.CompletionRate == nil || *high.CompletionRate > 0.8**high.TargetRate {
		t.Errorf("cell at twice capacity: %q %q (completion %v of %v)", high.Status, high.Reasons, deref(high.CompletionRate), deref(high.TargetRate))
	}
	if len(high.Reasons) != 2 || !strings.Contains(high.Reasons[0], "the engine completed") || !strings.Contains(high.Reasons[1], "TTFT p50 rose from") ||
		!strings.Contains(high.Reasons[1], "over the 1000 ms TTFT limit") {
		t.Errorf("reasons %q", high.Reasons)
	}
	if r := f.Result; r == nil || r.MaxValue == nil || *r.MaxValue != low.Value {
		t.Errorf("result %+v", f.Result)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// A cell whose record write fails with ENOSPC (a full disk) is cut: the
// sweep records it as cut, runs no further cell, and exits 4; sweep.json
// and the table say so and what the record lacks.
func TestSweepStopsAtCutCell(t *testing.T) {
	url := simtest.Start(t, func(c *sim.Config) { c.Speed = 50 })
	cfg := baseConfig(t, url, map[string]any{"slo": "ttft=10s"})
	started := 0
	f, dir, code, err := Run(context.Background(), Options{Config: cfg, Dimension: Rate, Values: []float64{100, 200, 400}, GoodputTarget: 0.9,
		RunCell: deliveredCells,
		CellStarted: func(i int, v float64, r *bench.Runner) {
			started++
			if i == 1 {
				r.FailRecordWritesAfter(2000, syscall.ENOSPC)
			}
		}})
	if err != nil || code != 4 {
		t.Fatalf("exit %d, %v; want 4", code, err)
	}
	if started != 2 || len(f.Cells) != 2 {
		t.Fatalf("%d cells started, %d recorded: the sweep must stop at the cut cell", started, len(f.Cells))
	}
	if _, err := os.Stat(filepath.Join(dir, record.SweepCellsDir, "03-rate-400")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a cell after the cut one has a folder: %v", err)
	}
	cut := f.Cells[1]
	if cut.Status != record.CellCut || len(cut.Reasons) != 1 || !strings.Contains(cut.Reasons[0], "no space left on device") ||
		!strings.Contains(cut.Reasons[0], "requests.jsonl holds") {
		t.Fatalf("cut cell %q %q", cut.Status, cut.Reasons)
	}
	if f.Cells[0].Status != record.CellPass || f.Result == nil || f.Result.MaxValue == nil || *f.Result.MaxValue != 100 {
		t.Errorf("first cell %q, result %+v", f.Cells[0].Status, f.Result)
	}
	var onDisk struct {
		Cells []map[string]any `json:"cells"`
	}
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, record.SweepFile)), &onDisk); err != nil || len(onDisk.Cells) != 2 || onDisk.Cells[1]["status"] != "cut" {
		t.Fatalf("sweep.json: %v %v", err, onDisk.Cells)
	}
	if csv := string(mustRead(t, filepath.Join(dir, CSVFile))); !strings.Contains(csv, ",cut,") {
		t.Errorf("sweep.csv:\n%s", csv)
	}
	var b bytes.Buffer
	WriteTable(&b, f)
	for _, want := range []string{"cut\n", "rate 200 cut: the run record in", "stopped at rate 200: its run record could not be written completely, so no further cell ran"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if msg := CutMessage(f); !strings.Contains(msg, "no space left on device") || !strings.HasSuffix(msg, "the sweep stopped at rate 200, no further cell ran") {
		t.Errorf("cut message %q", msg)
	}
}

// A sweep.json's statuses and reasons are text from a file: read back,
// they hold no terminal escapes.
func TestReadFileCleansVerdicts(t *testing.T) {
	dir := t.TempDir()
	f := File{SchemaVersion: 1, Cells: []Cell{{Value: 1, Status: "pass\x1b[2J", Reasons: []string{"held\x1b]0;owned\x07 back\nnext"}}},
		Result: &Result{UndeliveredAbove: []record.Undelivered{{Value: 1, Reason: "x\x1b[31m"}}}}
	b, _ := json.Marshal(f)
	if err := os.WriteFile(filepath.Join(dir, record.SweepFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{got.Cells[0].Status, got.Cells[0].Reasons[0], got.Result.UndeliveredAbove[0].Reason} {
		if strings.ContainsAny(s, "\x1b\x07\n") {
			t.Errorf("%q holds control characters", s)
		}
	}
}
