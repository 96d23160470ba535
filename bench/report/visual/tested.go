package visual

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/internal/textclean"
)

func cleanText(s string) string { return textclean.Line(s) }

// The comparison page's tested rows (spec/stats.md): every other run or
// series set against the first, per metric and cache state, with the
// cache's change said first among the warnings. A report of series
// (kvbench run --repeat) is tables alone: the runs, the summary, and
// the rows when there are two or more.

// testedTables sets each subject after the first against it: one table
// of rows each, and the cache's note as a warning when the hit ratios
// differ significantly.
func testedTables(subj []*runs.Subject) (tables []table, warnings []string) {
	for i, x := range subj[1:] {
		t := runs.CompareTested(subj[0], x, runs.DefaultAlpha)
		l := string(rune('B' + i%25))
		if t.CacheMoved {
			warnings = append(warnings, strings.Replace(t.CacheNote, " in B ", " in "+l+" ", 1))
		}
		tables = append(tables, rowsTable(t, l))
	}
	return tables, warnings
}

// rowsTable is one comparison's rows, labelled as the text labels them.
func rowsTable(t *runs.Tested, letter string) table {
	how := "request by request"
	if t.ByRuns {
		how = "run by run"
	}
	tb := table{Title: fmt.Sprintf("What changed: %s against A (%s, %s)", letter, t.A.ID, how), ID: "tested-" + strings.ToLower(letter),
		Head: []string{"Metric", "A", letter, "Δ " + letter + " vs A", "95% interval", "p", "", ""}}
	for i := range t.Rows {
		r := &t.Rows[i]
		cls := ""
		switch r.Word {
		case runs.WordBetter:
			cls = "better"
		case runs.WordWorse:
			cls = "worse"
		}
		unit := r.Def().Unit
		tb.Rows = append(tb.Rows, []cell{
			{Text: r.Label(), Class: "label"},
			numCell(runs.FormatRowValue(r.A, unit), r.A),
			numCell(runs.FormatRowValue(r.B, unit), r.B),
			{Text: runs.FormatRowDelta(r), Num: true, Class: cls},
			{Text: runs.FormatCI(r), Num: true},
			{Text: runs.FormatP(r.P), Num: true},
			{Text: r.Word, Class: cls},
			{Text: r.Note, Class: "na"},
		})
	}
	return tb
}

// subjectOf is a report's run as a side of a comparison: its detail and
// its requests' samples.
func subjectOf(x *Run) (*runs.Subject, error) {
	s, err := runs.ReadSamples(context.Background(), x.Dir)
	if err != nil {
		return nil, err
	}
	return &runs.Subject{ID: x.ID, Dir: x.Dir, Detail: x.detail, Samples: s}, nil
}

// seriesPage is the page of one or more series: a header per series,
// the tested rows against the first, each series' runs and summary.
func (r *Report) seriesPage(pg *page) {
	ss := r.Series
	var ids []string
	for _, s := range ss {
		ids = append(ids, s.ID)
	}
	pg.Kind = "Series"
	if len(ss) > 1 {
		pg.Kind = "Series comparison"
	}
	pg.Title = "kvbench " + strings.ToLower(pg.Kind) + ": " + strings.Join(ids, " vs ")
	pg.Version = ss[0].Series.Tool.Version
	h := table{ID: "header"}
	if len(ss) > 1 {
		h.Head = []string{""}
		for i := range ss {
			h.Head = append(h.Head, string(rune('A'+i%26)))
		}
	}
	rows := []struct {
		label string
		get   func(*record.SeriesRecord) string
	}{
		{"Series id", func(f *record.SeriesRecord) string { return f.Series.ID }},
		{"Name", func(f *record.SeriesRecord) string { return f.Series.Name }},
		{"Runs", func(f *record.SeriesRecord) string { return fmt.Sprintf("%d of %d", len(f.Runs), f.Series.Repeat) }},
		{"Started", func(f *record.SeriesRecord) string { return f.Series.StartedAt }},
		{"Finished", func(f *record.SeriesRecord) string { return f.Series.FinishedAt }},
		{"Status", func(f *record.SeriesRecord) string {
			switch {
			case f.Series.Interrupted:
				return "interrupted"
			case f.Series.FinishedAt == "":
				return "incomplete (still running, or stopped before series.json was finished)"
			}
			return "ok"
		}},
	}
	for _, row := range rows {
		cells := []cell{{Text: row.label, Class: "label"}}
		for _, s := range ss {
			v := cleanText(row.get(s.Series))
			if v == "" {
				v = "-"
			}
			cells = append(cells, cell{Text: v})
		}
		h.Rows = append(h.Rows, cells)
	}
	pg.Header = h
	if len(ss) > 1 {
		pg.Lead, pg.Warnings = testedTables(ss)
	}
	for _, s := range ss {
		pg.Tables = append(pg.Tables, seriesRunsTable(s), seriesSummaryTable(s))
	}
}

