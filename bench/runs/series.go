package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/stat"
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
	r.Name = s.Name
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

// SeriesEntry is the row of series.json of the run folder dir (run id,
// exit code, summary as the run ended): its counts and every metric,
// read back from its requests.jsonl once.
func SeriesEntry(dir, id string, exitCode int, sum *record.Summary) (record.SeriesRun, error) {
	entry := record.SeriesRun{RunID: id, ExitCode: exitCode}
	smp, err := ReadSamples(context.Background(), dir)
	if err != nil {
		return entry, err
	}
	if sum != nil {
		entry.Interrupted = sum.Run.Interrupted
		entry.TotalRequests, entry.FailedRequests = sum.Results.TotalRequests, sum.Results.FailedRequests
	} else {
		entry.TotalRequests, entry.FailedRequests = smp.Measured, smp.Failed
	}
	entry.Values = smp.Values(sum)
	return entry, nil
}

// SummariseSeries describes every metric (median, mean, standard
// deviation, 95% bootstrap interval of the median, runs) over the runs
// that finished: an interrupted run's figures cover part of its plan.
func SummariseSeries(rs []record.SeriesRun) record.SeriesSummary {
	var out record.SeriesSummary
	for _, key := range MetricKeys() {
		var vs []float64
		for i := range rs {
			if rs[i].Interrupted || rs[i].ExitCode == 130 {
				continue
			}
			if v := rs[i].Get(key); v != nil {
				vs = append(vs, *v)
			}
		}
		out = append(out, record.SeriesMetric{Key: key, Summary: stat.Describe(vs, key)})
	}
	return out
}

// WriteSeriesFile stores dir's series.json atomically (a reader sees the
// old file or the new one).
func WriteSeriesFile(dir string, f *record.SeriesRecord) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := config.WriteFileAtomic(filepath.Join(dir, record.SeriesFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %v", record.SeriesFile, err)
	}
	return nil
}

// ReadDirs reads the named folders as the list shows them (a run, a
// sweep or a series each; a folder that is none is left out), newest
// first.
func ReadDirs(dirs []string) []Run {
	var out []Run
	for _, d := range dirs {
		switch {
		case record.IsSweepDir(d):
			out = append(out, *ReadSweep(d))
		case record.IsSeriesDir(d):
			out = append(out, *ReadSeries(d))
		default:
			if r := readRun(d); r != nil {
				out = append(out, *r)
			}
		}
	}
	sortNewest(out)
	return out
}

// SeriesCommand is the command that repeats a series: its first run's
// command with --repeat N.
func SeriesCommand(dir string) ([]string, error) {
	r := ReadSeries(dir)
	if r.Err != nil {
		return nil, r.Err
	}
	if len(r.Series.Dirs) == 0 {
		return nil, fmt.Errorf("%s: the series has no run", dir)
	}
	args, err := Command(r.Series.Dirs[0])
	if err != nil {
		return nil, err
	}
	return append(args, "--repeat", fmt.Sprint(r.Series.Repeat)), nil
}
