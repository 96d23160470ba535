package visual

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/config"
)

// ErrUsage is what the errors of Open, SVG and the option checks are
// (errors.Is) when the user named something that does not exist: an
// unknown run, chart or format. The command exits 2 for them.
var ErrUsage = errors.New("usage")

type usageError struct{ msg string }

func (e *usageError) Error() string        { return e.msg }
func (e *usageError) Is(target error) bool { return target == ErrUsage }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// Formats are the output formats of a report.
var Formats = []string{"html", "svg"}

// CheckFormat returns a usage error naming an unknown format, or a chart
// asked for without --format svg (and the reverse).
func CheckFormat(format, chartName string) error {
	switch format {
	case "html":
		if chartName != "" {
			return usagef("--chart %s needs --format svg (an HTML report holds every chart)", chartName)
		}
	case "svg":
		if chartName == "" {
			return usagef("--format svg needs --chart NAME (one of %s)", strings.Join(Charts, ", "))
		}
		if !KnownChart(chartName) {
			return usagef("unknown chart %q (known: %s)", chartName, strings.Join(Charts, ", "))
		}
	default:
		return usagef("unknown format %q (known: %s)", format, strings.Join(Formats, ", "))
	}
	return nil
}

// Report is what one `kvbench report` renders: runs (one, or several
// compared), sweeps (one, or several whose curves are overlaid), or
// series (one, or several compared run by run).
type Report struct {
	Runs   []*Run
	Sweeps []*Sweep
	Series []*runs.Subject
}

// Open resolves each argument (a run id, a unique prefix of one, a path to
// a run folder, or a sweep folder) and reads it. An argument that names
// nothing is a usage error naming it.
func Open(runsDir string, args []string) (*Report, error) {
	if len(args) == 0 {
		return nil, usagef("name at least one run (an id, a path or a sweep folder)")
	}
	rep := &Report{}
	for _, a := range args {
		if dir, ok := runs.SweepDir(runsDir, a); ok {
			s, err := LoadSweep(dir)
			if err != nil {
				return nil, err
			}
			rep.Sweeps = append(rep.Sweeps, s)
			continue
		}
		dir, err := runs.Resolve(runsDir, a)
		if err != nil {
			if sdir, ok := runs.ResolveSeries(runsDir, a); ok {
				s, serr := runs.OpenSubject(context.Background(), runsDir, sdir)
				if serr != nil {
					return nil, serr
				}
				rep.Series = append(rep.Series, s)
				continue
			}
			if errors.Is(err, runs.ErrNotFound) {
				return nil, usagef("unknown run %q: %v", a, err)
			}
			return nil, err
		}
		r, err := LoadRun(dir)
		if err != nil {
			return nil, err
		}
		rep.Runs = append(rep.Runs, r)
	}
	if len(rep.Runs) > 0 && len(rep.Sweeps) > 0 {
		return nil, usagef("a report shows runs or sweeps, not both: %s is a sweep", rep.Sweeps[0].ID)
	}
	if len(rep.Series) > 0 && len(rep.Runs)+len(rep.Sweeps) > 0 {
		return nil, usagef("a report shows series, runs or sweeps, one kind: %s is a series", rep.Series[0].ID)
	}
	return rep, nil
}

// chartRuns are the runs the per-request charts draw: the report's runs,
// or a single sweep's cells.
func (r *Report) chartRuns() []*Run {
	if len(r.Runs) > 0 {
		return r.Runs
	}
	if len(r.Sweeps) == 1 {
		return r.Sweeps[0].runs
	}
	return nil
}

// build draws one chart; errNoData when these runs have nothing for it.
func (r *Report) build(name string) (*chart, error) {
	if name == ChartSweepCurve {
		if len(r.Sweeps) == 0 {
			return nil, errNoData("not a sweep (name a sweep folder)")
		}
		return sweepCurve(r.Sweeps)
	}
	rs := r.chartRuns()
	if len(rs) == 0 {
		return nil, errNoData("no run folder to draw from")
	}
	switch name {
	case ChartTTFTCDF:
		return ttftCDF(rs)
	case ChartTTFTTime:
		return ttftTime(rs)
	case ChartThroughputTime:
		return throughputTime(rs)
	case ChartITLHist:
		return itlHist(rs)
	case ChartHitTime:
		return hitTime(rs)
	case ChartTraceCached:
		return traceCached(rs)
	}
	return nil, usagef("unknown chart %q (known: %s)", name, strings.Join(Charts, ", "))
}

// SVG writes one chart as a standalone SVG document (white background).
// An unknown chart, or one these runs have no data for, is a usage error
// naming it and saying why.
func (r *Report) SVG(w io.Writer, name string) error {
	if !KnownChart(name) {
		return usagef("unknown chart %q (known: %s)", name, strings.Join(Charts, ", "))
	}
	c, err := r.build(name)
	var nd errNoData
	if errors.As(err, &nd) {
		return usagef("chart %s: %s", name, nd)
	}
	if err != nil {
		return err
	}
	b, err := c.render(false)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// FirstID is the id of the report's first run or sweep.
func (r *Report) ids() []string {
	var out []string
	for _, x := range r.Runs {
		out = append(out, x.ID)
	}
	for _, s := range r.Sweeps {
		out = append(out, s.ID)
	}
	for _, s := range r.Series {
		out = append(out, s.ID)
	}
	return out
}

// DefaultPath is where the report goes without --output (spec/report.md):
// report.html inside the folder of a single run or sweep, else
// report-<first>-vs-<second>.html in the current directory. A chart is
// <chart>.svg, in the same places.
func (r *Report) DefaultPath(format, chartName string) string {
	ext := "html"
	base := "report"
	if format == "svg" {
		ext, base = "svg", chartName
	}
	ids := r.ids()
	if len(ids) == 1 {
		dir := ""
		switch {
		case len(r.Runs) == 1:
			dir = r.Runs[0].Dir
		case len(r.Series) == 1:
			dir = r.Series[0].Dir
		default:
			dir = r.Sweeps[0].Dir
		}
		return filepath.Join(dir, base+"."+ext)
	}
	return fmt.Sprintf("%s-%s-vs-%s.%s", base, ids[0], ids[1], ext)
}

// Render writes the report in format (html, or svg with chartName) to w.
func (r *Report) Render(w io.Writer, format, chartName string) error {
	if err := CheckFormat(format, chartName); err != nil {
		return err
	}
	if format == "svg" {
		return r.SVG(w, chartName)
	}
	return r.HTML(w)
}

// WriteFile renders the report and writes it to path through a temporary
// file and a rename, so a reader never sees half a report.
func (r *Report) WriteFile(path, format, chartName string) error {
	var buf bytes.Buffer
	if err := r.Render(&buf, format, chartName); err != nil {
		return err
	}
	if err := config.WriteFileAtomic(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// Write is the whole `kvbench report` with default options: it opens the
// named runs, writes the HTML report to its default path and returns the
// path (the explorer's `o`).
func Write(runsDir string, args []string) (string, error) {
	r, err := Open(runsDir, args)
	if err != nil {
		return "", err
	}
	path := r.DefaultPath("html", "")
	if err := r.WriteFile(path, "html", ""); err != nil {
		return "", err
	}
	return path, nil
}
