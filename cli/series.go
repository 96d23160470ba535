package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/config"
)

// A series (spec/stats.md, `kvbench run --repeat N`): N ordinary runs of
// one config, one after another, in one folder with series.json. It runs
// headless on a terminal too: a line per run on stderr, the table of
// runs and the summary on stdout.

// seriesRunner runs one series.
type seriesRunner struct {
	cfg    *config.Config
	n      int
	now    func() time.Time
	stderr io.Writer
	quiet  bool
	dir    string
	f      *record.SeriesRecord
	// current is the run in progress (the second Ctrl-C aborts it).
	current chan *bench.Runner
}

func runSeries(cmd *cobra.Command, cfg *config.Config) error {
	if cfg.Shard().Sharded() {
		// The shards of one run share a salt: repeated, they would warm
		// each other's cache. A sharded run is repeated by a new --run-key.
		return Usagef("--repeat runs the whole config N times: drop --shard (repeat a sharded run with a new --run-key)")
	}
	set := cfg.Settings()
	s := &seriesRunner{cfg: cfg, n: set.Repeat, now: time.Now, stderr: cmd.ErrOrStderr(), quiet: set.Quiet,
		current: make(chan *bench.Runner, 1)}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan struct{})
	defer close(done)
	go func() {
		var r *bench.Runner
		n := 0
		for {
			select {
			case <-sigs:
			case r = <-s.current:
				continue
			case <-done:
				return
			}
			n++
			if n == 1 {
				s.progress("\ninterrupted: no new runs or requests; waiting for those in flight. Press Ctrl-C again to stop now.")
				cancel()
			} else if r != nil {
				r.Abort()
			}
		}
	}()
	code, err := s.run(ctx)
	if s.dir != "" {
		out := cmd.OutOrStdout()
		if set.Format == "json" {
			enc := json.NewEncoder(out)
			enc.SetIndent("", "  ")
			enc.Encode(s.f)
		} else {
			WriteSeriesTable(out, s.f)
		}
		s.progress("kvbench: series in %s", s.dir)
	}
	if err != nil {
		if bench.IsUsage(err) {
			return &UsageError{Err: err}
		}
		return err
	}
	return exitCode(code)
}

func (s *seriesRunner) progress(format string, args ...any) {
	if !s.quiet {
		fmt.Fprintf(s.stderr, format+"\n", args...)
	}
}

// run runs the series and returns its exit code: 130 when interrupted,
// 4 when a record could not be written, 1 when a run had a failed
// request, else 0; err is a usage or engine problem that stopped it
// (what ran is recorded).
func (s *seriesRunner) run(ctx context.Context) (int, error) {
	// The engine checks come before the series folder, so an unavailable
	// engine leaves nothing behind.
	p, err := bench.Prepare(ctx, s.cfg.Clone())
	if err != nil {
		return 2, err
	}
	perr := p.PreflightErr
	p.Close()
	if perr != nil {
		return 3, perr
	}
	if err := s.create(); err != nil {
		return 2, &bench.UsageError{Err: err}
	}
	code := 0
	defer func() {
		s.f.Series.FinishedAt = s.now().UTC().Format(time.RFC3339)
		if werr := s.write(); werr != nil {
			fmt.Fprintf(s.stderr, "kvbench: %v\n", werr)
		}
	}()
	for i := range s.n {
		if ctx.Err() != nil {
			s.f.Series.Interrupted = true
			return 130, nil
		}
		entry, err := s.one(ctx, i)
		if err != nil {
			if bench.IsEngineUnavailable(err) {
				return 3, err
			}
			return 1, err
		}
		s.f.Runs = append(s.f.Runs, entry)
		s.f.Summary = runs.SummariseSeries(s.f.Runs)
		if werr := s.write(); werr != nil {
			return 4, werr
		}
		switch {
		case entry.ExitCode == 130:
			code = 130
		case entry.ExitCode == 4 && code != 130:
			code = 4
		case entry.ExitCode != 0 && code == 0:
			code = 1
		}
		if entry.ExitCode == 130 || ctx.Err() != nil {
			s.f.Series.Interrupted = true
			return 130, nil
		}
	}
	return code, nil
}

