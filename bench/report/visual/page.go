package visual

import (
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/bench/runs"
)

// cell is one table cell: the text shown and, for a number, the exact
// value as the JSON file holds it (shown on hover).
type cell struct {
	Text, Exact string
	Num         bool
	Class       string
}

type table struct {
	Title string
	Wide  bool // cells do not wrap (the table scrolls instead)
	ID    string
	Head  []string
	Rows  [][]cell
}

type figure struct {
	Name, Title string
	SVG         template.HTML
	Notes       []string
}

type missingChart struct{ Name, Why string }

type runSummary struct {
	ID     string
	Source string // the file the tables show
	Open   bool
	Tables []table
}

type page struct {
	Title    string
	Kind     string
	Header   table
	Warnings []string
	// Lead are the tables right under the header: a comparison's tested
	// rows.
	Lead    []table
	Figures []figure
	Missing []missingChart
	Tables  []table // comparison deltas, sweep cells
	Runs    []runSummary
	Version string
}

// HTML writes the report as one self-contained HTML document: inline CSS
// and SVG, no script, nothing fetched (a Content-Security-Policy forbids
// it), light and dark through prefers-color-scheme.
func (r *Report) HTML(w io.Writer) error {
	pg := &page{}
	var doc *runDoc
	switch {
	case len(r.Series) > 0:
		// A series is read by its tables: its runs each have a report.
		r.seriesPage(pg)
		return pageTmpl.Execute(w, pg)
	case len(r.Sweeps) > 0:
		r.sweepPage(pg)
	case len(r.Runs) == 1:
		doc = r.singlePage(pg)
	default:
		if err := r.runPage(pg); err != nil {
			return err
		}
	}
	order := Charts
	if len(r.Sweeps) > 0 {
		// A sweep is read by its curve first; the cells' charts follow.
		order = append([]string{ChartSweepCurve}, Charts[:len(Charts)-1]...)
	}
	for _, name := range order {
		c, err := r.build(name)
		var nd errNoData
		switch {
		case errors.As(err, &nd):
			if r.expects(name) {
				pg.Missing = append(pg.Missing, missingChart{name, string(nd)})
			}
			continue
		case err != nil:
			return err
		}
		b, err := c.render(true)
		if err != nil {
			return err
		}
		pg.Figures = append(pg.Figures, figure{Name: name, Title: c.title, SVG: template.HTML(b), Notes: c.notes})
	}
	if doc != nil {
		return runTmpl.Execute(w, doc)
	}
	return pageTmpl.Execute(w, pg)
}

// expects reports whether a reader of this report would look for chart
// name, so its absence needs a word: the engine's hit rate always (it
// says how to get it), a trace chart only for trace replays.
func (r *Report) expects(name string) bool {
	switch name {
	case ChartSweepCurve:
		return len(r.Sweeps) > 0
	case ChartTTFTCDF, ChartTTFTTime, ChartThroughputTime, ChartITLHist, ChartHitTime:
		// Several sweeps are compared by their curves alone.
		return len(r.chartRuns()) > 0 || len(r.Sweeps) == 0
	case ChartTraceCached:
		for _, x := range r.chartRuns() {
			if x.Workload == "trace-replay" {
				return true
			}
		}
		return false
	}
	return true
}

