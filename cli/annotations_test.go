package cli_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/cli"
)

// `results --format json` names a renamed run by its display name and
// adds its note after the spec's keys; a run without a note has exactly
// the spec's keys.
func TestResultsJSONAnnotations(t *testing.T) {
	dir := t.TempDir()
	a := runstest.Write(t, dir, runstest.Spec{Name: "first", Requests: 3, Summary: true, Started: time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)})
	runstest.Write(t, dir, runstest.Spec{Name: "second", Requests: 3, Summary: true, Started: time.Date(2026, 3, 1, 13, 0, 0, 0, time.Local)})
	if _, err := runs.WriteAnnotations(a, runs.Annotations{Name: "baseline, 4 GPUs", Note: "driver 550"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	list, err := runs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := cli.WriteRunsJSON(&buf, list); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0]["name"] != "second" || got[1]["name"] != "baseline, 4 GPUs" || got[1]["note"] != "driver 550" {
		t.Fatalf("runs: %s", buf.String())
	}
	if _, ok := got[0]["note"]; ok || len(got[0]) != 14 {
		t.Errorf("a run without a note has %d keys: %v", len(got[0]), got[0])
	}
	if i, j := strings.Index(buf.String(), `"complete"`), strings.Index(buf.String(), `"note"`); j < i {
		t.Errorf("note before complete:\n%s", buf.String())
	}
}
