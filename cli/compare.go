package cli

import (
	"github.com/spf13/cobra"

	"github.com/kvbench/kvbench/app"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/screens/common"
)

// NewCompareCommand is `kvbench compare RUN_A RUN_B`.
func NewCompareCommand() *cobra.Command {
	var runsDir string
	var noInteractive bool
	cmd := &cobra.Command{
		Use:   "compare RUN_A RUN_B",
		Short: "Compare two runs side by side, with relative deltas",
		Long: `Compare two runs side by side: every figure of their summaries (results,
cache, latency, client) for A and B with the relative delta (B - A) / A,
marked better or worse by the figure's direction (lower TTFT and latency
are better, higher throughput, decode speed and hit ratio are better), and
the config keys whose values differ.

Runs are named by id (their folder name in the runs directory, or a unique
prefix of it) or by path. On a terminal the comparison opens full-screen;
with --no-interactive, or without a terminal, it is printed as plain text.`,
		Example: `  kvbench compare 20260301-120000-long-doc-qa 20260302-090000-long-doc-qa
  kvbench compare ./runs/a ./runs/b --no-interactive`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var dirs [2]string
			for i, a := range args {
				dir, err := runs.Resolve(runsDir, a)
				if err != nil {
					return resUsage(err)
				}
				dirs[i] = dir
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
