package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/internal/textclean"
)

// DimWorkingSet is sweep.json's dimension of a sweep over working-set
// sizes (spec/load.md, "Working-set sweeps: where the cache runs out").
const DimWorkingSet = "working_set"

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
	// HitTarget is a working-set sweep's pass mark (--hit-target: a
	// cell's hit ratio over its ideal); absent in other sweeps.
	HitTarget *float64 `json:"hit_target,omitempty"`
}

// A sweep cell's status: what it established (spec/load.md "kvbench
// sweep"; docs/load.md). Only CellPass and the two fails bound a
// capacity.
const (
	// CellPass: delivered, sustained, good fraction at the target.
	CellPass = "pass"
	// CellFail: delivered, good fraction under the target.
	CellFail = "fail"
	// CellNotSustained: delivered and good enough, but the engine did
	// not keep up (a fail).
	CellNotSustained = "not sustained"
	// CellNotDelivered: the load was not delivered; neither a pass nor a
	// fail.
	CellNotDelivered = "not delivered"
	// CellCut: the cell's run record could not be written completely
	// (exit code 4); the sweep stopped there.
	CellCut = "cut"
	// CellInterrupted: the sweep was stopped during the cell.
	CellInterrupted = "interrupted"
	// CellDone: ran, delivered and sustained, with no SLO to judge it.
	CellDone = "done"
)

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

	// Beyond the spec's keys (docs/load.md): the figures of the
	// sustained-load check, the cell's status and why.
	CompletionRate      *float64 `json:"completion_rate"`
	TTFTP50FirstThirdms *float64 `json:"ttft_p50_first_third_ms"`
	TTFTP50LastThirdms  *float64 `json:"ttft_p50_last_third_ms"`
	Status              string   `json:"status"`
	Reasons             []string `json:"reasons"`

	// The working-set figures, in a working-set sweep's cells only.
	*WorkingSetCell

	// ExitCode is the cell run's exit code (not in the files).
	ExitCode int `json:"-"`
}

// Verdict is the cell's status: the recorded one, or, for a sweep.json
// written before cells had one, what its figures say (delivered, then
// the good fraction against target; nil target: no SLO).
func (c SweepCell) Verdict(target *float64) string {
	switch {
	case c.Status != "":
		return c.Status
	case c.Delivered != nil && !*c.Delivered:
		return CellNotDelivered
	case target == nil:
		return CellDone
	case c.GoodFraction != nil && *c.GoodFraction >= *target:
		return CellPass
	}
	return CellFail
}

// Fails reports whether a status bounds a capacity from above.
func Fails(status string) bool { return status == CellFail || status == CellNotSustained }

// SweepResult is sweep.json's `result`: what the delivered cells
// established. MaxValue is the highest delivered passing value (null
// when none passed); UndeliveredAbove are the values above it whose load
// was not delivered, which it therefore says nothing about.
type SweepResult struct {
	MaxValue          *float64      `json:"max_value"`
	GoodFractionAtMax *float64      `json:"good_fraction_at_max"`
	UndeliveredAbove  []Undelivered `json:"undelivered_above"`

	// What a working-set sweep found, in its result only.
	*WorkingSetResult
}

// WorkingSetCell are a working-set sweep cell's own keys (spec/load.md,
// "Working-set sweeps"): the distinct prompt it kept hot, the hit ratio
// a cache that never evicts would give its revisits, and its reused
// requests' TTFT p50 (hit_ratio is the cell's own key).
type WorkingSetCell struct {
	WorkingSetTokens float64  `json:"working_set_tokens"`
	WorkingSetGB     *float64 `json:"working_set_gb"`
	IdealHitRatio    *float64 `json:"ideal_hit_ratio"`
	ReusedTTFTP50ms  *float64 `json:"reused_ttft_p50_ms"`
	// Units is how many documents, sessions or contexts the cell sent
	// (UnitTokens each, named by Unit).
	Units      int    `json:"units"`
	UnitTokens int    `json:"unit_tokens"`
	Unit       string `json:"unit"`
}

// WorkingSetResult is a working-set sweep's result: the largest working
// set whose hit ratio met the target (every tier that reports hits
// together), the largest whose reused TTFT p50 stayed under twice the
// smallest cell's (the fast tier), and what the engine says it holds.
type WorkingSetResult struct {
	CapacityTokens *float64  `json:"capacity_tokens"`
	CapacityGB     *float64  `json:"capacity_gb"`
	FastTierTokens *float64  `json:"fast_tier_tokens"`
	FastTierGB     *float64  `json:"fast_tier_gb"`
	Declared       *Declared `json:"declared"`
}

// Declared is what the engine says its cache holds, in tokens: the
// simulator's tiers (its /status), vLLM's vllm:cache_config_info
// (num_gpu_blocks x block_size), an LMCache server's /status (its first
// tier). Source names where it was read; a tier nobody reported is null.
type Declared struct {
	Source    string   `json:"source"`
	GPUTokens *float64 `json:"gpu_tokens"`
	CPUTokens *float64 `json:"cpu_tokens"`
	// TotalTokens is GPU + CPU when both are known, else the one known.
	TotalTokens *float64 `json:"total_tokens"`
	GPUGB       *float64 `json:"gpu_gb"`
	CPUGB       *float64 `json:"cpu_gb"`
	TotalGB     *float64 `json:"total_gb"`
}

// Undelivered is a value whose load was not delivered, with the first
// reason why.
type Undelivered struct {
	Value  float64 `json:"value"`
	Reason string  `json:"reason"`
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

// CleanVerdicts cleans the cells' statuses and reasons and the result's
// reasons of a sweep.json read from disk: text from a file, shown on
// terminals (STYLE.md, "Text from outside").
func (f *SweepSummary) CleanVerdicts() {
	for i := range f.Cells {
		c := &f.Cells[i]
		c.Status = textclean.Line(c.Status)
		for j, r := range c.Reasons {
			c.Reasons[j] = textclean.Line(r)
		}
		if c.WorkingSetCell != nil {
			c.Unit = textclean.Line(c.Unit)
		}
	}
	if f.Result != nil {
		for i, u := range f.Result.UndeliveredAbove {
			f.Result.UndeliveredAbove[i].Reason = textclean.Line(u.Reason)
		}
		if w := f.Result.WorkingSetResult; w != nil && w.Declared != nil {
			w.Declared.Source = textclean.Line(w.Declared.Source)
		}
	}
}

// maxSweepBytes caps sweep.json when reading: a search runs at most 1000
// cells of a few hundred bytes each.
const maxSweepBytes = 16 << 20

// ReadSweep reads dir's sweep.json (a regular file only), its text
// cleaned (ReadJSON) and its verdicts cleaned for one line; raw is the
// file as read, for a reader that shows it key by key.
func ReadSweep(dir string) (f *SweepSummary, raw []byte, err error) {
	path := filepath.Join(dir, SweepFile)
	b, err := ReadJSON(path, maxSweepBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", SweepFile, err)
	}
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return nil, nil, fmt.Errorf("read %s: not a JSON object", path)
	}
	f = new(SweepSummary)
	if err := json.Unmarshal(b, f); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	f.CleanVerdicts()
	return f, b, nil
}
