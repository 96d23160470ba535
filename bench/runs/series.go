package runs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/internal/textclean"
)

// Series is what the explorer shows of a series folder (`kvbench run
// --repeat N`): one row for all its runs.
type Series struct {
	// Repeat is how many runs were asked for; Runs how many ran.
	Repeat, Runs int
	// Dirs are the run folders, in order.
	Dirs []string
	// TTFTp50 is the summary of the runs' TTFT p50 (median and interval).
	TTFTp50Median *float64
	TTFTp50CI     *[2]float64
}

// Describe is the series in words, as short as width asks: the longest
// of its descriptions that fits ("" when none does).
func (s *Series) Describe(width int) string {
	for _, d := range s.Descriptions() {
		if len([]rune(d)) <= width {
			return d
		}
	}
	return ""
}

// Descriptions are the series in words, longest first.
func (s *Series) Descriptions() []string {
	runs := fmt.Sprintf("%d runs", s.Runs)
	if s.Runs == 1 {
		runs = "1 run"
	}
	if s.Runs != s.Repeat {
		runs = fmt.Sprintf("%d of %d runs", s.Runs, s.Repeat)
	}
	var long, mid, brief string
	if m := s.TTFTp50Median; m != nil {
		long = fmt.Sprintf(", TTFT p50 median %.1f ms", *m)
		brief = fmt.Sprintf(", p50 %.1f ms", *m)
		mid = long
		if ci := s.TTFTp50CI; ci != nil {
			long += fmt.Sprintf(" [%.1f, %.1f]", ci[0], ci[1])
		}
	}
	return []string{
		"series of " + runs + long,
		"series of " + runs + mid,
		"series, " + runs + brief,
		"series, " + runs,
		fmt.Sprintf("series %dr", s.Runs),
		"series",
	}
}

// ResolveSeries finds a series folder named by id (a folder name in
// runsDir, or a unique prefix of one) or by path.
func ResolveSeries(runsDir, name string) (string, bool) {
	if name == "" {
		return "", false
	}
	isPath := strings.ContainsRune(name, '/') || strings.ContainsRune(name, os.PathSeparator)
	if !isPath {
		if d := filepath.Join(runsDir, name); record.IsSeriesDir(d) {
			return d, true
		}
	}
	if record.IsSeriesDir(name) {
		return name, true
	}
	if isPath {
		return "", false
	}
	entries, _ := os.ReadDir(runsDir)
	var hit string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), name) && record.IsSeriesDir(filepath.Join(runsDir, e.Name())) {
			if hit != "" {
				return "", false // ambiguous: Resolve names the candidates
			}
			hit = e.Name()
		}
	}
	if hit == "" {
		return "", false
	}
	return filepath.Join(runsDir, hit), true
}

// cleanID is a folder's name made safe to print.
func cleanID(dir string) string { return textclean.Line(filepath.Base(dir)) }

// ListSeries reads every series folder of runsDir, newest first; a
// folder whose series.json cannot be read is listed with the error.
func ListSeries(runsDir string) ([]Run, error) {
	entries, err := os.ReadDir(runsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list series: %w", err)
	}
	var out []Run
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(runsDir, e.Name())
		if record.IsSeriesDir(dir) {
			out = append(out, *ReadSeries(dir))
		}
	}
	sortNewest(out)
	return out, nil
}

// ReadSeries is the row of the series folder dir: its name, workload,
// model and engine (from its first run), start time, its runs' request
// totals, the TTFT p50 median, and its status (incomplete while it runs
// or after a crash, interrupted, failed when a run failed).
func ReadSeries(dir string) *Run {
	r := &Run{ID: cleanID(dir), Dir: dir, Interrupted: true, Series: &Series{}}
	f, err := record.ReadSeriesRecord(dir)
	if err != nil {
		r.Err = err
		r.Workload = seriesWorkload(r.ID)
		r.StartedAt, _ = parseFolderName(r.ID, "")
		r.annotate()
		return r
	}
	s := f.Series
	r.Name = textclean.Line(s.Name)
	r.StartedAt = record.RunInfo{StartedAt: s.StartedAt}.StartedTime()
	if r.StartedAt.IsZero() {
		r.StartedAt, _ = parseFolderName(r.ID, "")
	}
	r.Complete = s.FinishedAt != ""
	r.Interrupted = s.Interrupted || !r.Complete
	r.Series = &Series{Repeat: s.Repeat, Runs: len(f.Runs)}
	for _, x := range f.Runs {
		r.Series.Dirs = append(r.Series.Dirs, record.SeriesRunDir(dir, x.RunID))
		r.TotalRequests += x.TotalRequests
		r.FailedRequests += x.FailedRequests
		if x.ExitCode != 0 && r.ExitCode == 0 {
			r.ExitCode = x.ExitCode
		}
	}
	r.SuccessfulRequests = r.TotalRequests - r.FailedRequests
	if sm, ok := f.Summary.Get("ttft_p50"); ok {
		r.Series.TTFTp50Median, r.Series.TTFTp50CI = sm.Median, sm.CI95
	}
	if sm, ok := f.Summary.Get("hit_ratio"); ok {
		r.HitRatio = sm.Median
	}
	if sm, ok := f.Summary.Get("output_throughput"); ok && sm.Median != nil {
		r.OutputThroughput = *sm.Median
	}
	if sm, ok := f.Summary.Get("ttft_p99"); ok {
		r.P99TTFTms = sm.Median
	}
	if len(f.Runs) > 0 {
		if first := readRecord(r.Series.Dirs[0]); first != nil {
			r.Workload, r.Model, r.EngineURL = first.Workload, first.Model, first.EngineURL
		}
	}
	if r.Workload == "" {
		r.Workload = seriesWorkload(r.ID)
	}
	r.annotate()
	return r
}

// seriesWorkload reads the workload from a series folder's name,
// <stamp>-series-<workload>[-<name>].
func seriesWorkload(id string) string {
	_, rest, ok := strings.Cut(id, "-series-")
	if !ok {
		return ""
	}
	return workloadPrefix(rest)
}

// DeleteSeries removes a series folder and its runs. It refuses a
// directory that is not a series folder.
func DeleteSeries(dir string) error {
	if !record.IsSeriesDir(dir) {
		return fmt.Errorf("delete %s: not a series folder", dir)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("delete series: %w", err)
	}
	return nil
}
