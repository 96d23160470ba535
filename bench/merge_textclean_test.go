//go:build unix

package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/internal/textclean/cleantest"
)

// Shard folders with hostile text in their names, their config.json (the
// model id), their summaries (the run's name) and their lines (an error
// detail) merge into a summary, a printed summary and warnings that hold
// none of it raw; --name is cleaned too.
func TestMergeCleansShardText(t *testing.T) {
	_, shards := shardSet(t)
	for i, dir := range shards {
		for _, f := range []string{record.ConfigFile, record.SummaryFile} {
			path := filepath.Join(dir, f)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b = bytes.ReplaceAll(b, []byte(`"m"`), []byte(`"`+cleantest.JSON+`"`))
			b = bytes.ReplaceAll(b, []byte(`"name": ""`), []byte(`"name": "`+cleantest.JSON+`"`))
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if i == 1 {
			// One shard did not finish: its warning names the folder.
			os.Remove(filepath.Join(dir, record.SummaryFile))
		}
		to := dir + "-" + cleantest.Folder
		if err := os.Rename(dir, to); err != nil {
			t.Fatal(err)
		}
		shards[i] = to
	}
	var warnings []string
	m, err := Merge(MergeOptions{Dirs: shards, OutputDir: t.TempDir(), Name: "merged " + cleantest.Text,
		Logf: func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(m.Summary)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	json.Unmarshal(b, &v)
	cleantest.Check(t, "merged summary", fmt.Sprint(v))
	if got := m.Summary.Run.Name; !strings.HasPrefix(got, "merged "+cleantest.Shown) {
		t.Errorf("name %q: want the cleaned --name", got)
	}
	for _, id := range *m.Summary.Run.MergedFrom {
		cleantest.Check(t, "merged_from", id)
	}
	if model, _ := record.Field(m.Summary.Config, "model"); !strings.HasPrefix(fmt.Sprint(model), cleantest.Shown) {
		t.Errorf("model %v: want the shards' model, cleaned", model)
	}
	var out strings.Builder
	if err := report.Text(&out, m.Summary, m.Sections...); err != nil {
		t.Fatal(err)
	}
	cleantest.Check(t, "printed summary", out.String())
	if len(warnings) == 0 {
		t.Fatal("no warning for the shard without a summary")
	}
	for _, w := range warnings {
		cleantest.Clean(t, "warning", w)
	}
	if !strings.Contains(strings.Join(warnings, "\n"), cleantest.Shown) {
		t.Errorf("no warning names the shard folder: %q", warnings)
	}
}