func (r *Report) runPage(pg *page) error {
	rs := r.Runs
	var ids []string
	for _, x := range rs {
		ids = append(ids, x.ID)
	}
	pg.Kind = "Run"
	if len(rs) > 1 {
		pg.Kind = "Comparison"
	}
	pg.Title = "kvbench " + strings.ToLower(pg.Kind) + ": " + strings.Join(ids, " vs ")
	pg.Version = rs[0].ToolVersion
	h := table{ID: "header"}
	if len(rs) > 1 {
		h.Head = []string{""}
	}
	rows := []struct {
		label string
		get   func(*Run) string
	}{
		{"Run id", func(x *Run) string { return x.ID }},
		{"Name", func(x *Run) string { return x.Name }},
		{"Workload", func(x *Run) string { return x.Workload }},
		{"Model", func(x *Run) string { return x.Model }},
		{"Engine URL", func(x *Run) string { return x.EngineURL }},
		{"Tool version", func(x *Run) string { return x.ToolVersion }},
		{"Started", func(x *Run) string { return x.StartedAt }},
		{"Finished", func(x *Run) string { return x.FinishedAt }},
		{"Status", func(x *Run) string { return x.status() }},
		{"Delivered load", func(x *Run) string { return x.loadVerdict() }},
		{"Client", func(x *Run) string { return x.clientVerdict() }},
	}
	if len(rs) > 1 {
		for i, x := range rs {
			h.Head = append(h.Head, fmt.Sprintf("%s (%s)", string(rune('A'+i%26)), runLook(i).name))
			_ = x
		}
	}
	merged := false
	for _, x := range rs {
		merged = merged || len(x.MergedFrom) > 0
	}
	if merged {
		rows = append(rows, struct {
			label string
			get   func(*Run) string
		}{"Merged from", func(x *Run) string { return strings.Join(x.MergedFrom, ", ") }})
	}
	for _, row := range rows {
		cells := []cell{{Text: row.label, Class: "label"}}
		for _, x := range rs {
			v := row.get(x)
			if v == "" {
				v = "-"
			}
			cells = append(cells, cell{Text: v})
		}
		h.Rows = append(h.Rows, cells)
	}
	pg.Header = h
	for _, x := range rs {
		pg.Warnings = append(pg.Warnings, x.warnings(len(rs) > 1)...)
	}
	if len(rs) > 1 {
		subj := make([]*runs.Subject, len(rs))
		for i, x := range rs {
			var err error
			if subj[i], err = subjectOf(x); err != nil {
				return err
			}
		}
		lead, notes := testedTables(subj)
		pg.Lead, pg.Warnings = lead, append(notes, pg.Warnings...)
		pg.Tables = append(pg.Tables, deltaTable(rs))
	}
	for i, x := range rs {
		src := "bench_summary.json"
		if x.summary == nil {
			src = "computed from requests.jsonl"
		}
		pg.Runs = append(pg.Runs, runSummary{ID: x.ID, Source: src, Open: i == 0 && len(rs) == 1, Tables: summaryTables(x)})
	}
	return nil
}

func (x *Run) status() string {
	switch {
	case !x.Complete:
		return "incomplete (no bench_summary.json: figures computed from requests.jsonl)"
	case x.Interrupted:
		return "interrupted"
	case x.ExitCode != 0:
		return fmt.Sprintf("failed (exit code %d)", x.ExitCode)
	}
	return "ok"
}

func (x *Run) loadVerdict() string {
	switch {
	case x.Delivered == nil:
		return "not judged (the summary has no load block)"
	case *x.Delivered:
		return "delivered"
	}
	s := "NOT delivered"
	if len(x.DegradedReasons) > 0 {
		s += ": " + strings.Join(x.DegradedReasons, "; ")
	}
	return s
}

func (x *Run) clientVerdict() string {
	if !x.Overloaded {
		return "not overloaded"
	}
	s := "OVERLOADED"
	if len(x.OverloadReasons) > 0 {
		s += ": " + strings.Join(x.OverloadReasons, "; ")
	}
	return s
}

func (x *Run) warnings(named bool) []string {
	var out []string
	who := ""
	if named {
		who = x.ID + ": "
	}
	if x.Overloaded {
		out = append(out, who+"the client was overloaded, latencies may be inflated"+because(x.OverloadReasons))
	}
	if x.Delivered != nil && !*x.Delivered {
		out = append(out, who+"the load it claims was not delivered"+because(x.DegradedReasons))
	}
	if !x.Complete {
		out = append(out, who+"the run did not finish (no bench_summary.json); its figures come from requests.jsonl.")
	}
	if x.Torn > 0 {
		out = append(out, fmt.Sprintf("%s%d line(s) of requests.jsonl could not be read and were skipped.", who, x.Torn))
	}
	return out
}

