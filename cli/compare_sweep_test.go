package cli_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/internal/testbin"
)

// Two sweep folders are compared as curves: cells paired by rate, both
// capacities, in plain text without a terminal.
func TestCompareSweepsHeadless(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	F := runstest.F
	a := runstest.WriteSweep(t, dir, runstest.SweepSpec{Name: "base", Started: resT0, GoodputTarget: F(0.9), MaxValue: F(2), GoodFractionAtMax: F(1),
		Cells: []runstest.SweepCell{
			{Value: 2, Achieved: F(2), P50TTFTms: F(40), P99TTFTms: F(100), GoodFraction: F(1)},
			{Value: 4, Achieved: F(3.6), P50TTFTms: F(90), P99TTFTms: F(800), GoodFraction: F(0.5), Undelivered: true},
		}})
	b := runstest.WriteSweep(t, dir, runstest.SweepSpec{Name: "cache", Started: resT0.Add(time.Hour), GoodputTarget: F(0.9), MaxValue: F(4), GoodFractionAtMax: F(0.95),
		Cells: []runstest.SweepCell{
			{Value: 2, Achieved: F(2), P50TTFTms: F(20), P99TTFTms: F(50), GoodFraction: F(1)},
			{Value: 4, Achieved: F(4), P50TTFTms: F(30), P99TTFTms: F(200), GoodFraction: F(0.95)},
		}})
	// A by id, B by path; no terminal: text.
	res := testbin.Run(t, 30*time.Second, nil, "compare", filepath.Base(a), b, "--runs-dir", dir)
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	for _, re := range []string{
		`(?m)^A: ` + regexp.QuoteMeta(filepath.Base(a)) + ` \(long-doc-qa, rate sweep, 2 cells\)$`,
		`(?m)^  A  2 req/s \(good fraction 100\.0% >= target 90%\); SLO ttft 500 ms$`,
		`(?m)^  B  4 req/s \(good fraction 95\.0% >= target 90%\); SLO ttft 500 ms$`,
		`(?m)^ +2 +2\.00 +2\.00 +40\.0 +20\.0 +100\.0 +50\.0 +-50\.0% +100\.0 +100\.0$`,
		`(?m)^ +4 +3\.60\* +4\.00 +90\.0 +30\.0 +800\.0 +200\.0 +-75\.0% +50\.0 +95\.0$`,
	} {
		if !regexp.MustCompile(re).MatchString(res.Stdout) {
			t.Errorf("stdout lacks %s:\n%s", re, res.Stdout)
		}
	}

	// A sweep and a run, or sweeps of different dimensions: one line, exit 2.
	run := runstest.Write(t, dir, runstest.Spec{Name: "r", Started: resT0.Add(2 * time.Hour), Requests: 3, Summary: true})
	conc := runstest.WriteSweep(t, dir, runstest.SweepSpec{Name: "conc", Dimension: "concurrency", Started: resT0.Add(3 * time.Hour),
		Cells: []runstest.SweepCell{{Value: 4, Achieved: F(3.9), P50TTFTms: F(10), P99TTFTms: F(20)}}})
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{a, run}, "is a sweep and " + run + " is a run"},
		{[]string{a, conc}, "sweeps rate and B (" + filepath.Base(conc) + ") sweeps concurrency"},
	} {
		res := testbin.Run(t, 30*time.Second, nil, append([]string{"compare", "--runs-dir", dir, "--no-interactive"}, c.args...)...)
		lines := strings.Split(strings.TrimSpace(res.Stderr), "\n")
		if res.Code != 2 || len(lines) != 1 || !strings.Contains(lines[0], c.want) || res.Stdout != "" {
			t.Errorf("compare %v: exit %d, stderr %q, stdout %q", c.args, res.Code, res.Stderr, res.Stdout)
		}
	}
}

// Two rag-qa-quality runs of the built-in engine: compare pairs their
// samples by id from each run's rag_qa_quality.json (the simulator's
// replies hold no final answer, so nothing is scored and nothing changed).
func TestCompareRAGQualityRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data, _ := filepath.Abs("../bench/workload/testdata/rag_musique.jsonl")
	var ids []string
	for _, name := range []string{"a", "b"} {
		res := testbin.Run(t, 120*time.Second, []string{"KVBENCH_CONFIG_DIR=" + dir}, "run", "--no-interactive", "-q",
			"--output-dir", dir, "--name", name, "--engine-url", "builtin", "--builtin-speed", "20",
			"--workload", "rag-qa-quality", "--rag-dataset", data, "--rag-max-output-length", "16", "--rag-doc-align-tokens", "32")
		if res.Code != 0 {
			t.Fatalf("run %s: exit %d\n%s", name, res.Code, res.Stderr)
		}
		m, _ := filepath.Glob(filepath.Join(dir, "*-rag-qa-quality-"+name))
		if len(m) != 1 {
			t.Fatalf("run folder of %s: %v", name, m)
		}
		ids = append(ids, filepath.Base(m[0]))
	}
	res := testbin.Run(t, 30*time.Second, nil, "compare", ids[0], ids[1], "--runs-dir", dir)
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	for _, re := range []string{
		`\nAnswer quality \(samples paired by id\)\n`,
		`(?m)^  Paired by id +3 \(only in A 0, only in B 0\)$`,
		`(?m)^  Samples whose F1 changed +0 of 3 paired$`,
		`(?m)^  Mean F1 delta \(B - A\) +n/a over 0 samples scored in both$`,
		`(?m)^  2hop_1 +n/a +n/a +n/a +\d+\.\d +\d+\.\d +[-+]?\d+\.\d$`,
		`(?m)^  3hop_3 +n/a +n/a +n/a `,
	} {
		if !regexp.MustCompile(re).MatchString(res.Stdout) {
			t.Errorf("stdout lacks %s:\n%s", re, res.Stdout)
		}
	}
	// A rag-qa-quality run against another workload's: said plainly.
	other := runstest.Write(t, dir, runstest.Spec{Name: "ldqa", Started: resT0, Requests: 3, Summary: true})
	res = testbin.Run(t, 30*time.Second, nil, "compare", ids[0], other, "--runs-dir", dir)
	if res.Code != 0 || !strings.Contains(res.Stdout, "A is a rag-qa-quality run and B a long-doc-qa run: only two rag-qa-quality runs have per-sample scores to pair.") {
		t.Errorf("exit %d:\n%s", res.Code, res.Stdout)
	}
}
