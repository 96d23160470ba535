package results_test

import (
	"strings"
	"testing"

	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/results"
)

// o asks for the HTML report of the selected run, or of the marked pair.
func TestReportKey(t *testing.T) {
	dir := fixtureRuns(t)
	l := openList(t, dir, 140, 45)
	m, root := press(t, l, "o")
	if len(root) != 1 {
		t.Fatalf("o sent %v", root)
	}
	rep, ok := root[0].(common.OpenReport)
	if !ok || len(rep.Runs) != 1 || !strings.HasSuffix(rep.Runs[0], "killed") {
		t.Fatalf("o on the first row asked for %+v", root[0])
	}
	m, _ = press(t, m, "space", "space")
	_, root = press(t, m, "o")
	rep, ok = root[0].(common.OpenReport)
	if !ok || len(rep.Runs) != 2 || !strings.HasSuffix(rep.Runs[0], "killed") || !strings.HasSuffix(rep.Runs[1], "stopped") {
		t.Fatalf("o with two marks asked for %+v", root[0])
	}
	// The detail of a run offers the same.
	d := results.NewDetail(newCommon(dir, 140, 44), rep.Runs[1])
	dm, _ := drive(t, d, d.Init())
	_, root = press(t, dm, "o")
	if len(root) != 1 {
		t.Fatalf("o in the detail sent %v", root)
	}
	if r, ok := root[0].(common.OpenReport); !ok || len(r.Runs) != 1 || r.Runs[0] != rep.Runs[1] {
		t.Errorf("o in the detail asked for %+v", root[0])
	}
}
