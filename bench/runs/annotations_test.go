package runs_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
)

var annotatedAt = time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)

// A rename and a note go to annotations.json: the list and the detail
// show the display name and the note, the recorded name stays known,
// and the record's files are not touched.
func TestAnnotationsRenameAndNote(t *testing.T) {
	dir := t.TempDir()
	run := runstest.Write(t, dir, runstest.Spec{Name: "baseline", Requests: 10, Summary: true})
	before := map[string][]byte{}
	for _, f := range []string{record.SummaryFile, record.RequestsFile, record.ConfigFile} {
		b, err := os.ReadFile(filepath.Join(run, f))
		if err != nil {
			t.Fatal(err)
		}
		before[f] = b
	}

	got, err := runs.WriteAnnotations(run, runs.Annotations{Name: "  vLLM 0.9\nprefix on ", Note: " cache warmed by hand \n"}, annotatedAt)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "vLLM 0.9 prefix on" || got.Note != "cache warmed by hand" {
		t.Errorf("stored %+v: the name is one trimmed line, the note trimmed", got)
	}
	raw, err := os.ReadFile(filepath.Join(run, runs.AnnotationsFile))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk map[string]any
	if err := json.Unmarshal(raw, &onDisk); err != nil {
		t.Fatal(err)
	}
	if onDisk["name"] != "vLLM 0.9 prefix on" || onDisk["note"] != "cache warmed by hand" || onDisk["updated_at"] != "2026-03-02T08:00:00Z" {
		t.Errorf("annotations.json = %s", raw)
	}
	for f, b := range before {
		after, _ := os.ReadFile(filepath.Join(run, f))
		if !bytes.Equal(after, b) {
			t.Errorf("%s changed by annotating", f)
		}
	}

	list, err := runs.List(dir)
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v %v", list, err)
	}
	r := list[0]
	if r.Name != "vLLM 0.9 prefix on" || r.RecordedName != "baseline" || r.Note != "cache warmed by hand" {
		t.Errorf("listed name %q (recorded %q), note %q", r.Name, r.RecordedName, r.Note)
	}
	det, err := runs.Load(run)
	if err != nil {
		t.Fatal(err)
	}
	if det.Run.Name != "vLLM 0.9 prefix on" || det.Run.Note != "cache warmed by hand" || det.Summary.Run.Name != "baseline" {
		t.Errorf("detail: %q %q, summary's name %q", det.Run.Name, det.Run.Note, det.Summary.Run.Name)
	}

	// An empty name shows the recorded one again; both empty remove the
	// file.
	if _, err := runs.WriteAnnotations(run, runs.Annotations{Note: "kept"}, annotatedAt); err != nil {
		t.Fatal(err)
	}
	if r, _ := runs.Read(run); r.Name != "baseline" || r.Note != "kept" {
		t.Errorf("after clearing the name: %q %q", r.Name, r.Note)
	}
	if _, err := runs.WriteAnnotations(run, runs.Annotations{}, annotatedAt); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(run, runs.AnnotationsFile)); !os.IsNotExist(err) {
		t.Errorf("annotations.json left after clearing both: %v", err)
	}
}

func TestAnnotationsRefused(t *testing.T) {
	dir := t.TempDir()
	run := runstest.Write(t, dir, runstest.Spec{Name: "a", Requests: 3, Summary: true})
	if _, err := runs.WriteAnnotations(t.TempDir(), runs.Annotations{Name: "x"}, annotatedAt); err == nil || !strings.Contains(err.Error(), "not a run or sweep folder") {
		t.Errorf("a folder that is no run: %v", err)
	}
	if _, err := runs.WriteAnnotations(run, runs.Annotations{Name: strings.Repeat("n", runs.MaxNameLen+1)}, annotatedAt); err == nil || !strings.Contains(err.Error(), "name: at most 120") {
		t.Errorf("a name too long: %v", err)
	}
	if _, err := runs.WriteAnnotations(run, runs.Annotations{Note: strings.Repeat("n", runs.MaxNoteLen+1)}, annotatedAt); err == nil || !strings.Contains(err.Error(), "note: at most 2000") {
		t.Errorf("a note too long: %v", err)
	}
	if _, err := os.Stat(filepath.Join(run, runs.AnnotationsFile)); !os.IsNotExist(err) {
		t.Errorf("a refused annotation was written: %v", err)
	}
}
