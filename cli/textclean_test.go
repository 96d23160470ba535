//go:build unix

package cli_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/internal/testbin"
	"github.com/kvbench/kvbench/internal/textclean/cleantest"
)

// hostileDir holds two runs and two sweeps with terminal controls in
// their folder names, names, model ids, notes and request errors.
func hostileDir(t *testing.T) (dir, a, b, sa, sb string) {
	t.Helper()
	dir = t.TempDir()
	a = runstest.Hostile(t, dir, runstest.Spec{Started: resT0, Requests: 6, Summary: true}, true)
	b = runstest.Hostile(t, dir, runstest.Spec{Started: resT0.Add(time.Hour), Requests: 6}, false)
	cells := []runstest.SweepCell{{Value: 2, Achieved: runstest.F(2), P50TTFTms: runstest.F(40), P99TTFTms: runstest.F(90)}}
	sa = runstest.HostileSweep(t, dir, runstest.SweepSpec{Started: resT0.Add(2 * time.Hour), Cells: cells})
	sb = runstest.HostileSweep(t, dir, runstest.SweepSpec{Started: resT0.Add(3 * time.Hour), Cells: cells})
	return dir, a, b, sa, sb
}

// `results` (text and JSON) and `compare` (runs and sweeps) print no
// terminal control from the run folders, and show their names cleaned;
// JSON carries the cleaned text too.
func TestHostileRunFoldersPrintClean(t *testing.T) {
	dir, a, b, sa, sb := hostileDir(t)
	res := testbin.Run(t, 30*time.Second, nil, "results", "--runs-dir", dir, "--no-interactive")
	if res.Code != 0 {
		t.Fatalf("results: exit %d: %s", res.Code, res.Stderr)
	}
	cleantest.Check(t, "results table", res.Stdout)
	if n := strings.Count(res.Stdout, "\n"); n != 5 {
		t.Errorf("%d lines, want a header and 4 rows:\n%s", n, res.Stdout)
	}

	res = testbin.Run(t, 30*time.Second, nil, "results", "--runs-dir", dir, "--format", "json")
	if res.Code != 0 {
		t.Fatalf("results --format json: exit %d: %s", res.Code, res.Stderr)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(res.Stdout), &list); err != nil || len(list) != 4 {
		t.Fatalf("%d entries, %v:\n%s", len(list), err, res.Stdout)
	}
	for _, o := range list {
		// Decoded: an escaped control (\u001b) would be one again.
		for _, key := range []string{"id", "name"} {
			cleantest.Check(t, "JSON "+key, fmt.Sprint(o[key]))
		}
		cleantest.Clean(t, "JSON entry", fmt.Sprint(o))
	}
	notes := 0
	for _, o := range list {
		if n, ok := o["note"].(string); ok {
			cleantest.Check(t, "JSON note", n)
			notes++
		}
	}
	if notes != 1 {
		t.Errorf("%d notes, want the annotated run's", notes)
	}

	// A run is named by the id shown (cleaned) as by its folder's name.
	for _, o := range list {
		if o["kind"] == "sweep" {
			continue
		}
		id := o["id"].(string)
		one := testbin.Run(t, 30*time.Second, nil, "results", id, "--runs-dir", dir, "--format", "json")
		var got []map[string]any
		if json.Unmarshal([]byte(one.Stdout), &got); one.Code != 0 || len(got) != 1 || got[0]["id"] != id {
			t.Errorf("results %q: exit %d, %s%s", id, one.Code, one.Stdout, one.Stderr)
		}
	}

	// Compared by path.
	for _, pair := range [][2]string{{a, b}, {sa, sb}} {
		shownA := strings.Split(filepath.Base(pair[0]), "\x1b")[0]
		res = testbin.Run(t, 30*time.Second, nil, "compare", pair[0], pair[1], "--runs-dir", dir, "--no-interactive")
		if res.Code != 0 {
			t.Fatalf("compare: exit %d: %s", res.Code, res.Stderr)
		}
		cleantest.Check(t, "compare", res.Stdout)
		if !strings.Contains(res.Stdout, shownA) {
			t.Errorf("compare does not name A (%s):\n%s", shownA, res.Stdout)
		}
	}
}

// An error line names hostile folders (runs a prefix matches) cleaned.
func TestHostileFolderNamesInErrorsPrintClean(t *testing.T) {
	dir, _, _, _, _ := hostileDir(t)
	res := testbin.Run(t, 30*time.Second, nil, "results", "2026", "--runs-dir", dir, "--format", "json")
	if res.Code != 2 {
		t.Fatalf("an ambiguous prefix: exit %d, want 2: %s", res.Code, res.Stderr)
	}
	cleantest.Check(t, "error line", res.Stderr)
	if strings.Count(strings.TrimSpace(res.Stderr), "\n") != 0 {
		t.Errorf("more than one line:\n%s", res.Stderr)
	}
}