// deltaTable sets every run against the first: each figure's value per
// run, and for the others the relative delta with better/worse in words.
func deltaTable(rs []*Run) table {
	t := table{Title: "Deltas against " + rs[0].ID, ID: "deltas", Head: []string{"Figure", "A"}}
	cmps := make([]*runs.Comparison, 0, len(rs)-1)
	for i, x := range rs[1:] {
		cmps = append(cmps, runs.Compare(rs[0].detail, x.detail))
		l := string(rune('B' + i%25))
		t.Head = append(t.Head, l, "Δ "+l+" vs A")
	}
	for fi, f := range cmps[0].Figures {
		row := []cell{{Text: f.LabelWithUnit(), Class: "label"}, numCell(runs.FormatValue(f.A, f.Unit), f.A)}
		for _, c := range cmps {
			if fi >= len(c.Figures) {
				break
			}
			g := c.Figures[fi]
			d := runs.FormatDelta(g)
			if m := runs.VerdictMark(g.Verdict); m != "" {
				d += " " + m
			}
			row = append(row, numCell(runs.FormatValue(g.B, g.Unit), g.B), cell{Text: d, Num: true, Class: verdictClass(g.Verdict)})
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func verdictClass(v runs.Verdict) string {
	switch v {
	case runs.Better:
		return "better"
	case runs.Worse:
		return "worse"
	}
	return ""
}

func numCell(text string, v *float64) cell {
	c := cell{Text: text, Num: true}
	if v != nil {
		c.Exact = strconv.FormatFloat(*v, 'g', -1, 64)
	}
	return c
}

// summaryTables are bench_summary.json's blocks as tables, in the file's
// order and with its values (the header shows schema_version, tool and
// run). A run without a summary shows the figures computed from its
// requests, through the same encoder.
func summaryTables(x *Run) []table {
	s := x.summary
	if s == nil {
		s = x.computedSummary()
	}
	if s == nil || s.kind != 'o' {
		return nil
	}
	var out []table
	for i, k := range s.keys {
		switch k {
		case "schema_version", "tool", "run":
			continue
		}
		out = append(out, blockTables(k, s.vals[i])...)
	}
	return out
}

// blockTables flattens one block: nested objects become dotted keys,
// arrays of objects become tables of their own.
func blockTables(title string, n *node) []table {
	t := table{Title: title, ID: "summary-" + title, Head: []string{"key", "value"}}
	var extra []table
	var walk func(prefix string, n *node)
	walk = func(prefix string, n *node) {
		switch n.kind {
		case 'o':
			if len(n.keys) == 0 && prefix != "" {
				t.Rows = append(t.Rows, []cell{{Text: prefix, Class: "label"}, {Text: "{}"}})
			}
			for i, k := range n.keys {
				key := k
				if prefix != "" {
					key = prefix + "." + k
				}
				walk(key, n.vals[i])
			}
		case 'a':
			if objectArray(n) {
				name := title
				if prefix != "" {
					name += "." + prefix
				}
				extra = append(extra, arrayTable(name, n))
				return
			}
			var parts []string
			for _, v := range n.vals {
				parts = append(parts, scalarCell(v).Text)
			}
			t.Rows = append(t.Rows, []cell{{Text: prefix, Class: "label"}, {Text: "[" + strings.Join(parts, ", ") + "]"}})
		default:
			if prefix == "" {
				prefix = title
			}
			t.Rows = append(t.Rows, []cell{{Text: prefix, Class: "label"}, scalarCell(n)})
		}
	}
	walk("", n)
	out := []table{}
	if len(t.Rows) > 0 {
		out = append(out, t)
	}
	return append(out, extra...)
}

func objectArray(n *node) bool {
	if len(n.vals) == 0 {
		return false
	}
	for _, v := range n.vals {
		if v.kind != 'o' {
			return false
		}
	}
	return true
}

// arrayTable is an array of objects as rows, columns in first-seen key
// order; nested values are shown as compact JSON-like text.
func arrayTable(title string, n *node) table {
	t := table{Title: title, ID: "summary-" + title, Wide: true}
	idx := map[string]int{}
	for _, v := range n.vals {
		for _, k := range v.keys {
			if _, ok := idx[k]; !ok {
				idx[k] = len(t.Head)
				t.Head = append(t.Head, k)
			}
		}
	}
	for _, v := range n.vals {
		row := make([]cell, len(t.Head))
		for i := range row {
			row[i] = cell{Text: "-"}
		}
		for i, k := range v.keys {
			row[idx[k]] = scalarCell(v.vals[i])
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// scalarCell shows a JSON value: numbers with 2 decimals when they have a
// fraction (the exact literal on hover), null as n/a.
func scalarCell(n *node) cell {
	switch n.kind {
	case 'z':
		return cell{Text: "n/a", Class: "na"}
	case 'n':
		c := cell{Text: n.text, Exact: n.text, Num: true}
		if f, err := strconv.ParseFloat(n.text, 64); err == nil && f != math.Trunc(f) {
			c.Text = strconv.FormatFloat(f, 'f', 2, 64)
		}
		return c
	case 's':
		// A URL never shows its credentials or query, whichever block
		// holds it.
		if strings.Contains(n.text, "://") {
			return cell{Text: StripCredentials(n.text)}
		}
		return cell{Text: n.text}
	case 'b':
		return cell{Text: n.text}
	case 'o', 'a':
		return cell{Text: compact(n)}
	}
	return cell{}
}

func compact(n *node) string {
	switch n.kind {
	case 'o':
		var parts []string
		for i, k := range n.keys {
			parts = append(parts, k+": "+compact(n.vals[i]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case 'a':
		var parts []string
		for _, v := range n.vals {
			parts = append(parts, compact(v))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case 'z':
		return "null"
	case 's':
		if strings.Contains(n.text, "://") {
			return strconv.Quote(StripCredentials(n.text))
		}
		return strconv.Quote(n.text)
	}
	return n.text
}

func because(reasons []string) string {
	if len(reasons) == 0 {
		return "."
	}
	return " (" + strings.Join(reasons, "; ") + ")."
}
