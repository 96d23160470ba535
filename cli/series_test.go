package cli_test

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/internal/testbin"
)

// run --repeat 3 writes a series folder: series.json with three runs and
// the summary, runs/01..03 each a complete run folder; results lists it
// as one entry and compare takes it.
func TestRunRepeat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := []string{"run", "--no-interactive", "--output-dir", dir, "--name", "nightly", "--engine-url", "builtin",
		"--builtin-speed", "50", "--workload", "random-prefill", "--rp-num-requests", "6", "--rp-request-length", "64", "--repeat", "3"}
	res := testbin.Run(t, 120*time.Second, []string{"KVBENCH_CONFIG_DIR=" + dir}, args...)
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
	}
	m, _ := filepath.Glob(filepath.Join(dir, "*-series-random-prefill-nightly"))
	if len(m) != 1 {
		t.Fatalf("series folder: %v", m)
	}
	f, err := record.ReadSeriesRecord(m[0])
	if err != nil {
		t.Fatal(err)
	}
	if f.Series.Repeat != 3 || len(f.Runs) != 3 || f.Series.FinishedAt == "" || f.Series.Interrupted || f.Series.ID != filepath.Base(m[0]) {
		t.Fatalf("series.json: %+v", f.Series)
	}
	for i, r := range f.Runs {
		if r.RunID != record.SeriesRunID(i) || r.ExitCode != 0 || r.TotalRequests != 6 || r.Get("ttft_p50") == nil {
			t.Errorf("run %d: %+v", i, r)
		}
		if _, err := os.Stat(filepath.Join(m[0], "runs", r.RunID, record.SummaryFile)); err != nil {
			t.Errorf("run %s: %v", r.RunID, err)
		}
	}
	sm, ok := f.Summary.Get("ttft_p50")
	if !ok || sm.N != 3 || sm.Median == nil || sm.CI95 == nil || sm.Stdev == nil {
		t.Errorf("summary ttft_p50: %+v", sm)
	}
	for _, want := range []string{"Series " + f.Series.ID + ": 3 of 3 runs", "Summary over the runs", "ttft_p50:cold"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, res.Stdout)
		}
	}
	if !strings.Contains(res.Stderr, "run 3/3 (03) done") || !strings.Contains(res.Stderr, "kvbench: series in "+m[0]) {
		t.Errorf("stderr:\n%s", res.Stderr)
	}

	list := testbin.Run(t, 30*time.Second, nil, "results", "--runs-dir", dir, "--format", "json")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(list.Stdout), &rows); err != nil || len(rows) != 1 || rows[0]["kind"] != "series" || rows[0]["runs"] != 3.0 {
		t.Errorf("results: %v %s", err, list.Stdout)
	}
	cmp := testbin.Run(t, 30*time.Second, nil, "compare", f.Series.ID, m[0], "--runs-dir", dir, "--format", "json")
	var j struct {
		A, B, Samples string
		Rows          []struct{ Metric, Word, Note string }
	}
	if err := json.Unmarshal([]byte(cmp.Stdout), &j); err != nil || cmp.Code != 0 || j.Samples != "runs" || j.A != f.Series.ID {
		t.Fatalf("compare: exit %d %v\n%s%s", cmp.Code, err, cmp.Stdout, cmp.Stderr)
	}
	if j.Rows[0].Word != "~" || !strings.Contains(j.Rows[0].Note, "too few runs") {
		t.Errorf("three runs a side: %+v", j.Rows[0])
	}
	// --format json prints series.json itself.
	res = testbin.Run(t, 120*time.Second, []string{"KVBENCH_CONFIG_DIR=" + dir}, append(args, "--format", "json", "-q", "--repeat", "2")...)
	var g record.SeriesRecord
	if err := json.Unmarshal([]byte(res.Stdout), &g); res.Code != 0 || err != nil || len(g.Runs) != 2 || g.Series.Repeat != 2 {
		t.Errorf("--format json: exit %d %v\n%s", res.Code, err, res.Stdout)
	}
}

