// Package app is kvbench's full-screen front-end: the root bubbletea
// model, screen routing, global keys, help and size.
package app

import (
	"context"
	"fmt"
	"os"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/common"
)

func unavailable() int {
	fmt.Fprintln(os.Stderr, "kvbench: the terminal interface is not available yet; use --no-interactive")
	return 2
}

// RunHome shows the home screen (`kvbench` on a TTY).
func RunHome(ctx context.Context) int { return unavailable() }

// RunGuided opens the config form asking what cfg is missing first, then
// runs the benchmark live.
func RunGuided(ctx context.Context, cfg *config.Config) int { return unavailable() }

// RunLive shows the live run screen for a prepared runner and returns
// the run's exit code.
func RunLive(ctx context.Context, r *bench.Runner) int { return unavailable() }

// RunScreen runs the application starting on the screen build returns.
func RunScreen(ctx context.Context, build func(*common.Common) common.Screen) int {
	return unavailable()
}
