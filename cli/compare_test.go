package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/internal/testbin"
)

func TestCompareHeadless(t *testing.T) {
	dir := t.TempDir()
	a := runstest.Write(t, dir, runstest.Spec{Name: "a", Started: resT0, Requests: 10, BaseTTFTms: 100, Summary: true})
	b := runstest.Write(t, dir, runstest.Spec{Name: "b", Started: resT0.Add(time.Hour), Requests: 10, BaseTTFTms: 50,
		ReusedEvery: 2, Summary: true, Config: map[string]any{"seed": 7}})
	// No terminal, no --no-interactive: plain text all the same. A by
	// id, B by path.
	res := testbin.Run(t, 30*time.Second, []string{"NO_COLOR="}, "compare", filepath.Base(a), b, "--runs-dir", dir)
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	out := res.Stdout
	if strings.Contains(out, "\x1b") {
		t.Error("escape sequences in plain text")
	}
	for _, want := range []string{"A: " + filepath.Base(a), "B: " + filepath.Base(b), "\nResults\n", "\nCache\n",
		"\nLatency\n", "\nClient\n", "Config differences", "seed", "Hit ratio"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q:\n%s", want, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "Mean TTFT (ms)") && !strings.HasSuffix(l, "better") {
			t.Errorf("halved TTFT is not better: %q", l)
		}
	}
	same := testbin.Run(t, 30*time.Second, nil, "compare", a, b, "--runs-dir", dir, "--no-interactive")
	if same.Stdout != out {
		t.Error("--no-interactive prints something else than the headless default")
	}
}

func TestCompareUnknownRun(t *testing.T) {
	dir := t.TempDir()
	a := runstest.Write(t, dir, runstest.Spec{Name: "a", Started: resT0, Requests: 3, Summary: true})
	notRun := filepath.Join(dir, "empty")
	os.Mkdir(notRun, 0o755)
	for _, missing := range []string{"20990101-000000-nothing", notRun} {
		res := testbin.Run(t, 30*time.Second, nil, "compare", filepath.Base(a), missing, "--runs-dir", dir, "--no-interactive")
		lines := strings.Split(strings.TrimSpace(res.Stderr), "\n")
		if res.Code != 2 || len(lines) != 1 || !strings.Contains(lines[0], missing) || res.Stdout != "" {
			t.Errorf("compare with %s: exit %d, stderr %q, stdout %q", missing, res.Code, res.Stderr, res.Stdout)
		}
	}
	res := testbin.Run(t, 30*time.Second, nil, "compare", filepath.Base(a), "--runs-dir", dir)
	if res.Code != 2 {
		t.Errorf("one argument: exit %d", res.Code)
	}
}
