package common

import (
	"context"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/config"
)

// PreparedMsg answers Prepare: a runner ready to start, or why not.
type PreparedMsg struct {
	To     ID
	Runner *bench.Runner
	Err    error
}

// Prepare resolves cfg and builds a runner (starting the built-in engine,
// detecting the model, creating the run folder) off the update loop; the
// answer is a PreparedMsg for the screen to, so only the asker acts on
// it.
//
// The preparation belongs to to: when that screen leaves the stack the
// root cancels it, and a runner that still arrives is discarded.
func Prepare(c *Common, to ID, cfg *config.Config) tea.Cmd {
	ctx := c.Preparations.Start(bench.WithLogger(context.Background(), c.Logger), to)
	return func() tea.Msg {
		p, err := bench.Prepare(ctx, cfg)
		if err != nil {
			return PreparedMsg{To: to, Err: err}
		}
		r, err := bench.New(ctx, p)
		if err != nil {
			p.Close()
			return PreparedMsg{To: to, Err: err}
		}
		return PreparedMsg{To: to, Runner: r}
	}
}

// HandOver answers a PreparedMsg for its owner: a prepared runner goes to
// a live run screen in the owner's place (through the router); a failure
// is the owner's to show, so HandOver returns nil for it.
func HandOver(msg PreparedMsg) tea.Cmd {
	if msg.Err != nil || msg.Runner == nil {
		return nil
	}
	return Open(OpenRun{Runner: msg.Runner})
}