// seriesRunsTable lists a series' runs with their figures.
func seriesRunsTable(s *runs.Subject) table {
	keys := []string{"ttft_p50", "ttft_p99", "tpot_p50", "e2el_p50", "output_throughput", "hit_ratio", "error_rate"}
	t := table{Title: "Runs of " + s.ID, ID: "series-runs-" + s.ID, Head: []string{"Run", "Exit code", "Requests", "Failed"}}
	for _, k := range keys {
		m, _ := runs.LookupMetric(k)
		t.Head = append(t.Head, m.Label+unitSuffix(m.Unit))
	}
	for i := range s.Series.Runs {
		x := &s.Series.Runs[i]
		row := []cell{{Text: cleanText(x.RunID), Class: "label"}, {Text: strconv.Itoa(x.ExitCode), Num: true},
			{Text: strconv.Itoa(x.TotalRequests), Num: true}, {Text: strconv.Itoa(x.FailedRequests), Num: true}}
		for _, k := range keys {
			m, _ := runs.LookupMetric(k)
			row = append(row, numCell(plainFigure(x.Get(k), m.Unit), x.Get(k)))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// seriesSummaryTable is a series' summary: per metric the median, mean,
// standard deviation, 95% interval of the median and the runs.
func seriesSummaryTable(s *runs.Subject) table {
	t := table{Title: "Summary of " + s.ID + " over its runs", ID: "series-summary-" + s.ID,
		Head: []string{"Metric", "Median", "Mean", "Stdev", "95% interval of the median", "Runs"}}
	for _, m := range s.Series.Summary {
		if m.N == 0 {
			continue
		}
		name, state, _ := strings.Cut(m.Key, ":")
		def, ok := runs.LookupMetric(name)
		if !ok {
			continue
		}
		label := def.Label
		if state != "" {
			label += ", " + cleanText(state) + " requests"
		}
		ci := "-"
		if m.CI95 != nil {
			ci = "[" + plainFigure(&m.CI95[0], def.Unit) + ", " + plainFigure(&m.CI95[1], def.Unit) + "]"
		}
		t.Rows = append(t.Rows, []cell{{Text: label + unitSuffix(def.Unit), Class: "label"}, numCell(plainFigure(m.Median, def.Unit), m.Median),
			numCell(plainFigure(m.Mean, def.Unit), m.Mean), numCell(plainFigure(m.Stdev, def.Unit), m.Stdev), {Text: ci, Num: true},
			{Text: strconv.Itoa(m.N), Num: true}})
	}
	return t
}

func unitSuffix(unit string) string {
	if unit == "%" || unit == "" {
		return ""
	}
	return " (" + unit + ")"
}

// plainFigure is a value without its unit (the column names it), a share
// as a percentage; n/a for null.
func plainFigure(v *float64, unit string) string {
	if v == nil {
		return "n/a"
	}
	if unit == "%" {
		return fmt.Sprintf("%.2f%%", *v*100)
	}
	return fmt.Sprintf("%.2f", *v)
}
