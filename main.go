// Command kvbench benchmarks what an OpenAI-compatible engine's KV cache
// really does: TTFT under document reuse, multi-round chat, cold prefill,
// and per-request receipts of the cache state the engine reported.
package main

import (
	"context"
	"fmt"
	"github.com/kvbench/kvbench/internal/errs"
	"os"

	"github.com/spf13/cobra"

	"github.com/kvbench/kvbench/app"
	"github.com/kvbench/kvbench/bench/overload"
	"github.com/kvbench/kvbench/cli"
	"github.com/kvbench/kvbench/sim"
)

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "kvbench",
		Short: "Benchmark what an LLM engine's KV cache really does",
		Long: `kvbench drives OpenAI-compatible engines (vLLM, SGLang, llama.cpp, LMCache)
with cache-focused workloads, measures TTFT, ITL and throughput, and proves per
request which cache state the engine reported (cold, reused or unverified).

Run it with no arguments on a terminal for the full-screen application.`,
		Example:       cli.RunExample,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cli.IsTTY() {
				fmt.Fprint(cmd.ErrOrStderr(), cmd.UsageString())
				return cli.ExitCode(errs.ExitUsage)
			}
			if code := app.RunHome(cmd.Context()); code != 0 {
				return cli.ExitCode(code)
			}
			return nil
		},
	}
	root.AddCommand(cli.NewRunCommand(), sim.NewCommand(), cli.NewVersionCommand())
	cli.AddCommands(root)
	cli.AddLogFile(root)
	cli.UsageErrors(root)
	return root
}

func main() {
	// A short scheduler slice lets a thread woken by a socket preempt a
	// CPU-bound process sooner (docs/client-performance.md); best effort.
	overload.AskShortSlice(overload.ShortSlice)
	root := newRoot()
	err := root.ExecuteContext(context.Background())
	code, msg := cli.Code(err)
	if msg != "" {
		fmt.Fprintf(os.Stderr, "kvbench: %s\n", msg)
	}
	os.Exit(code)
}
