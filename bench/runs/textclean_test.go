//go:build unix

package runs_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/internal/textclean/cleantest"
)

// hostileRuns is a runs directory whose folders hold hostile text in
// their names and every file: a finished run with annotations, a crashed
// one (no summary) and a sweep.
func hostileRuns(t *testing.T) (dir, done, crashed, sweep string) {
	t.Helper()
	dir = t.TempDir()
	done = runstest.Hostile(t, dir, runstest.Spec{Started: t0, Requests: 9, Summary: true}, true)
	crashed = runstest.Hostile(t, dir, runstest.Spec{Started: t0.Add(time.Hour), Requests: 9}, false)
	sweep = runstest.HostileSweep(t, dir, runstest.SweepSpec{Started: t0.Add(2 * time.Hour),
		Cells: []runstest.SweepCell{{Value: 2}, {Value: 4}}})
	return dir, done, crashed, sweep
}

// decoded is a JSON text with its strings as they decode, so an escaped
// control (\u001b) shows as the character it stands for.
func decoded(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return fmt.Sprint(v)
}

// Every text bench/runs reads from a run folder (the folder name, the
// summary, config.json, annotations.json, requests.jsonl, sweep.json) is
// cleaned where it is read: the rows, the details, the requests, the
// reproducing command and the comparison hold no terminal control.
func TestHostileTextIsCleanedWhereRead(t *testing.T) {
	dir, done, crashed, sweep := hostileRuns(t)
	list, err := runs.ListAll(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 {
		t.Fatalf("%d rows, want 3", len(list))
	}
	for _, r := range list {
		cleantest.Check(t, "row id", r.ID)
		cleantest.Check(t, "row name", r.Name)
		shown := r
		shown.Dir = "" // the path on disk, kept as it is to open the folder
		cleantest.Clean(t, "row", fmt.Sprintf("%+v %+v", shown, r.Sweep))
		cleantest.Check(t, "row folder", r.ShownDir())
		if r.Sweep == nil {
			cleantest.Check(t, "row model", r.Model)
		}
		// The id shown finds the run again.
		if r.Sweep == nil {
			if got, err := runs.Resolve(dir, r.ID); err != nil || got != r.Dir {
				t.Errorf("Resolve(%q) = %q, %v; want %q", r.ID, got, err, r.Dir)
			}
		}
	}
	for _, d := range []string{done, crashed} {
		det, err := runs.Load(d)
		if err != nil {
			t.Fatal(err)
		}
		shown := det.Run
		shown.Dir = ""
		cleantest.Clean(t, "detail", fmt.Sprintf("%+v", shown))
		sum, err := json.Marshal(det.Summary)
		if err != nil {
			t.Fatal(err)
		}
		cleantest.Check(t, "detail summary", decoded(t, sum))
		cleantest.Check(t, "detail config", decoded(t, det.Config))

		x, err := runs.BuildIndex(t.Context(), d)
		if err != nil {
			t.Fatal(err)
		}
		if x.Len() != 9 || x.Corrupt != 0 {
			t.Fatalf("index: %d lines, %d corrupt; want 9 and 0", x.Len(), x.Corrupt)
		}
		failed := x.Select(runs.Failed)
		if len(failed) != 3 {
			t.Fatalf("%d failed requests indexed, want 3", len(failed))
		}
		rs, err := x.Window(failed)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := x.Raw(failed[0])
		if err != nil {
			t.Fatal(err)
		}
		head, err := runs.Head(d, 9)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range append(rs, head...) {
			if r.Successful {
				continue
			}
			cleantest.Check(t, "request error detail", *r.ErrorDetail)
			cleantest.Check(t, "request error", *r.Error)
		}
		cleantest.Check(t, "raw request line", decoded(t, raw))
	}

	det, _ := runs.Load(done)
	if got := det.Run.Note; !strings.HasPrefix(got, cleantest.Shown) || !strings.Contains(got, "\nsecond line") {
		t.Errorf("note %q: want the cleaned note with its line break", got)
	}
	args, err := runs.Command(done)
	if err != nil {
		t.Fatal(err)
	}
	line := runs.ShellJoin(args)
	cleantest.Check(t, "reproducing command", line)
	for _, flag := range []string{"--model", "--name", "--prompt-salt"} {
		if !strings.Contains(line, flag+" '"+cleantest.Shown) {
			t.Errorf("the command does not carry the run's %s: %s", flag, line)
		}
	}
	sargs, err := runs.SweepCommand(sweep)
	if err != nil {
		t.Fatal(err)
	}
	cleantest.Check(t, "sweep command", runs.ShellJoin(sargs))

	cmp, err := runs.CompareNamed(dir, done, crashed)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := cmp.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	cleantest.Check(t, "comparison", b.String())
}

// Annotations typed or pasted in the explorer are stored cleaned.
func TestWriteAnnotationsCleans(t *testing.T) {
	dir := runstest.Write(t, t.TempDir(), runstest.Spec{Name: "a", Started: t0, Requests: 1, Summary: true})
	a, err := runs.WriteAnnotations(dir, runs.Annotations{Name: cleantest.Text, Note: cleantest.Text + "\r\nline two"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	back, err := runs.ReadAnnotations(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{a.Name, a.Note, back.Name, back.Note} {
		cleantest.Check(t, "annotation", s)
	}
	if !strings.HasSuffix(back.Note, "end\nline two") {
		t.Errorf("note %q: want its line break kept", back.Note)
	}
}
