package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kvbench/kvbench/bench/report/visual"
	"github.com/kvbench/kvbench/internal/textclean"
)

func init() { extraCommands = append(extraCommands, NewReportCommand) }

// NewReportCommand is `kvbench report RUN...` (spec/report.md).
func NewReportCommand() *cobra.Command {
	var runsDir, output, format, chartName string
	cmd := &cobra.Command{
		Use:   "report RUN...",
		Short: "Write a self-contained HTML report of runs (or one chart as SVG)",
		Long: `Write one self-contained HTML file for a run, a comparison of several runs,
a sweep folder or a merged run: the header (ids, workload, model, engine,
delivered-load verdict, client overload), the summary tables with the
values of bench_summary.json, and the charts (TTFT CDF and TTFT over time
by cache state, output throughput and requests in flight, ITL histogram,
engine hit rate when metrics.jsonl exists, expected vs observed cached
tokens for a trace replay, TTFT and goodput against load for a sweep).
Two or more runs are overlaid with a legend per run and a table of deltas.

The file needs no network: inline SVG and CSS, no script, no web font;
light and dark follow the viewer's setting, and every series differs by
marker and dash as well as by colour.

RUN is a run id (or a unique prefix), a path to a run folder, a sweep
folder, or a series folder (kvbench run --repeat: its runs and summary,
and two series compared run by run). A comparison opens with the tested
rows of kvbench compare. Without --output the report is report.html inside the folder of a
single run or sweep, else report-<first id>-vs-<second id>.html in the
current directory; the path written is printed on stdout. --output - writes
to stdout.

--format svg --chart NAME writes one chart: ` + chartList() + `.`,
		Example: `  kvbench report 20260301-120000-long-doc-qa
  kvbench report RUN_A RUN_B --output ab.html
  kvbench report ./runs/20260301-130000-sweep-long-doc-qa
  kvbench report RUN --format svg --chart ttft-cdf --output ttft.svg`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// --chart alone means one chart: SVG is the only format it has.
			if chartName != "" && !cmd.Flags().Changed("format") {
				format = "svg"
			}
			if err := visual.CheckFormat(format, chartName); err != nil {
				return &UsageError{Err: err}
			}
			rep, err := visual.Open(runsDir, args)
			if err != nil {
				return reportErr(err)
			}
			if output == "-" {
				return reportErr(rep.Render(cmd.OutOrStdout(), format, chartName))
			}
			path := output
			if path == "" {
				path = rep.DefaultPath(format, chartName)
			}
			if err := rep.WriteFile(path, format, chartName); err != nil {
				return reportErr(err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), textclean.Line(path))
			return nil
		},
	}
	addRunsDirFlag(cmd, &runsDir)
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "", "file to write (default: report.html in the run's folder, or report-A-vs-B.html here); - for stdout")
	f.StringVar(&format, "format", "html", "html (the whole report) or svg (one chart, with --chart)")
	f.StringVar(&chartName, "chart", "", "write this one chart as SVG (implies --format svg): "+chartList())
	cmd.ValidArgsFunction = runIDCompletion(0)
	_ = cmd.RegisterFlagCompletionFunc("format", fixedCompletion([]cobra.Completion{"html", "svg"}))
	_ = cmd.RegisterFlagCompletionFunc("chart", fixedCompletion(visual.Charts))
	return cmd
}

func chartList() string { return strings.Join(visual.Charts, ", ") }

// reportErr makes the report's usage errors (an unknown run, chart or
// format, a chart the runs have no data for) exit 2.
func reportErr(err error) error {
	if err != nil && errors.Is(err, visual.ErrUsage) {
		return &UsageError{Err: err}
	}
	return err
}
