package runstest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
	bsweep "github.com/kvbench/kvbench/bench/sweep"
	"github.com/kvbench/kvbench/config"
)

// RecordedSweep is a sweep folder as `kvbench sweep` writes it, cells
// included as the runner records them (their load and goodput blocks,
// their salts): one cell run per value under cells/, sweep.json and
// sweep.csv, written with the sweep package's own types.
type RecordedSweep struct {
	Workload string // default random-prefill
	Name     string
	Started  time.Time
	// Dimension is bsweep.Rate (default) or bsweep.Concurrency.
	Dimension string
	Values    []float64
	Search    bool
	// SLO judges the cells (ttft=200ms, target 0.9): a cell passes when
	// its value is at most PassUpTo (good fraction 1, else 0.5).
	SLO      bool
	PassUpTo float64
	Requests int // per cell (default 10)
	// FailIn makes the cell of that 1-based index fail one request in 5.
	FailIn int
	// Salt is the sweep's fixed --prompt-salt ("" is auto).
	Salt        string
	Interrupted bool
	// Unfinished leaves finished_at empty (a sweep still running, or
	// killed).
	Unfinished bool
}

// WriteRecordedSweep creates the sweep folder of s under runsDir and
// returns its path.
func WriteRecordedSweep(tb testing.TB, runsDir string, s RecordedSweep) string {
	tb.Helper()
	dir, err := writeRecordedSweep(runsDir, s)
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}

func writeRecordedSweep(runsDir string, s RecordedSweep) (string, error) {
	s.Workload = orStr(s.Workload, config.RandomPrefill)
	s.Dimension = orStr(s.Dimension, bsweep.Rate)
	if s.Started.IsZero() {
		s.Started = time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)
	}
	if s.Requests == 0 {
		s.Requests = 10
	}
	id := record.FolderName("sweep-"+s.Workload, s.Name, s.Started)
	dir := filepath.Join(runsDir, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f := &bsweep.File{SchemaVersion: 1, Tool: record.Tool{Name: "kvbench", Version: "test"},
		Sweep: bsweep.Info{ID: id, Name: s.Name, StartedAt: s.Started.UTC().Format(time.RFC3339),
			Interrupted: s.Interrupted, Dimension: s.Dimension, Values: s.Values, Search: s.Search},
		Cells: []bsweep.Cell{}}
	if !s.Unfinished {
		f.Sweep.FinishedAt = s.Started.Add(time.Minute).UTC().Format(time.RFC3339)
	}
	var goodput *load.Goodput
	if s.SLO {
		g, ttft := 0.9, 200.0
		f.Sweep.GoodputTarget = &g
		f.Sweep.SLO = &load.SLOms{TTFTms: &ttft}
		goodput = &load.Goodput{SLO: *f.Sweep.SLO}
	}
	for i, v := range s.Values {
		cfg := map[string]any{}
		if s.Salt != "" {
			cfg["prompt_salt"] = fmt.Sprintf("%s cell %02d", s.Salt, i+1)
		}
		spec := Spec{Workload: s.Workload, Started: s.Started.Add(time.Duration(i) * 10 * time.Second),
			Requests: s.Requests, Summary: true, Config: cfg,
			Folder: fmt.Sprintf("%02d-%s-%s", i+1, s.Dimension, bsweep.Format(v))}
		if i+1 == s.FailIn {
			spec.FailEvery, spec.ExitCode = 5, 1
		}
		achieved, conc := v*0.98, 0.5
		bl := &load.Block{AchievedRate: &achieved, MeanConcurrency: &conc, Arrival: load.Poisson, Delivered: true}
		if s.Dimension == bsweep.Rate {
			bl.TargetRate = &v
		} else {
			n := int(v)
			bl.MaxConcurrency = &n
		}
		spec.Load = bl
		good := 1.0
		if s.SLO && v > s.PassUpTo {
			good = 0.5
		}
		if goodput != nil {
			g := *goodput
			g.GoodFraction = &good
			spec.Goodput = &g
		}
		cellDir, err := write(filepath.Join(dir, record.SweepCellsDir), spec)
		if err != nil {
			return "", err
		}
		p50, p99 := 20+v, 40+2*v
		c := bsweep.Cell{Value: v, RunID: filepath.Base(cellDir), TargetRate: bl.TargetRate, AchievedRate: &achieved,
			MeanConcurrency: &conc, Delivered: &bl.Delivered, TotalRequests: s.Requests, P50TTFTms: &p50, P99TTFTms: &p99,
			OutputThroughput: 10 * v}
		if spec.FailEvery > 0 {
			c.FailedRequests = s.Requests / spec.FailEvery
		}
		if s.SLO {
			c.GoodFraction = &good
		}
		k := bsweep.Criteria{Dimension: s.Dimension, GoodputTarget: f.Sweep.GoodputTarget}
		if f.Sweep.SLO != nil {
			k.TTFTLimitms = f.Sweep.SLO.TTFTms
		}
		bsweep.Judge(&c, k, "")
		f.Cells = append(f.Cells, c)
	}
	if s.SLO {
		f.Result = bsweep.ResultOf(f.Cells, *f.Sweep.GoodputTarget)
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, record.SweepFile), append(b, '\n'), 0o644); err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, bsweep.CSVFile), bsweep.CSV(f.Cells), 0o644)
}
