package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kvbench/kvbench/app"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/screens/common"
)

func init() { extraCommands = append(extraCommands, NewResultsCommand, NewCompareCommand) }

// addRunsDirFlag adds --runs-dir, defaulting to the record's runs
// directory.
func addRunsDirFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "runs-dir", record.RunsDir(),
		"the runs directory ($KVBENCH_RUNS_DIR, else $XDG_STATE_HOME/kvbench/runs, else ~/.local/state/kvbench/runs)")
}

// NewResultsCommand is `kvbench results [RUN_ID...]`.
func NewResultsCommand() *cobra.Command {
	var runsDir, format string
	var noInteractive bool
	cmd := &cobra.Command{
		Use:   "results [RUN_ID...]",
		Short: "Browse past runs: the explorer on a terminal, a table or JSON otherwise",
		Long: `Browse past runs in the runs directory.

On a terminal this opens the results explorer (one RUN_ID opens that run).
With --no-interactive, or without a terminal, the runs are printed as a
table, or with --format json as a JSON array. A run still being written
(its process holds the folder's lock) is listed as running, in JSON with
"status": "running"; a run folder without a summary whose process is gone
(it crashed or was killed) is listed as incomplete. Both are summarised
from the requests they recorded. A sweep folder (kvbench sweep)
is one entry: in the table its cells' request totals and what it found,
in JSON an object with "kind": "sweep". A series folder (kvbench run
--repeat N) is one entry too, its figures the medians over its runs, in
JSON with "kind": "series"; one SERIES_ID on a terminal lists its runs.`,
		Example: `  kvbench results
  kvbench results --no-interactive
  kvbench results --format json | jq '.[] | select(.complete) | .mean_ttft_ms'
  kvbench results --format json | jq '.[] | select(.kind == "sweep") | .max_value'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return Usagef("--format: invalid value %q (want text or json)", format)
			}
			var dirs []string
			var sweeps, series []bool
			for _, a := range args {
				dir, err := runs.Resolve(runsDir, a)
				isSweep, isSeries := false, false
				if err != nil {
					if sdir, ok := runs.ResolveSeries(runsDir, a); ok {
						dir, isSeries = sdir, true
					} else if sdir, ok := runs.ResolveSweep(runsDir, a); ok {
						dir, isSweep = sdir, true
					} else {
						return resUsage(err)
					}
				}
				dirs, sweeps, series = append(dirs, dir), append(sweeps, isSweep), append(series, isSeries)
			}
			if !noInteractive && format == "text" && IsTTY() {
				var open common.Intent = common.OpenResults{Only: dirs}
				switch {
				case len(dirs) == 1 && sweeps[0]:
					open = common.OpenSweep{Dir: dirs[0]}
				case len(dirs) == 1 && series[0]:
					// A series opens as the list of its runs.
					open = common.OpenResults{Only: runs.ReadSeries(dirs[0]).Series.Dirs}
				case len(dirs) == 1:
					open = common.OpenRunDetail{Dir: dirs[0]}
				}
				return exitCode(app.Open(cmd.Context(), runsDir, open))
			}
			var list []runs.Run
			if len(dirs) > 0 {
				for i, d := range dirs {
					if sweeps[i] {
						list = append(list, *runs.ReadSweep(d))
						continue
					}
					if series[i] {
						list = append(list, *runs.ReadSeries(d))
						continue
					}
					r, err := runs.Read(d)
					if err != nil {
						return err
					}
					list = append(list, *r)
				}
			} else {
				var err error
				if list, err = runs.ListAll(runsDir); err != nil {
					return err
				}
			}
			if format == "json" {
				return WriteRunsJSON(cmd.OutOrStdout(), list)
			}
			return WriteRunsTable(cmd.OutOrStdout(), list)
		},
	}
	addRunsDirFlag(cmd, &runsDir)
	cmd.Flags().BoolVar(&noInteractive, "no-interactive", false, "print the runs instead of opening the explorer")
	cmd.Flags().StringVar(&format, "format", "text", "text or json (json implies --no-interactive)")
	return cmd
}

// resUsage turns a run that cannot be found into a usage error (exit 2).
func resUsage(err error) error {
	if errors.Is(err, runs.ErrNotFound) {
		return &UsageError{Err: err}
	}
	return err
}

// runJSON is one run of `kvbench results --format json`, the keys of
// spec/cli.md in order. Unknown values are null.
type runJSON struct {
	ID               string   `json:"id"`
	Name             *string  `json:"name"`
	Workload         *string  `json:"workload"`
	Model            *string  `json:"model"`
	EngineURL        *string  `json:"engine_url"`
	StartedAt        *string  `json:"started_at"`
	TotalRequests    int      `json:"total_requests"`
	FailedRequests   int      `json:"failed_requests"`
	MeanTTFTms       *float64 `json:"mean_ttft_ms"`
	P99TTFTms        *float64 `json:"p99_ttft_ms"`
	OutputThroughput float64  `json:"output_throughput"`
	HitRatio         *float64 `json:"hit_ratio"`
	Interrupted      bool     `json:"interrupted"`
	Complete         bool     `json:"complete"`
	// Status is "running" for a run in progress (its process holds the
	// folder's lock), absent otherwise: a finished or crashed run has
	// exactly the keys spec/cli.md lists.
	Status *string `json:"status,omitempty"`
	// Shards is the shard count of a merged run (kvbench merge), after
	// the spec's keys; absent for the run of one process, so an ordinary
	// run has exactly the keys spec/cli.md lists.
	Shards *int `json:"shards,omitempty"`
	// Note is the note given in the explorer (annotations.json), absent
	// when there is none; name is then the display name given there.
	Note *string `json:"note,omitempty"`
}

// sweepJSON is one sweep of `kvbench results --format json`
// (docs/results.md): the sweep folder as one entry, its figures those of
// sweep.json. Runs carry no kind; a sweep's is "sweep".
type sweepJSON struct {
	ID        string  `json:"id"`
	Kind      string  `json:"kind"`
	Name      *string `json:"name"`
	Workload  *string `json:"workload"`
	Model     *string `json:"model"`
	EngineURL *string `json:"engine_url"`
	StartedAt *string `json:"started_at"`
	// Dimension is rate or concurrency; Search is true for a capacity
	// search, false for a list; Values the list (a search: its start).
	Dimension *string   `json:"dimension"`
	Search    bool      `json:"search"`
	Values    []float64 `json:"values"`
	// Cells is how many cells ran; MaxValue the highest value that met
	// the goodput target (sweep.json's result.max_value), null when none
	// did or no SLO was given.
	Cells          int      `json:"cells"`
	MaxValue       *float64 `json:"max_value"`
	GoodputTarget  *float64 `json:"goodput_target"`
	TotalRequests  int      `json:"total_requests"`
	FailedRequests int      `json:"failed_requests"`
	Interrupted    bool     `json:"interrupted"`
	Complete       bool     `json:"complete"`
	Status         *string  `json:"status,omitempty"` // "running" while in progress
	Note           *string  `json:"note,omitempty"`
}

// runningStatus is the status key of a run or sweep in progress, nil for
// any other.
func runningStatus(r *runs.Run) *string {
	if !r.Running {
		return nil
	}
	return nullable(string(runs.StatusRunning))
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// seriesJSON is one series of `kvbench results --format json`
// (docs/compare.md): the series folder as one entry, its figures the
// medians over its runs.
type seriesJSON struct {
	ID             string      `json:"id"`
	Kind           string      `json:"kind"`
	Name           *string     `json:"name"`
	Workload       *string     `json:"workload"`
	Model          *string     `json:"model"`
	EngineURL      *string     `json:"engine_url"`
	StartedAt      *string     `json:"started_at"`
	Repeat         int         `json:"repeat"`
	Runs           int         `json:"runs"`
	TotalRequests  int         `json:"total_requests"`
	FailedRequests int         `json:"failed_requests"`
	P50TTFTms      *float64    `json:"median_p50_ttft_ms"`
	P50TTFTCI95    *[2]float64 `json:"median_p50_ttft_ms_ci95"`
	P99TTFTms      *float64    `json:"median_p99_ttft_ms"`
	HitRatio       *float64    `json:"median_hit_ratio"`
	Interrupted    bool        `json:"interrupted"`
	Complete       bool        `json:"complete"`
	Note           *string     `json:"note,omitempty"`
}

// WriteRunsJSON prints the runs and sweeps as a JSON array (an empty
// array when there are none), two-space indented.
func WriteRunsJSON(w io.Writer, list []runs.Run) error {
	out := make([]any, 0, len(list))
	for _, r := range list {
		var started *string
		if !r.StartedAt.IsZero() {
			started = nullable(r.StartedAt.UTC().Format(time.RFC3339))
		}
		if s := r.Series; s != nil {
			out = append(out, seriesJSON{ID: r.ID, Kind: "series", Name: nullable(r.Name), Workload: nullable(r.Workload),
				Model: nullable(r.Model), EngineURL: nullable(r.EngineURL), StartedAt: started, Repeat: s.Repeat, Runs: s.Runs,
				TotalRequests: r.TotalRequests, FailedRequests: r.FailedRequests, P50TTFTms: s.TTFTp50Median,
				P50TTFTCI95: s.TTFTp50CI, P99TTFTms: r.P99TTFTms, HitRatio: r.HitRatio, Interrupted: r.Interrupted,
				Complete: r.Complete, Note: nullable(r.Note)})
			continue
		}
		if s := r.Sweep; s != nil {
			j := sweepJSON{ID: r.ID, Kind: "sweep", Name: nullable(r.Name), Workload: nullable(r.Workload), Model: nullable(r.Model),
				EngineURL: nullable(r.EngineURL), StartedAt: started, Dimension: nullable(s.Dimension), Search: s.Search,
				Values: s.Values, Cells: s.Cells, MaxValue: s.MaxValue, GoodputTarget: s.GoodputTarget,
				TotalRequests: r.TotalRequests, FailedRequests: r.FailedRequests, Interrupted: r.Interrupted,
				Complete: r.Complete, Status: runningStatus(&r), Note: nullable(r.Note)}
			if j.Values == nil {
				j.Values = []float64{}
			}
			out = append(out, j)
			continue
		}
		j := runJSON{
			ID: r.ID, Name: nullable(r.Name), Workload: nullable(r.Workload), Model: nullable(r.Model),
			EngineURL: nullable(r.EngineURL), StartedAt: started, TotalRequests: r.TotalRequests, FailedRequests: r.FailedRequests,
			MeanTTFTms: r.MeanTTFTms, P99TTFTms: r.P99TTFTms, OutputThroughput: r.OutputThroughput,
			HitRatio: r.HitRatio, Interrupted: r.Interrupted, Complete: r.Complete, Status: runningStatus(&r),
		}
		if r.Shards > 0 {
			j.Shards = &r.Shards
		}
		j.Note = nullable(r.Note)
		out = append(out, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// WriteRunsTable prints the runs and sweeps as a plain table, in the
// order given (newest first from ListAll). A sweep's figure columns are
// `-`; its status says what it is and found.
func WriteRunsTable(w io.Writer, list []runs.Run) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "no runs")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED\tNAME\tWORKLOAD\tMODEL\tENGINE\tOK/FAIL\tMEAN TTFT MS\tP99 TTFT MS\tOUT TOK/S\tHIT %\tSTATUS")
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	for _, r := range list {
		started := "-"
		if !r.StartedAt.IsZero() {
			started = r.StartedAt.Local().Format("2006-01-02 15:04")
		}
		hit := "-"
		if r.HitRatio != nil {
			hit = fmt.Sprintf("%.1f", *r.HitRatio*100)
		}
		status := string(r.Status())
		if r.Series != nil {
			what := r.Series.Descriptions()[0]
			if r.Err != nil {
				what = "series, " + record.SeriesFile + " unreadable"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t-\t%s\t%.2f\t%s\t%s, %s\n",
				r.ID, started, dash(r.Name), dash(r.Workload), dash(r.Model), dash(r.EngineHost()),
				r.TotalRequests-r.FailedRequests, r.FailedRequests, report.OptFloat(r.P99TTFTms), r.OutputThroughput, hit, status, what)
			continue
		}
		if r.Sweep != nil {
			what := r.Sweep.Descriptions()[0]
			if r.Err != nil {
				what = "sweep, " + record.SweepFile + " unreadable"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t-\t-\t-\t-\t%s, %s\n",
				r.ID, started, dash(r.Name), dash(r.Workload), dash(r.Model), dash(r.EngineHost()),
				r.TotalRequests-r.FailedRequests, r.FailedRequests, status, what)
			continue
		}
		if r.Corrupt > 0 {
			status += fmt.Sprintf(" (%d unreadable line(s))", r.Corrupt)
		}
		if n := r.ShardNote(); n != "" {
			status += " (" + n + ")"
		}
		if n := r.LoadNote(); n != "" {
			status += ", " + n
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%.2f\t%s\t%s\n",
			r.ID, started, dash(r.Name), dash(r.Workload), dash(r.Model), dash(r.EngineHost()),
			r.TotalRequests-r.FailedRequests, r.FailedRequests, report.OptFloat(r.MeanTTFTms), report.OptFloat(r.P99TTFTms), r.OutputThroughput, hit,
			strings.TrimSpace(status))
	}
	return tw.Flush()
}
