package cli

import (
	"errors"
	"fmt"
	"github.com/kvbench/kvbench/internal/errs"

	"github.com/spf13/cobra"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/internal/textclean"
)

func init() { extraCommands = append(extraCommands, NewMergeCommand) }

// NewMergeCommand is `kvbench merge DIR...`.
func NewMergeCommand() *cobra.Command {
	var o bench.MergeOptions
	var format string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "merge DIR...",
		Short: "Merge the run folders of a sharded run into one run",
		Long: `Merge the run folders of the shards of one run (kvbench run --shard I/N)
into one ordinary run folder: every request line ordered by submit time,
and the summary recomputed from those lines as a single run's (percentiles
are never averaged), with the shards listed in its shards block.

The folders must be the shards of one run: the same run key (--run-key,
or the one derived from the config and --start-at), the same config but
for the shard index, every index 0..N-1 exactly once, each shard holding
only the requests it sends and no request twice. Otherwise nothing is
merged and the folders are named with what is wrong (other run keys, a
missing or repeated shard, the first differing config key, a request of
another shard or a repeated one; exit 2); --allow-partial merges the
shards that are there and marks the result partial.

The summary is printed on stdout (--format json for JSON). Exit 0 when
every measured request of the merged run succeeded, 1 when some failed,
2 when the folders are not one run's shards, 4 when the merged record could
not be written.`,
		Example: `  kvbench merge results/*-long-doc-qa --output-dir runs
  kvbench merge shard-0 shard-1 shard-3 --allow-partial --name nightly`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return Usagef("--format must be one of text, json (got %q)", format)
			}
			stderr := cmd.ErrOrStderr()
			o.Dirs = args
			o.Logf = func(f string, a ...any) { fmt.Fprintf(stderr, "kvbench: warning: "+f+"\n", a...) }
			m, err := bench.Merge(o)
			var we *bench.WriteError
			switch {
			case bench.IsUsage(err):
				return &UsageError{Err: err}
			case errors.As(err, &we):
				fmt.Fprintf(stderr, "kvbench: merge: the merged record is incomplete: %s\n", textclean.Line(err.Error()))
				return ExitCode(errs.ExitRecord)
			case err != nil:
				return err
			}
			if err := WriteSummary(cmd.OutOrStdout(), m.Summary, m.Sections, m.Reasons, format == "json"); err != nil {
				return err
			}
			if !quiet {
				fmt.Fprintf(stderr, "kvbench: %d shard(s) merged into %s\n", len(m.Summary.Shards), textclean.Line(m.Dir))
			}
			if m.Summary.Run.ExitCode != 0 {
				return ExitCode(errs.ExitFailed)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.OutputDir, "output-dir", "", "where the merged run folder is created (default: the runs directory)")
	fs.StringVar(&o.Name, "name", "", "a label for the merged run (default: the shards' --name)")
	fs.BoolVar(&o.AllowPartial, "allow-partial", false, "merge the shards that are there when some are missing; the result is marked partial")
	fs.StringVar(&format, "format", "text", "summary on stdout: text or json")
	fs.BoolVarP(&quiet, "quiet", "q", false, "no line on stderr about where the merged run is")
	return cmd
}
