package runs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/textclean"
)

// AnnotationsFile holds what a user said about a run (or a sweep) after
// it ran: a display name and a note. It is the only file of a run folder
// written after the run; the record itself (requests.jsonl,
// bench_summary.json, config.json) is never touched by it.
const AnnotationsFile = "annotations.json"

// Limits of an annotation, in characters.
const (
	MaxNameLen = 120
	MaxNoteLen = 2000
)

// maxAnnotationBytes caps annotations.json when reading.
const maxAnnotationBytes = 64 << 10

// Annotations is annotations.json. An empty Name keeps the name the run
// was recorded with.
type Annotations struct {
	Name      string `json:"name"`
	Note      string `json:"note"`
	UpdatedAt string `json:"updated_at,omitempty"`
}

// ReadAnnotations reads dir's annotations, their text cleaned (the name
// on one line); none (and no error) when the folder has no
// annotations.json.
func ReadAnnotations(dir string) (Annotations, error) {
	var a Annotations
	b, err := record.ReadJSON(filepath.Join(dir, AnnotationsFile), maxAnnotationBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return a, nil
	}
	if err != nil {
		return a, fmt.Errorf("read %s: %w", AnnotationsFile, err)
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return Annotations{}, fmt.Errorf("read %s: %w", AnnotationsFile, err)
	}
	a.Name, a.UpdatedAt = textclean.Line(a.Name), textclean.Line(a.UpdatedAt)
	return a, nil
}

// WriteAnnotations stores a as dir's annotations.json, atomically, and
// returns what it stored; both fields empty removes the file. dir must be
// a run or a sweep folder. The name is one line; both are cleaned
// (textclean: what is typed or pasted can hold terminal controls),
// trimmed and checked against the limits.
func WriteAnnotations(dir string, a Annotations, now time.Time) (Annotations, error) {
	if !isRunDir(dir) && !record.IsSweepDir(dir) {
		return Annotations{}, fmt.Errorf("annotate %s: not a run or sweep folder", dir)
	}
	a.Name = oneLine(a.Name)
	a.Note = strings.TrimSpace(textclean.Clean(strings.ReplaceAll(a.Note, "\r\n", "\n")))
	switch {
	case utf8.RuneCountInString(a.Name) > MaxNameLen:
		return Annotations{}, fmt.Errorf("name: at most %d characters (got %d)", MaxNameLen, utf8.RuneCountInString(a.Name))
	case utf8.RuneCountInString(a.Note) > MaxNoteLen:
		return Annotations{}, fmt.Errorf("note: at most %d characters (got %d)", MaxNoteLen, utf8.RuneCountInString(a.Note))
	}
	path := filepath.Join(dir, AnnotationsFile)
	if a.Name == "" && a.Note == "" {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Annotations{}, fmt.Errorf("annotate: %w", err)
		}
		return a, nil
	}
	a.UpdatedAt = now.UTC().Format(time.RFC3339)
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return Annotations{}, err
	}
	if err := config.WriteFileAtomic(path, append(b, '\n'), 0o644); err != nil {
		return Annotations{}, fmt.Errorf("annotate: %w", err)
	}
	return a, nil
}

// oneLine is s cleaned for one line (textclean.Line: its line breaks
// become spaces, other controls U+FFFD) and trimmed.
func oneLine(s string) string {
	return strings.TrimSpace(textclean.Line(strings.ReplaceAll(s, "\r\n", "\n")))
}

// annotate applies the folder's annotations to the row: the display name
// replaces the recorded one (kept in RecordedName), the note is attached.
// An unreadable annotations.json is ignored: the run is listed as
// recorded.
func (r *Run) annotate() {
	r.RecordedName = r.Name
	a, err := ReadAnnotations(r.Dir)
	if err != nil {
		return
	}
	if a.Name != "" {
		r.Name = a.Name
	}
	r.Note = a.Note
}

// readRun is the list's row of dir, annotated; nil when dir holds no run
// record.
func readRun(dir string) *Run {
	r := readRecord(dir)
	if r != nil {
		r.annotate()
	}
	return r
}
