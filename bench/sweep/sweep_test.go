package sweep

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/simtest"
)

// searchWith runs the search plan against a capacity: a cell passes when
// its value is at most capacity.
func searchWith(t *testing.T, dim string, start, capacity float64) []Cell {
	t.Helper()
	s := &sweeper{o: Options{Dimension: dim, Values: []float64{start}, Search: true, GoodputTarget: 0.9, Precision: 0.05, MaxCells: 12}, f: &File{}}
	next := s.plan()
	for i := 0; ; i++ {
		v, ok := next(i)
		if !ok {
			break
		}
		g := 0.5
		if v <= capacity {
			g = 0.95
		}
		s.f.Cells = append(s.f.Cells, Cell{Value: v, GoodFraction: &g})
	}
	return s.f.Cells
}

// TestSearchFindsCapacity: doubling then bisection ends with a passing
// maximum within the precision of the capacity, every failing cell above
// it, within 12 cells.
func TestSearchFindsCapacity(t *testing.T) {
	for _, c := range []struct {
		dim             string
		start, capacity float64
	}{{Rate, 4, 38}, {Rate, 1, 38}, {Rate, 100, 38}, {Rate, 2, 1000}, {Concurrency, 1, 13}, {Concurrency, 4, 100}} {
		cells := searchWith(t, c.dim, c.start, c.capacity)
		if len(cells) > 12 {
			t.Fatalf("%+v: %d cells", c, len(cells))
		}
		s := &sweeper{o: Options{GoodputTarget: 0.9}, f: &File{Cells: cells}, slo: nil}
		lo, hi := s.bounds()
		if lo == 0 || lo > c.capacity {
			t.Fatalf("%+v: maximum %v (cells %v)", c, lo, values(cells))
		}
		for _, cell := range cells {
			if !s.pass(cell) && cell.Value <= lo {
				t.Fatalf("%+v: failing cell %v at or below the maximum %v", c, cell.Value, lo)
			}
		}
		if hi != 0 && len(cells) < 12 {
			close := hi-lo <= 0.05*hi
			if c.dim == Concurrency {
				close = hi-lo <= 1
			}
			if !close {
				t.Fatalf("%+v: stopped at %v..%v before the precision (cells %v)", c, lo, hi, values(cells))
			}
		}
	}
}

func values(cells []Cell) []float64 {
	var v []float64
	for _, c := range cells {
		v = append(v, c.Value)
	}
	return v
}

func baseConfig(t *testing.T, url string, set map[string]any) *config.Config {
	t.Helper()
	c := config.Default()
	for k, v := range map[string]any{"engine_url": url, "workload": config.RandomPrefill, "model": "kvbench-sim",
		"output_dir": t.TempDir(), "rp_num_requests": 20, "rp_request_length": 40, "tokens_per_gb_kvcache": 1000} {
		if err := c.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range set {
		if err := c.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// TestSweepOverThreeRates: three cells, each an ordinary run folder that
// the results explorer opens, sweep.json and sweep.csv with one row per
// cell, the cells' own salts.
func TestSweepOverThreeRates(t *testing.T) {
	url := simtest.Start(t, func(c *sim.Config) { c.Speed = 50 })
	cfg := baseConfig(t, url, map[string]any{"slo": "ttft=10s"})
	f, dir, code, err := Run(context.Background(), Options{Config: cfg, Dimension: Rate, Values: []float64{100, 200, 400}, GoodputTarget: 0.9,
		RunCell: deliveredCells})
	if err != nil || code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	if !strings.Contains(filepath.Base(dir), "-sweep-random-prefill") {
		t.Fatalf("sweep folder %s", dir)
	}
	if len(f.Cells) != 3 || f.Result == nil || f.Result.MaxValue == nil || *f.Result.MaxValue != 400 {
		t.Fatalf("cells %d, result %+v", len(f.Cells), f.Result)
	}
	for i, want := range []string{"01-rate-100", "02-rate-200", "03-rate-400"} {
		c := f.Cells[i]
		cellDir := filepath.Join(dir, record.SweepCellsDir, want)
		if c.RunID != want {
			t.Fatalf("cell %d run id %s, want %s", i, c.RunID, want)
		}
		r, err := runs.Read(cellDir)
		if err != nil || !r.Complete || r.TotalRequests != 20 {
			t.Fatalf("cell %s does not open as a run: %+v %v", want, r, err)
		}
		if c.TargetRate == nil || *c.TargetRate != c.Value || c.TotalRequests != 20 || c.GoodFraction == nil || *c.GoodFraction != 1 ||
			c.Status != record.CellPass || c.CompletionRate == nil {
			t.Fatalf("cell %+v", c)
		}
	}
	var onDisk File
	b, _ := os.ReadFile(filepath.Join(dir, record.SweepFile))
	if err := json.Unmarshal(b, &onDisk); err != nil || len(onDisk.Cells) != 3 || onDisk.Sweep.Dimension != Rate || onDisk.Sweep.ID != filepath.Base(dir) {
		t.Fatalf("sweep.json: %v %+v", err, onDisk.Sweep)
	}
	rows, err := csv.NewReader(strings.NewReader(string(mustRead(t, filepath.Join(dir, CSVFile))))).ReadAll()
	if err != nil || len(rows) != 4 || strings.Join(rows[0], ",") != strings.Join(CSVHeader, ",") || rows[3][0] != "400" ||
		rows[3][slices.Index(CSVHeader, "status")] != "pass" {
		t.Fatalf("sweep.csv: %v %v", err, rows)
	}
}

// deliveredCells runs a cell and takes its load as delivered. The tests
// using it are about the sweep's folders, order and judgments; whether a
// short cell's schedule slipped on a busy test machine is the delivered
// rule's business (bench/load), tested there.
func deliveredCells(ctx context.Context, r *bench.Runner) bench.Finish {
	go func() {
		for range r.Events() {
		}
	}()
	fin := r.Run(ctx)
	if fin.Summary != nil && fin.Summary.Load != nil {
		fin.Summary.Load.Delivered, fin.Summary.Load.DegradedReasons = true, []string{}
	}
	return fin
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSweepUsage(t *testing.T) {
	cfg := baseConfig(t, "http://127.0.0.1:1", nil)
	_, dir, code, err := Run(context.Background(), Options{Config: cfg, Dimension: Rate, Values: []float64{1}, Search: true, GoodputTarget: 0.9, Precision: 0.05, MaxCells: 12})
	if code != 2 || err == nil || !strings.Contains(err.Error(), "--slo") || dir != "" {
		t.Fatalf("search without --slo: %d %v %q", code, err, dir)
	}
	_, _, code, err = Run(context.Background(), Options{Config: cfg, Dimension: Concurrency, Values: []float64{1.5}})
	if code != 2 || err == nil {
		t.Fatalf("fractional concurrency: %d %v", code, err)
	}
	// An engine that does not answer: exit 3 and no sweep folder.
	cfg = baseConfig(t, "http://"+testutil.ClosedAddr(t), nil)
	_, dir, code, err = Run(context.Background(), Options{Config: cfg, Dimension: Rate, Values: []float64{1, 2}})
	if code != 3 || err == nil || dir != "" {
		t.Fatalf("unavailable engine: %d %v %q", code, err, dir)
	}
	if entries, _ := os.ReadDir(cfg.String("output_dir")); len(entries) != 0 {
		t.Fatalf("an unavailable engine left %v", entries)
	}
}