func TestRepeatOutOfRange(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--repeat", "0"}, {"--repeat", "101"}, {"--repeat", "x"},
		{"--repeat", "3", "--shard", "0/2", "--run-key", "k1"},
	} {
		res := testbin.Run(t, 30*time.Second, nil, append([]string{"run", "--no-interactive", "--engine-url", "builtin", "--workload", "random-prefill",
			"--output-dir", t.TempDir()}, args...)...)
		lines := strings.Split(strings.TrimSpace(res.Stderr), "\n")
		if res.Code != 2 || len(lines) != 1 || !strings.Contains(lines[0], "repeat") {
			t.Errorf("%v: exit %d, stderr %q", args, res.Code, res.Stderr)
		}
	}
	// Missing arguments: the series has no guided form, even on a
	// terminal; the error says so.
	res := testbin.Run(t, 30*time.Second, nil, "run", "--repeat", "3", "--output-dir", t.TempDir())
	if res.Code != 2 || !strings.Contains(res.Stderr, "--engine-url") || !strings.Contains(res.Stderr, "--repeat") {
		t.Errorf("missing: exit %d, stderr %q", res.Code, res.Stderr)
	}
}

// compare --gate exits 5 when a gate fails, 0 when all pass, 2 for a
// malformed one; --format junit is XML with one testcase per gate.
func TestCompareGates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := runstest.Write(t, dir, runstest.Spec{Name: "a", Started: resT0, Requests: 60, BaseTTFTms: 100, JitterMs: 2, JitterSeed: 1, Summary: true})
	same := runstest.Write(t, dir, runstest.Spec{Name: "same", Started: resT0.Add(time.Hour), Requests: 60, BaseTTFTms: 100, JitterMs: 2, JitterSeed: 2, Summary: true})
	slow := runstest.Write(t, dir, runstest.Spec{Name: "slow", Started: resT0.Add(2 * time.Hour), Requests: 60, BaseTTFTms: 110, JitterMs: 2, JitterSeed: 3, Summary: true})
	gates := "ttft_p50:+5%,error_rate:1%,hit_ratio:-2pp"

	res := testbin.Run(t, 30*time.Second, nil, "compare", a, same, "--gate", gates)
	if res.Code != 0 || !strings.Contains(res.Stdout, "Gates (0 of 3 failed)") {
		t.Errorf("same config: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	res = testbin.Run(t, 30*time.Second, nil, "compare", a, slow, "--gate", gates)
	if res.Code != 5 || !strings.Contains(res.Stdout, "FAIL  ttft_p50:+5%") || res.Stderr != "" {
		t.Errorf("slower: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	res = testbin.Run(t, 30*time.Second, nil, "compare", a, slow, "--gate", gates, "--format", "junit")
	var suite struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Cases    []struct {
			Name    string    `xml:"name,attr"`
			Failure *struct{} `xml:"failure"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal([]byte(res.Stdout), &suite); err != nil || res.Code != 5 || suite.Tests != 3 || len(suite.Cases) != 3 ||
		suite.Failures != 1 || suite.Cases[0].Failure == nil || suite.Cases[1].Failure != nil {
		t.Errorf("junit: exit %d %v\n%s", res.Code, err, res.Stdout)
	}
	res = testbin.Run(t, 30*time.Second, nil, "compare", a, slow, "--format", "json", "--gate", "ttft_p50:+20%")
	var j struct {
		Gates []struct {
			Gate   string
			Passed bool
			Reason string
		}
	}
	if err := json.Unmarshal([]byte(res.Stdout), &j); err != nil || res.Code != 0 || len(j.Gates) != 1 || !j.Gates[0].Passed ||
		!strings.Contains(j.Gates[0].Reason, "within +20%") {
		t.Errorf("json: exit %d %v\n%s", res.Code, err, res.Stdout)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--gate", "ttft_p50:-5%"}, `--gate "ttft_p50:-5%"`},
		{[]string{"--gate", "ttft_p50:+5%,nope:+1%"}, `--gate "nope:+1%": unknown metric`},
		{[]string{"--format", "junit"}, "give --gate"},
		{[]string{"--format", "xml"}, "--format"},
		{[]string{"--alpha", "1.5"}, "--alpha"},
	} {
		res := testbin.Run(t, 30*time.Second, nil, append([]string{"compare", a, slow}, c.args...)...)
		lines := strings.Split(strings.TrimSpace(res.Stderr), "\n")
		if res.Code != 2 || len(lines) != 1 || !strings.Contains(lines[0], c.want) || res.Stdout != "" {
			t.Errorf("%v: exit %d, stderr %q", c.args, res.Code, res.Stderr)
		}
	}
}
