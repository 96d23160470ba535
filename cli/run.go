package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/kvbench/kvbench/app"
	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/config"
)

// RunExample is the README's first command, shown in help.
const RunExample = `  # A benchmark on this machine, no GPU needed: the built-in simulated engine
  kvbench run --engine-url builtin --workload long-doc-qa --kv-cache-volume 1 --ldqa-document-length 2000

  # Long-document Q&A against vLLM, sized to a 100 GB KV budget
  kvbench run --engine-url http://localhost:8000 --workload long-doc-qa --tokens-per-gb-kvcache 6000

  # Headless in a script: JSON summary on stdout, exit code 1 if a request failed
  kvbench run --engine-url http://gpu-box:8000 --workload random-prefill \
      --tokens-per-gb-kvcache 6000 --no-interactive --format json > summary.json`

// NewRunCommand is `kvbench run` (alias `engine`).
func NewRunCommand() *cobra.Command {
	var configFile, exportFile string
	cmd := &cobra.Command{
		Use:     "run [flags]",
		Aliases: []string{"engine"},
		Short:   "Run one benchmark against an OpenAI-compatible engine",
		Long: `Run one benchmark against an OpenAI-compatible engine and record every request.

On a terminal the run is shown live; with --no-interactive (or without a
terminal) progress goes to stderr and the summary to stdout. Missing
required arguments open a guided form on a terminal.`,
		Example: RunExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRun(cmd, configFile, exportFile)
		},
	}
	fs := cmd.Flags()
	config.RegisterFlags(fs)
	fs.StringVar(&configFile, "config", "", "load an exported config JSON; flags that are set win")
	fs.StringVar(&exportFile, "export-config", "", "resolve everything, write the config JSON to this file, run nothing")
	return cmd
}

func runRun(cmd *cobra.Command, configFile, exportFile string) error {
	cfg, err := config.Resolve(cmd.Flags(), config.Layers{JSON: configFile})
	if err != nil {
		return &UsageError{Err: err}
	}
	if err := cfg.Validate(); err != nil {
		return &UsageError{Err: err}
	}
	set := cfg.Settings()
	series := exportFile == "" && set.Repeat > 1
	if missing := cfg.Missing(); len(missing) > 0 {
		switch {
		case series:
			return &UsageError{Err: config.MissingError(missing, "--repeat (a series has no guided form)")}
		case exportFile != "":
			return &UsageError{Err: config.MissingError(missing, "--export-config")}
		case set.NoInteractive:
			return &UsageError{Err: config.MissingError(missing, "--no-interactive")}
		case configFile != "":
			return &UsageError{Err: config.MissingError(missing, "--config")}
		case IsTTY():
			return exitCode(app.RunGuided(cmd.Context(), cfg))
		default:
			return &UsageError{Err: config.MissingError(missing, "--no-interactive")}
		}
	}

	if series {
		return runSeries(cmd, cfg)
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	stderr := cmd.ErrOrStderr()

	p, err := bench.Prepare(ctx, cfg)
	if err != nil {
		if bench.IsUsage(err) {
			return &UsageError{Err: err}
		}
		return err
	}
	if p.ModelErr != nil {
		fmt.Fprintf(stderr, "kvbench: cannot auto-detect the model: %v\n", p.ModelErr)
	}
	if exportFile != "" {
		defer p.Close()
		if p.PreflightErr != nil && p.Settings.Model == "" {
			fmt.Fprintf(stderr, "kvbench: cannot auto-detect the model: %v\n", p.PreflightErr)
		}
		if err := config.WriteFileAtomic(exportFile, p.Config.ExportJSON(), 0o644); err != nil {
			return &UsageError{Err: fmt.Errorf("--export-config %s: %v", exportFile, err)}
		}
		fmt.Fprintf(stderr, "kvbench: config written to %s\n", exportFile)
		return nil
	}
	r, err := bench.New(ctx, p)
	if err != nil {
		p.Close()
		if bench.IsUsage(err) {
			return &UsageError{Err: err}
		}
		return err
	}
	if IsTTY() && !set.NoInteractive && !set.Quiet {
		return exitCode(app.RunLive(ctx, r))
	}

	// Headless: the first SIGINT/SIGTERM stops dispatch, the second
	// stops every request at once.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		n := 0
		for range sigs {
			n++
			if n == 1 {
				if !set.Quiet {
					fmt.Fprintf(stderr, "\ninterrupted: no new requests; waiting for those in flight (up to %s). Press Ctrl-C again to stop now.\n",
						set.IdleTimeout)
				}
				cancel()
				continue
			}
			r.Abort()
		}
	}()
	code := Headless(ctx, r, HeadlessOptions{
		Stdout: cmd.OutOrStdout(), Stderr: stderr,
		Quiet: set.Quiet, JSON: set.Format == "json", StderrTTY: StderrTTY(),
	})
	return exitCode(code)
}

func exitCode(code int) error {
	if code == 0 {
		return nil
	}
	return ExitCode(code)
}

// HeadlessOptions configure the plain front-end.
type HeadlessOptions struct {
	Stdout, Stderr io.Writer
	Quiet          bool // no progress
	JSON           bool // summary as JSON
	StderrTTY      bool // a progress line per second instead of per 10%/10 s
}

// WriteSummary prints the final summary as text or JSON.
func WriteSummary(w io.Writer, s *record.Summary, sections []report.Section, reasons []string, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	return report.Text(w, s, report.FailedChecks(sections, reasons)...)
}
