//go:build unix

package record

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A series.json from outside is read as the other files of the record
// are: a regular file only, bounded, its text cleaned for one line.
func TestReadSeriesRecordHostile(t *testing.T) {
	fifo := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifo, SeriesFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSeriesRecord(fifo); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a FIFO series.json: %v", err)
	}
	if IsSeriesDir(fifo) {
		t.Error("a FIFO series.json makes a series folder")
	}

	big := t.TempDir()
	f, err := os.Create(filepath.Join(big, SeriesFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxSeriesBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := ReadSeriesRecord(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("an oversized series.json: %v", err)
	}

	dirty := t.TempDir()
	body := `{"schema_version":1,"tool":{"name":"kvbench\u001b]0;x\u0007","version":"1"},` +
		`"series":{"id":"s\u001b[2J","name":"a\nb\u001b[31m","started_at":"t\r","finished_at":"","interrupted":false,"repeat":1},` +
		`"runs":[{"run_id":"01\u001b[1m","exit_code":0,"interrupted":false,"total_requests":1,"failed_requests":0,"ttft\u001b[0m_p50":5}],` +
		`"summary":{"ttft\u009b_p50":{"median":5,"mean":5,"stdev":null,"ci95":null,"n":1}}}`
	if err := os.WriteFile(filepath.Join(dirty, SeriesFile), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	rec, err := ReadSeriesRecord(dirty)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{rec.Tool.Name, rec.Series.ID, rec.Series.Name, rec.Series.StartedAt, rec.Runs[0].RunID, rec.Runs[0].Values[0].Key, rec.Summary[0].Key}
	for _, s := range texts {
		if strings.ContainsAny(s, "\x1b\x07\n\r\u009b") {
			t.Errorf("not cleaned: %q", s)
		}
	}
	if rec.Runs[0].Values[0].Value == nil || *rec.Runs[0].Values[0].Value != 5 {
		t.Errorf("value lost in cleaning: %+v", rec.Runs[0].Values)
	}
}
