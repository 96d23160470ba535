package record

import "github.com/kvbench/kvbench/bench/load"

// SweepInfo is sweep.json's `sweep` object (spec/load.md).
type SweepInfo struct {
	ID            string      `json:"id"`
	Name          string      `json:"name"`
	StartedAt     string      `json:"started_at"`
	FinishedAt    string      `json:"finished_at"`
	Interrupted   bool        `json:"interrupted"`
	Dimension     string      `json:"dimension"`
	Values        []float64   `json:"values"`
	Search        bool        `json:"search"`
	GoodputTarget *float64    `json:"goodput_target"`
	SLO           *load.SLOms `json:"slo"`
}

// SweepCell is one cell's row of sweep.json and sweep.csv.
type SweepCell struct {
	Value            float64  `json:"value"`
	RunID            string   `json:"run_id"`
	TargetRate       *float64 `json:"target_rate"`
	AchievedRate     *float64 `json:"achieved_rate"`
	MeanConcurrency  *float64 `json:"mean_concurrency"`
	Delivered        *bool    `json:"delivered"`
	TotalRequests    int      `json:"total_requests"`
	FailedRequests   int      `json:"failed_requests"`
	P50TTFTms        *float64 `json:"p50_ttft_ms"`
	P99TTFTms        *float64 `json:"p99_ttft_ms"`
	MeanTPOTms       *float64 `json:"mean_tpot_ms"`
	OutputThroughput float64  `json:"output_throughput"`
	HitRatio         *float64 `json:"hit_ratio"`
	GoodFraction     *float64 `json:"good_fraction"`
	GoodputRPS       *float64 `json:"goodput_rps"`

	// ExitCode is the cell run's exit code (not in the files).
	ExitCode int `json:"-"`
}

// SweepResult is sweep.json's `result`: the highest value that passed.
type SweepResult struct {
	MaxValue          float64  `json:"max_value"`
	GoodFractionAtMax *float64 `json:"good_fraction_at_max"`
}

// SweepSummary is a sweep folder's sweep.json (SweepFile), written by
// bench/sweep and read by the explorer (bench/runs).
type SweepSummary struct {
	SchemaVersion int          `json:"schema_version"`
	Tool          Tool         `json:"tool"`
	Sweep         SweepInfo    `json:"sweep"`
	Cells         []SweepCell  `json:"cells"`
	Result        *SweepResult `json:"result"`
}
