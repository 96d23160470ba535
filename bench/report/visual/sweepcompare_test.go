package visual_test

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/report/visual"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
)

var sweepT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)

// The text of a sweep comparison: both sweeps named, their capacities,
// the curves in columns under their group titles.
func TestWriteSweepComparison(t *testing.T) {
	dir, a, b := runstest.TwoSweeps(t, sweepT0)
	c, err := runs.OpenSweeps(dir, filepath.Base(a), b)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := visual.WriteSweepComparison(&buf, c); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, re := range []string{
		`(?m)^A: ` + regexp.QuoteMeta(filepath.Base(a)) + ` \(long-doc-qa, rate sweep, 3 cells\)$`,
		`(?m)^B: ` + regexp.QuoteMeta(filepath.Base(b)) + ` \(long-doc-qa, rate sweep, 3 cells, capacity search\)$`,
		`(?m)^  A  4 req/s \(good fraction 95\.0% >= target 90%\); SLO ttft 500 ms$`,
		`(?m)^  B  8 req/s \(good fraction 92\.0% >= target 90%\); SLO ttft 500 ms$`,
		`(?m)^ +achieved req/s +p50 TTFT ms +p99 TTFT ms +good %$`,
		`(?m)^  rate +A +B +A +B +A +B +delta +A +B$`,
		`(?m)^ +8 +5\.50\* +7\.80 +300\.0 +50\.0 +900\.0 +450\.0 +-50\.0% +40\.0 +92\.0$`,
		`(?m)^  \* the cell did not deliver its load`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("text lacks %s:\n%s", re, out)
		}
	}
	// Each group title sits over its columns: "good %" ends where B's
	// good fraction column ends.
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.HasSuffix(l, "good %") && i+1 < len(lines) && len(lines[i+1]) != len(l) {
			t.Errorf("group header not aligned:\n%s\n%s", l, lines[i+1])
		}
	}

}
