package app

import (
	"context"
	"os"
	"testing"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/home"
	"github.com/kvbench/kvbench/screens/run"
)

// A run prepared for a screen that left the stack (Back while
// preparing) is never run: the root discards it, so no run folder and
// no built-in engine are left behind; a preparation still in flight for
// it is cancelled and creates nothing.
func TestBackWhilePreparingLeavesNothing(t *testing.T) {
	out := t.TempDir()
	c := testCommon(t.TempDir(), t.TempDir())
	m := newModel(c, home.New(c))
	before := bench.BuiltinsRunning()

	cfg := config.Default()
	for k, v := range map[string]string{"workload": config.RandomPrefill, "engine_url": "builtin", "output_dir": out,
		"rp_num_requests": "4", "rp_request_length": "50"} {
		if err := cfg.SetString(k, v); err != nil {
			t.Fatal(err)
		}
	}
	// The runner arrives after its screen (id 999, never on the stack)
	// went away.
	p, err := bench.Prepare(context.Background(), cfg.Clone())
	if err != nil {
		t.Fatal(err)
	}
	r, err := bench.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if bench.BuiltinsRunning() != before+1 {
		t.Fatalf("%d engines running, want %d", bench.BuiltinsRunning(), before+1)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 1 {
		t.Fatalf("the prepared run's folder: %d entries", len(entries))
	}
	m.Update(run.PreparedMsg{To: common.ID(999), Runner: r})
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a discarded run left %d entries in %s", len(entries), out)
	}
	if n := bench.BuiltinsRunning(); n != before {
		t.Errorf("%d built-in engines still running, want %d", n, before)
	}

	// Still preparing when its screen goes: the preparation is cancelled
	// and New creates no folder.
	const owner = common.ID(1000)
	ctx := c.Preparations.Start(context.Background(), owner)
	c.Preparations.Cancel(owner)
	p, err = bench.Prepare(ctx, cfg.Clone())
	if err == nil {
		if _, err = bench.New(ctx, p); err == nil {
			t.Fatal("a cancelled preparation built a runner")
		}
		p.Close()
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a cancelled preparation left %d entries", len(entries))
	}
	if n := bench.BuiltinsRunning(); n != before {
		t.Errorf("%d built-in engines after a cancelled preparation, want %d", n, before)
	}
}