// one runs the i-th run (0-based) in runs/NN.
func (s *seriesRunner) one(ctx context.Context, i int) (record.SeriesRun, error) {
	cfg := s.cfg.Clone()
	if err := cfg.SetOutputDir(filepath.Join(s.dir, record.SeriesRunsDir)); err != nil {
		return record.SeriesRun{}, &bench.UsageError{Err: err}
	}
	p, err := bench.Prepare(ctx, cfg)
	if err != nil {
		return record.SeriesRun{}, err
	}
	id := record.SeriesRunID(i)
	p.RunFolder = id
	r, err := bench.New(ctx, p)
	if err != nil {
		p.Close()
		return record.SeriesRun{}, err
	}
	s.current <- r
	s.progress("run %d/%d (%s) started", i+1, s.n, id)
	go func() {
		for range r.Events() {
		}
	}()
	fin := r.Run(ctx)
	if fin.RecordError != "" {
		fmt.Fprintf(s.stderr, "kvbench: run %s: %s\n", id, fin.RecordError)
	}
	// The run's requests are read back after it ended, even when the
	// series was interrupted: what it measured is recorded.
	entry, err := runs.SeriesEntry(r.Dir(), id, fin.ExitCode, fin.Summary)
	if err != nil {
		return entry, err
	}
	s.progress("run %d/%d (%s) done: %d requests, %d failed, TTFT p50 %s ms, hit ratio %s", i+1, s.n, id,
		entry.TotalRequests, entry.FailedRequests, optNum(entry.Get("ttft_p50")), optPct(entry.Get("hit_ratio")))
	return entry, nil
}

// create makes the series folder <output-dir>/<stamp>-series-<workload>[-<name>].
func (s *seriesRunner) create() error {
	set := s.cfg.Settings()
	started := s.now()
	dir, id, err := record.NewOutputFolder(set.OutputDir, "series", set.Workload, set.Name, started)
	if err != nil {
		return err
	}
	s.dir = dir
	s.f = &record.SeriesRecord{SchemaVersion: 1, Tool: record.Tool{Name: "kvbench", Version: bench.Version},
		Series: record.SeriesInfo{ID: id, Name: set.Name, StartedAt: started.UTC().Format(time.RFC3339), Repeat: s.n},
		Runs:   []record.SeriesRun{}, Summary: runs.SummariseSeries(nil)}
	return s.write()
}

// write stores series.json (after every run, so a crash keeps what ran).
func (s *seriesRunner) write() error { return runs.WriteSeriesFile(s.dir, s.f) }

// seriesColumns are the figures the table of runs shows.
var seriesColumns = []string{"ttft_p50", "ttft_p99", "tpot_p50", "e2el_p50", "output_throughput", "hit_ratio", "error_rate"}

// WriteSeriesTable prints a series: a table of its runs, then the
// summary of every metric (median, mean, stdev, 95% interval of the
// median, runs).
func WriteSeriesTable(w io.Writer, f *record.SeriesRecord) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Series %s: %d of %d runs", f.Series.ID, len(f.Runs), f.Series.Repeat)
	if f.Series.Interrupted {
		b.WriteString(" (interrupted)")
	}
	b.WriteString("\n\n")
	head := []string{"run", "exit", "requests", "failed"}
	for _, k := range seriesColumns {
		head = append(head, k)
	}
	rows := [][]string{head}
	for i := range f.Runs {
		r := &f.Runs[i]
		row := []string{r.RunID, strconv.Itoa(r.ExitCode), strconv.Itoa(r.TotalRequests), strconv.Itoa(r.FailedRequests)}
		for _, k := range seriesColumns {
			m, _ := runs.LookupMetric(k)
			row = append(row, plainValue(r.Get(k), m.Unit))
		}
		rows = append(rows, row)
	}
	right := []bool{false, true, true, true}
	for range seriesColumns {
		right = append(right, true)
	}
	writeColumns(&b, rows, right)
	b.WriteString("\nSummary over the runs (95% interval of the median: 10,000 bootstrap resamples)\n")
	rows = [][]string{{"metric", "median", "mean", "stdev", "95% interval", "runs"}}
	for _, m := range f.Summary {
		def, _ := runs.LookupMetric(strings.SplitN(m.Key, ":", 2)[0])
		if m.N == 0 {
			continue // a state no run had
		}
		ci := "-"
		if m.CI95 != nil {
			ci = "[" + plainValue(&m.CI95[0], def.Unit) + ", " + plainValue(&m.CI95[1], def.Unit) + "]"
		}
		rows = append(rows, []string{m.Key, plainValue(m.Median, def.Unit), plainValue(m.Mean, def.Unit), plainValue(m.Stdev, def.Unit), ci,
			strconv.Itoa(m.N)})
	}
	writeColumns(&b, rows, []bool{false, true, true, true, true, true})
	_, err := io.WriteString(w, b.String())
	return err
}

// plainValue is a value without its unit (the column names it): a share
// as a percentage.
func plainValue(v *float64, unit string) string {
	if v == nil {
		return "n/a"
	}
	if unit == "%" {
		return fmt.Sprintf("%.2f%%", *v*100)
	}
	return fmt.Sprintf("%.2f", *v)
}

func optPct(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", *p*100)
}

func writeColumns(b *strings.Builder, rows [][]string, right []bool) {
	runs.WriteColumns(b, rows, runs.ColumnWidths(rows, len(right)), right)
}
