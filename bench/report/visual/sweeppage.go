package visual

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kvbench/kvbench/bench/record"
	bsweep "github.com/kvbench/kvbench/bench/sweep"
)

// computedSummary is the summary runs.Load computed for a run without
// bench_summary.json, as an ordered JSON value.
func (x *Run) computedSummary() *node {
	if x.detail == nil || x.detail.Summary == nil {
		return nil
	}
	b, err := json.Marshal(x.detail.Summary)
	if err != nil {
		return nil
	}
	n, err := parseOrdered(b)
	if err != nil {
		return nil
	}
	return n
}

// field is one row of a sweep page's header.
type field struct {
	label string
	get   func(*Sweep) string
}

func (r *Report) sweepPage(pg *page) {
	ss := r.Sweeps
	var ids []string
	for _, s := range ss {
		ids = append(ids, s.ID)
	}
	pg.Kind = "Sweep"
	if len(ss) > 1 {
		pg.Kind = "Sweep comparison"
	}
	pg.Title = "kvbench " + strings.ToLower(pg.Kind) + ": " + strings.Join(ids, " vs ")
	pg.Version = ss[0].ToolVersion
	h := table{ID: "header"}
	if len(ss) > 1 {
		h.Head = []string{""}
	}
	if len(ss) > 1 {
		for i := range ss {
			h.Head = append(h.Head, fmt.Sprintf("%s (%s)", string(rune('A'+i%26)), runLook(i).name))
		}
	}
	first := func(s *Sweep) *Run {
		if len(s.runs) > 0 {
			return s.runs[0]
		}
		return nil
	}
	fields := []field{
		{"Sweep id", func(s *Sweep) string { return s.ID }},
		{"Name", func(s *Sweep) string { return s.Name }},
		{"Workload", func(s *Sweep) string {
			if f := first(s); f != nil {
				return f.Workload
			}
			return ""
		}},
		{"Model", func(s *Sweep) string {
			if f := first(s); f != nil {
				return f.Model
			}
			return ""
		}},
		{"Engine URL", func(s *Sweep) string {
			if f := first(s); f != nil {
				return f.EngineURL
			}
			return ""
		}},
		{"Tool version", func(s *Sweep) string { return s.ToolVersion }},
		{"Started", func(s *Sweep) string { return s.StartedAt }},
		{"Finished", func(s *Sweep) string { return s.FinishedAt }},
		{"Dimension", func(s *Sweep) string { return s.Dimension }},
		{"Cells", func(s *Sweep) string { return fmt.Sprintf("%d (%d run folders read)", len(s.Cells), len(s.runs)) }},
		{"Status", func(s *Sweep) string {
			if s.Interrupted {
				return "interrupted"
			}
			return "finished"
		}},
		{"Delivered load", func(s *Sweep) string {
			var bad []string
			for _, c := range s.Cells {
				if c.Delivered != nil && !*c.Delivered {
					bad = append(bad, cellLabel(s.Dimension, c.Value))
				}
			}
			if len(bad) == 0 {
				return "every cell delivered its load"
			}
			return "NOT delivered in: " + strings.Join(bad, ", ")
		}},
		{"Client", func(s *Sweep) string {
			var bad []string
			for _, x := range s.runs {
				if x.Overloaded {
					bad = append(bad, x.Label())
				}
			}
			if len(bad) == 0 {
				return "not overloaded"
			}
			return "OVERLOADED in: " + strings.Join(bad, ", ")
		}},
		{"Cells by status", func(s *Sweep) string {
			count := map[string]int{}
			for _, c := range s.Cells {
				count[s.Status(c)]++
			}
			var parts []string
			for _, st := range []string{record.CellPass, record.CellFail, record.CellNotSustained, record.CellNotDelivered,
				record.CellCut, record.CellInterrupted, record.CellDone} {
				if n := count[st]; n > 0 {
					parts = append(parts, fmt.Sprintf("%d %s", n, st))
				}
			}
			return strings.Join(parts, ", ")
		}},
	}
	// The result's row: a search's capacity, or a list's highest passing
	// value (a list is no search: it only says which of its values
	// passed); only delivered passing cells count.
	capLabel := "Highest passing value (list)"
	for _, s := range ss {
		if s.Search {
			capLabel = "Capacity (search)"
		}
	}
	if ss[0].workingSet() {
		// What the sweep found beside what the engine declared, in the
		// text summary's words (bench/sweep.WorkingSetLines).
		fields = append(fields, wsFields(ss)...)
	} else {
		fields = append(fields, field{capLabel, capValue(ss)})
	}
	for _, f := range fields {
		cells := []cell{{Text: f.label, Class: "label"}}
		for _, s := range ss {
			v := f.get(s)
			if v == "" {
				v = "-"
			}
			cells = append(cells, cell{Text: v})
		}
		h.Rows = append(h.Rows, cells)
	}
	pg.Header = h
	for _, s := range ss {
		var undelivered, overloaded []string
		for _, c := range s.Cells {
			if c.Delivered != nil && !*c.Delivered {
				undelivered = append(undelivered, cellLabel(s.Dimension, c.Value))
			}
		}
		for _, x := range s.runs {
			if x.Overloaded {
				overloaded = append(overloaded, x.Label())
			}
		}
		who := ""
		if len(ss) > 1 {
			who = s.ID + ": "
		}
		if len(undelivered) > 0 {
			pg.Warnings = append(pg.Warnings, fmt.Sprintf("%sthe load was not delivered in %s %s; their latencies understate what that load would cost.",
				who, plural(len(undelivered), "cell", "cells"), strings.Join(undelivered, ", ")))
		}
		if len(overloaded) > 0 {
			pg.Warnings = append(pg.Warnings, fmt.Sprintf("%sthe client was overloaded in %s %s, latencies may be inflated.",
				who, plural(len(overloaded), "cell", "cells"), strings.Join(overloaded, ", ")))
		}
		if ns := s.CellsWith(record.CellNotSustained); len(ns) > 0 {
			pg.Warnings = append(pg.Warnings, fmt.Sprintf("%sthe engine did not sustain the load in %s %s: its queue grew through the cell, so a longer cell would have failed; they count as fails.",
				who, plural(len(ns), "cell", "cells"), strings.Join(ns, ", ")))
		}
		if cut := s.CellsWith(record.CellCut); len(cut) > 0 {
			pg.Warnings = append(pg.Warnings, fmt.Sprintf("%sthe run record of %s %s could not be written completely (disk full or I/O error): the sweep stopped there.",
				who, plural(len(cut), "cell", "cells"), strings.Join(cut, ", ")))
		}
		if cells := s.summary.get("cells"); cells != nil && objectArray(cells) {
			t := arrayTable("cells", cells)
			t.Title = "Cells of " + s.ID
			t.ID = "sweep-cells-" + s.ID
			pg.Tables = append(pg.Tables, t)
		}
		var rest []table
		for i, k := range s.summary.keys {
			if k == "sweep" || k == "result" {
				rest = append(rest, blockTables(k, s.summary.vals[i])...)
			}
		}
		pg.Runs = append(pg.Runs, runSummary{ID: s.ID, Source: record.SweepFile, Open: len(ss) == 1, Tables: rest})
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// capValue is a load sweep's result row: a search's capacity, or a
// list's highest passing value.
func capValue(ss []*Sweep) func(*Sweep) string {
	return func(s *Sweep) string {
		und := s.UndeliveredText()
		if s.MaxValue == nil {
			switch {
			case !s.HasSLO && s.GoodputTarget == nil:
				return "n/a: no --slo"
			case und != "":
				return "no delivered value passed; not delivered, so not judged: " + und
			}
			return "no value passed"
		}
		g := "n/a"
		if s.GoodFractionAtMax != nil {
			g = fmtNum(*s.GoodFractionAtMax)
		}
		out := fmt.Sprintf("%s (good fraction %s)", cellLabel(s.Dimension, *s.MaxValue), g)
		if und != "" {
			out = "at least " + out + "; not delivered, so not judged: " + und
		}
		if len(ss) > 1 {
			out += map[bool]string{true: " (search)", false: " (list)"}[s.Search]
		}
		return out
	}
}

// wsFields are a working-set sweep's result rows, as the text summary
// words them ("capacity (...): 166000 tokens (16.6 GB)   declared: ..."):
// the label before the first ": ", the figures after it.
func wsFields(ss []*Sweep) []field {
	lines := make([][]string, len(ss))
	n := 0
	for i, s := range ss {
		if f := s.wsFile(); f != nil {
			lines[i] = bsweep.WorkingSetLines(f)
		}
		n = max(n, len(lines[i]))
	}
	var out []field
	for k := range n {
		label := ""
		for _, l := range lines {
			if k < len(l) {
				label, _, _ = strings.Cut(l[k], ": ")
				break
			}
		}
		out = append(out, field{capitalise(label), func(s *Sweep) string {
			for i := range ss {
				if ss[i] == s && k < len(lines[i]) {
					_, v, _ := strings.Cut(lines[i][k], ": ")
					// The text summary's column gap, as HTML shows it.
					return strings.ReplaceAll(v, "   ", "; ")
				}
			}
			return ""
		}})
	}
	return out
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
