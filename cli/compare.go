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

// NewCompareCommand is `kvbench compare RUN_A RUN_B`.
func NewCompareCommand() *cobra.Command {
	var runsDir string
	var noInteractive bool
	cmd := &cobra.Command{
		Use:   "compare RUN_A RUN_B",
		Short: "Compare two runs (or two sweeps) side by side, with relative deltas",
		Long: `Compare two runs side by side: every figure of their summaries (results,
cache, latency, client) for A and B with the relative delta (B - A) / A,
marked better or worse by the figure's direction (lower TTFT and latency
are better, higher throughput, decode speed and hit ratio are better), and
the config keys whose values differ. Two rag-qa-quality runs also have
their samples paired by id: each sample's F1 and TTFT in A and B, the
mean F1 change and how many samples' F1 changed.

Two sweep folders (kvbench sweep) are compared as curves: for each value
of the swept rate or concurrency, the achieved load, TTFT p50 and p99 and
the good fraction of A and B side by side, and the capacity each found.

Runs are named by id (their folder name in the runs directory, or a unique
prefix of it) or by path. On a terminal the comparison opens full-screen;
with --no-interactive, or without a terminal, it is printed as plain text.`,
		Example: `  kvbench compare 20260301-120000-long-doc-qa 20260302-090000-long-doc-qa
  kvbench compare ./runs/a ./runs/b --no-interactive
  kvbench compare 20260301-120000-sweep-long-doc-qa 20260302-090000-sweep-long-doc-qa`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var dirs [2]string
			var sweeps [2]bool
			for i, a := range args {
				dir, err := runs.Resolve(runsDir, a)
				if err != nil {
					sdir, ok := visual.ResolveSweep(runsDir, a)
					if !ok {
						return resUsage(err)
					}
					dir, sweeps[i] = sdir, true
				}
				dirs[i] = dir
			}
			if sweeps[0] != sweeps[1] {
				kind := func(i int) string { return map[bool]string{true: "a sweep", false: "a run"}[sweeps[i]] }
				return &UsageError{Err: fmt.Errorf("compare takes two runs or two sweeps: %s is %s and %s is %s", args[0], kind(0), args[1], kind(1))}
			}
			if sweeps[0] {
				cmp, err := visual.OpenSweeps(runsDir, dirs[0], dirs[1])
				if errors.Is(err, visual.ErrSweepMismatch) {
					return &UsageError{Err: err}
				}
				if err != nil {
					return err
				}
				if !noInteractive && IsTTY() {
					return exitCode(app.Open(cmd.Context(), runsDir, common.OpenCompare{A: dirs[0], B: dirs[1]}))
				}
				return cmp.WriteText(cmd.OutOrStdout())
			}
			if !noInteractive && IsTTY() {
				return exitCode(app.Open(cmd.Context(), runsDir, common.OpenCompare{A: dirs[0], B: dirs[1]}))
			}
			cmp, err := runs.CompareNamed(runsDir, dirs[0], dirs[1])
			if err != nil {
				return err
			}
			return cmp.WriteText(cmd.OutOrStdout())
		},
	}
	addRunsDirFlag(cmd, &runsDir)
	cmd.Flags().BoolVar(&noInteractive, "no-interactive", false, "print the comparison as plain text")
	return cmd
}
