package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
)

// The CSV a merge streams as it copies the lines is the one the merged
// lines give when read back (record.Writer.WriteCSV without a stream).
func TestMergeStreamsTheCSVOfItsLines(t *testing.T) {
	_, shards := shardSet(t)
	m, err := Merge(MergeOptions{Dirs: shards, OutputDir: t.TempDir(), Now: func() time.Time { return time.Unix(1e9, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	streamed, err := os.ReadFile(filepath.Join(m.Dir, record.CSVFile))
	if err != nil {
		t.Fatal(err)
	}
	lines, err := os.ReadFile(filepath.Join(m.Dir, record.RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	w, err := record.Create(t.TempDir(), "x", "readback", time.Unix(1e9, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AppendLines(lines); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteCSV(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	readBack, err := os.ReadFile(filepath.Join(w.Dir(), record.CSVFile))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(streamed, []byte("\n")) < 2 || !bytes.Equal(streamed, readBack) {
		t.Fatalf("streamed CSV differs from the lines read back:\n%s\n---\n%s", streamed, readBack)
	}
}
