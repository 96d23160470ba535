package record

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/stat"
)

func TestSeriesRecordRoundTrip(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	f := SeriesRecord{SchemaVersion: 1, Tool: Tool{"kvbench", "t"},
		Series: SeriesInfo{ID: "20260301-120000-series-long-doc-qa", Repeat: 2},
		Runs: []SeriesRun{
			{RunID: "01", TotalRequests: 10, Values: []Value{{"ttft_p50", v(101.5)}, {"ttft_p50:cold", nil}, {"speedup", v(3)}}},
			{RunID: "02", ExitCode: 1, FailedRequests: 1, TotalRequests: 10, Values: []Value{{"ttft_p50", v(99)}, {"ttft_p50:cold", nil}, {"speedup", nil}}},
		},
		Summary: SeriesSummary{{"ttft_p50", stat.Describe([]float64{101.5, 99}, "ttft_p50")}, {"ttft_p50:cold", stat.Describe(nil, "x")}},
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	// Keys in the order written: the run's fixed keys, then its values.
	if i, j, k := strings.Index(s, `"run_id"`), strings.Index(s, `"failed_requests"`), strings.Index(s, `"ttft_p50:cold": null`); !(i < j && j < k) {
		t.Errorf("key order:\n%s", s)
	}
	for _, want := range []string{`"repeat": 2`, `"median": 100.25`, `"ci95": [`, `"n": 2`, `"stdev": null`} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %s:\n%s", want, s)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, SeriesFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if !IsSeriesDir(dir) || IsSeriesDir(t.TempDir()) {
		t.Error("IsSeriesDir")
	}
	back, err := ReadSeriesRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.Series != f.Series || len(back.Runs) != 2 || back.Runs[1].ExitCode != 1 || *back.Runs[0].Get("ttft_p50") != 101.5 ||
		back.Runs[0].Get("ttft_p50:cold") != nil || *back.Runs[0].Get("speedup") != 3 {
		t.Errorf("read back %+v", back)
	}
	if sm, ok := back.Summary.Get("ttft_p50"); !ok || *sm.Median != 100.25 || sm.N != 2 || back.Summary[1].Key != "ttft_p50:cold" {
		t.Errorf("summary %+v", back.Summary)
	}
	if got := SeriesRunDir(dir, "../../etc"); got != filepath.Join(dir, SeriesRunsDir, "etc") {
		t.Errorf("run dir escapes: %s", got)
	}
	os.WriteFile(filepath.Join(dir, SeriesFile), []byte(`[1]`), 0o644)
	if _, err := ReadSeriesRecord(dir); err == nil {
		t.Error("an array read as a series")
	}
}
