package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kvbench/kvbench/app"
	"github.com/kvbench/kvbench/bench/report/visual"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/screens/common"
)

// NewCompareCommand is `kvbench compare A B`.
func NewCompareCommand() *cobra.Command {
	var runsDir, format string
	var noInteractive bool
	var gateFlags []string
	var alpha float64
	cmd := &cobra.Command{
		Use:   "compare A B",
		Short: "Compare two runs or series with intervals and significance (or two sweeps), with CI gates",
		Long: `Compare B against A. A and B are runs or series (kvbench run --repeat N),
either may be either.

Each row is a metric (TTFT p50/p90/p99, TPOT p50, ITL p50, E2E latency
p50, request and output throughput, hit ratio, error rate; the latencies
also per cache state): A, B, the delta ((B - A) / A in %, or in percentage
points for hit ratio and error rate), its 95% interval from a seeded
bootstrap (10,000 resamples), the Mann-Whitney U p-value, and a word:
better, worse, or ~ when p >= --alpha or the interval contains 0. Two runs
are compared request by request; a series on either side run by run (at
least 5 runs a side for a test). When the hit ratios differ significantly
that is said first and the latency rows are split by cache state. Two
runs also get every figure of both summaries with its plain delta and the
config keys that differ; two rag-qa-quality runs their samples paired.

--gate 'ttft_p50:+5%,error_rate:1%,hit_ratio:-2pp' judges B for CI: a
relative gate (+N% for latencies, -N% for throughputs, +/-Npp for shares)
fails when B is significantly worse AND worse by more than N; a limit
(error_rate:1%, ttft_p50:500ms, output_throughput:1000) fails when B is
beyond it. Exit 5 when a gate fails, 2 for a malformed one.
--format junit writes one testcase per gate.

Two sweep folders (kvbench sweep) are compared as curves: for each value
of the swept rate or concurrency, the achieved load, TTFT p50 and p99 and
the good fraction of A and B side by side, and the capacity each found.

Runs and series are named by id (their folder name in the runs directory,
or a unique prefix of it) or by path. On a terminal the comparison opens
full-screen; with --no-interactive, --format json or junit, --gate, or
without a terminal, it is printed.`,
		Example: `  kvbench compare 20260301-120000-long-doc-qa 20260302-090000-long-doc-qa
  kvbench compare ./runs/a ./runs/b --no-interactive
  kvbench compare BASELINE CANDIDATE --gate 'ttft_p50:+5%,error_rate:1%,hit_ratio:-2pp' --format junit > gates.xml
  kvbench compare 20260301-120000-series-long-doc-qa 20260302-090000-series-long-doc-qa --format json
  kvbench compare 20260301-120000-sweep-long-doc-qa 20260302-090000-sweep-long-doc-qa`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch format {
			case "text", "json", "junit":
			default:
				return Usagef("--format: invalid value %q (want text, json or junit)", format)
			}
			if !(alpha > 0 && alpha < 1) {
				return Usagef("--alpha must be in (0, 1) (got %v)", alpha)
			}
			gates, err := runs.ParseGates(gateFlags)
			if err != nil {
				return &UsageError{Err: err}
			}
			if format == "junit" && len(gates) == 0 {
				return Usagef("--format junit writes one testcase per gate: give --gate")
			}
			var dirs [2]string
			var sweeps [2]bool
			for i, a := range args {
				dir, err := runs.Resolve(runsDir, a)
				if err != nil {
					if sdir, ok := runs.ResolveSeries(runsDir, a); ok {
						dirs[i] = sdir
						continue
					}
					sdir, ok := runs.ResolveSweep(runsDir, a)
					if !ok {
						return resUsage(err)
					}
					dir, sweeps[i] = sdir, true
				}
				dirs[i] = dir
			}
			if sweeps[0] || sweeps[1] {
				if sweeps[0] != sweeps[1] {
					kind := func(i int) string { return map[bool]string{true: "a sweep", false: "a run or series"}[sweeps[i]] }
					return &UsageError{Err: fmt.Errorf("compare takes two runs or two sweeps (a series counts as a run): %s is %s and %s is %s", args[0], kind(0), args[1], kind(1))}
				}
				if len(gates) > 0 || format != "text" {
					return Usagef("two sweeps are compared as curves, as text: --gate and --format %s take runs or series", format)
				}
				cmp, err := runs.OpenSweeps(runsDir, dirs[0], dirs[1])
				if errors.Is(err, runs.ErrSweepMismatch) {
					return &UsageError{Err: err}
				}
				if err != nil {
					return err
				}
				if !noInteractive && IsTTY() {
					return exitCode(app.Open(cmd.Context(), runsDir, common.OpenCompare{A: dirs[0], B: dirs[1]}))
				}
				return visual.WriteSweepComparison(cmd.OutOrStdout(), cmp)
			}
			if !noInteractive && IsTTY() && format == "text" && len(gates) == 0 {
				return exitCode(app.Open(cmd.Context(), runsDir, common.OpenCompare{A: dirs[0], B: dirs[1]}))
			}
			var subj [2]*runs.Subject
			for i, d := range dirs {
				if subj[i], err = runs.OpenSubject(cmd.Context(), runsDir, d); err != nil {
					return resUsage(err)
				}
			}
			t := runs.CompareTested(subj[0], subj[1], alpha)
			t.Judge(gates)
			out := cmd.OutOrStdout()
			switch format {
			case "json":
				err = t.WriteJSON(out)
			case "junit":
				err = t.WriteJUnit(out)
			default:
				var cmp *runs.Comparison
				if !subj[0].IsSeries() && !subj[1].IsSeries() {
					if cmp, err = runs.CompareNamed(runsDir, dirs[0], dirs[1]); err != nil {
						return err
					}
				}
				err = runs.WriteCompareText(out, cmp, t)
			}
			if err != nil {
				return err
			}
			if t.Failed() > 0 {
				return ExitCode(5)
			}
			return nil
		},
	}
	addRunsDirFlag(cmd, &runsDir)
	f := cmd.Flags()
	f.BoolVar(&noInteractive, "no-interactive", false, "print the comparison as plain text")
	f.StringVar(&format, "format", "text", "text, json ({a, b, rows, gates}) or junit (one testcase per --gate)")
	f.StringArrayVar(&gateFlags, "gate", nil, "regression gates `metric[:state]:THRESHOLD,...` (ttft_p50:+5%, error_rate:1%, hit_ratio:-2pp); exit 5 when one fails")
	f.Float64Var(&alpha, "alpha", runs.DefaultAlpha, "significance level: a row is better or worse only when p < alpha")
	return cmd
}
