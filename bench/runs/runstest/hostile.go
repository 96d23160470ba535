package runstest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/textclean/cleantest"
)

// placeholder stands for the hostile text while the record writer writes
// the files (it would escape or refuse the text itself); the files are
// then edited, as by hand.
const placeholder = "HOSTILEXYZ"

// Hostile writes the run of s with hostile text (cleantest) wherever a
// run folder holds text: the folder name, the recorded name, the model
// id, the prompt salt of the summary's config, the error and error detail
// of every failed request (every third one unless s says otherwise) and,
// with annotate, the name and the note of annotations.json. The files
// hold it as a hand-edited file can (cleantest.JSON), the folder name as
// cleantest.Folder. It returns the folder's path.
func Hostile(tb testing.TB, runsDir string, s Spec, annotate bool) string {
	tb.Helper()
	s.Name, s.Model = placeholder, placeholder
	if s.FailEvery == 0 {
		s.FailEvery = 3
	}
	cfg := map[string]any{"prompt_salt": placeholder}
	for k, v := range s.Config {
		cfg[k] = v
	}
	s.Config = cfg
	dir := Write(tb, runsDir, s)
	for _, f := range []string{"bench_summary.json", "config.json", "requests.jsonl"} {
		edit(tb, filepath.Join(dir, f), func(b []byte) []byte {
			b = bytes.ReplaceAll(b, []byte(`"http_503"`), []byte(`"`+placeholder+`"`))
			return bytes.ReplaceAll(b, []byte(`"server busy"`), []byte(`"`+placeholder+`"`))
		})
	}
	if annotate {
		note := `{"name":"` + placeholder + `","note":"` + placeholder + `\nsecond line","updated_at":"2026-03-02T08:00:00Z"}`
		if err := os.WriteFile(filepath.Join(dir, "annotations.json"), []byte(note), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return poison(tb, dir)
}

// HostileSweep writes the sweep of s with hostile text in its folder
// name and in sweep.json's name.
func HostileSweep(tb testing.TB, runsDir string, s SweepSpec) string {
	tb.Helper()
	s.Name = placeholder
	return poison(tb, WriteSweep(tb, runsDir, s))
}

// poison puts the hostile text in place of the placeholder in every JSON
// file of dir (cells included) and in dir's name, and returns the new
// path.
func poison(tb testing.TB, dir string) string {
	tb.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") && !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		edit(tb, path, func(b []byte) []byte { return b })
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	// A file system that takes only UTF-8 names (macOS) gets the name
	// without its raw 0x9b byte.
	for _, name := range []string{cleantest.Folder, strings.ToValidUTF8(cleantest.Folder, "")} {
		to := filepath.Join(filepath.Dir(dir), strings.ReplaceAll(filepath.Base(dir), placeholder, name))
		if err = os.Rename(dir, to); err == nil {
			return to
		}
	}
	tb.Fatal(err)
	return ""
}

// edit rewrites the file at path with fn's change, then the placeholder
// replaced by the hostile text; a missing file is left missing.
func edit(tb testing.TB, path string, fn func([]byte) []byte) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		tb.Fatal(err)
	}
	b = bytes.ReplaceAll(fn(b), []byte(placeholder), []byte(cleantest.JSON))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
}
