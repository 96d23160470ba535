// Package simtest starts the simulated engine for tests of other
// packages.
package simtest

import (
	"testing"

	"github.com/kvbench/kvbench/sim"
)

// Start starts a simulated engine on a free loopback port at 100 times
// its modelled speed (configure may change that and anything else),
// closes it when the test ends and returns its URL.
func Start(t testing.TB, configure func(*sim.Config)) string {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.Speed = 100
	if configure != nil {
		configure(&cfg)
	}
	run, err := sim.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	return run.URL()
}
