package results_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/screentest"
)

// now is the fixed clock of the explorer tests, days after the fixture
// runs.
var now = time.Date(2026, 3, 4, 9, 30, 0, 0, time.Local)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)

func TestMain(m *testing.M) {
	screentest.PinColors()
	code := m.Run()
	if bigDir != "" {
		os.RemoveAll(filepath.Dir(bigDir))
	}
	os.Exit(code)
}

func newCommon(dir string, w, h int) *common.Common {
	c := screentest.Common(w, h, now)
	c.RunsDir = dir
	return c
}

// fixtureRuns writes three finished runs, an interrupted one and a
// crashed one with a torn line.
func fixtureRuns(t testing.TB) string {
	dir := t.TempDir()
	runstest.Write(t, dir, runstest.Spec{Name: "baseline", Started: t0, Requests: 40, ReusedEvery: 2, Summary: true, CPUSeconds: 1.5})
	runstest.Write(t, dir, runstest.Spec{Name: "fast-cache", Started: t0.Add(time.Hour), Requests: 40, BaseTTFTms: 60, ReusedEvery: 4,
		Summary: true, Model: "llama-3-8b", EngineURL: "http://gpu-a:8000/v1", CPUSeconds: 1.2, Config: map[string]any{"seed": 7}})
	runstest.Write(t, dir, runstest.Spec{Name: "slow", Started: t0.Add(2 * time.Hour), Requests: 30, BaseTTFTms: 300, FailEvery: 10,
		Summary: true, ExitCode: 1, Workload: "random-prefill", Unverified: true,
		WorkloadBlock: map[string]any{"num_requests": 30, "expectation": &record.Expectation{
			Expected: "every request is a cold prefill: no two prompts share a prefix", Verdict: record.VerdictNotMet,
			Reason: "requests: 24/27 cold (cached under a tenth of the prompt); 3 failed (not judged); hit ratio 9.52%"}}})
	runstest.Write(t, dir, runstest.Spec{Name: "stopped", Started: t0.Add(3 * time.Hour), Requests: 12, Summary: true, Interrupted: true, ExitCode: 130})
	runstest.Write(t, dir, runstest.Spec{Name: "killed", Started: t0.Add(4 * time.Hour), Requests: 25, ReusedEvery: 3, FailEvery: 8, Corrupt: true})
	return dir
}

// drive runs cmd and every command its messages lead to, synchronously,
// feeding the messages to m. Messages for the root (push, pop, status,
// intents) are returned instead.
func drive(t testing.TB, m tea.Model, cmd tea.Cmd) (tea.Model, []tea.Msg) {
	t.Helper()
	var root []tea.Msg
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		msg := c()
		switch msg := msg.(type) {
		case nil:
		case tea.BatchMsg:
			queue = append(queue, msg...)
		case common.PushMsg, common.PopMsg, common.StatusMsg, common.Intent, common.QuitMsg:
			root = append(root, msg)
		default:
			var next tea.Cmd
			m, next = m.Update(msg)
			queue = append(queue, next)
		}
	}
	return m, root
}

// press sends keys one by one, running what they lead to.
func press(t testing.TB, m tea.Model, keys ...string) (tea.Model, []tea.Msg) {
	t.Helper()
	var root []tea.Msg
	for _, k := range keys {
		var cmd tea.Cmd
		m, cmd = m.Update(screentest.Key(k))
		var r []tea.Msg
		m, r = drive(t, m, cmd)
		root = append(root, r...)
	}
	return m, root
}
