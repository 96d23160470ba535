package results

import (
	"cmp"
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/table"
	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
)

// column is one column of the runs table.
type column struct {
	title    string
	min      int  // narrowest useful width
	flex     bool // takes a share of spare width
	right    bool // numbers: right-aligned
	priority int  // lower is kept first when the screen is narrow
	value    func(r *runs.Run) string
	compare  func(a, b *runs.Run) int // nil: not sortable
}

const startedLayout = "2006-01-02 15:04"

// ms is a TTFT figure, n/a when no request had a first token.
func ms(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", *v)
}

func hit(r *runs.Run) string {
	if r.HitRatio == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f", *r.HitRatio*100)
}

func started(r *runs.Run) string {
	if r.StartedAt.IsZero() {
		return "-"
	}
	return r.StartedAt.Local().Format(startedLayout)
}

// startedIn is the started time in w cells: without the year when the
// full time does not fit.
func startedIn(r *runs.Run, w int) string {
	if r.StartedAt.IsZero() || w >= len(startedLayout) {
		return started(r)
	}
	return r.StartedAt.Local().Format(shortStarted)
}

func nilLast(a, b *float64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return cmp.Compare(*a, *b)
}

// nameWithShards is the run's name, with the shard count of a merged run.
func nameWithShards(r *runs.Run) string {
	if n := r.ShardNote(); n != "" {
		return strings.TrimPrefix(r.Name+" ["+n+"]", " ")
	}
	return orDash(r.Name)
}

func fold(a, b string) int { return cmp.Compare(strings.ToLower(a), strings.ToLower(b)) }

// markColumn is the cursor and A/B mark column, always shown, never sorted.
const markColumn = 0

// Column indexes used by name. A sweep's description spans the figure
// columns, OK/Fail to Out tok/s.
const (
	startedColumn  = 1
	nameColumn     = 2
	workloadColumn = 3
	okFailColumn   = 6
	outColumn      = 11
)

// shortStarted is the started time when the full one does not fit.
const shortStarted = "01-02 15:04"

var columns = []column{
	{title: "", min: 2, priority: 0},
	{title: "Started", min: len(shortStarted), priority: 1, value: started,
		compare: func(a, b *runs.Run) int { return a.StartedAt.Compare(b.StartedAt) }},
	{title: "Name", min: 8, flex: true, priority: 9, value: nameWithShards,
		compare: func(a, b *runs.Run) int { return fold(a.Name, b.Name) }},
	{title: "Workload", min: 10, flex: true, priority: 2, value: func(r *runs.Run) string { return orDash(r.Workload) },
		compare: func(a, b *runs.Run) int { return fold(a.Workload, b.Workload) }},
	{title: "Model", min: 10, flex: true, priority: 11, value: func(r *runs.Run) string { return orDash(r.Model) },
		compare: func(a, b *runs.Run) int { return fold(a.Model, b.Model) }},
	{title: "Engine", min: 10, flex: true, priority: 12, value: func(r *runs.Run) string { return orDash(r.EngineHost()) },
		compare: func(a, b *runs.Run) int { return fold(a.EngineHost(), b.EngineHost()) }},
	{title: "OK/Fail", min: 8, right: true, priority: 7,
		value: func(r *runs.Run) string {
			return fmt.Sprintf("%d/%d", r.TotalRequests-r.FailedRequests, r.FailedRequests)
		},
		compare: func(a, b *runs.Run) int {
			return cmp.Or(cmp.Compare(a.FailedRequests, b.FailedRequests), cmp.Compare(a.TotalRequests, b.TotalRequests))
		}},
	{title: "TTFT ms", min: 8, right: true, priority: 4, value: func(r *runs.Run) string { return ms(r.MeanTTFTms) },
		compare: func(a, b *runs.Run) int { return nilLast(a.MeanTTFTms, b.MeanTTFTms) }},
	{title: "p99 ms", min: 8, right: true, priority: 10, value: func(r *runs.Run) string { return ms(r.P99TTFTms) },
		compare: func(a, b *runs.Run) int { return nilLast(a.P99TTFTms, b.P99TTFTms) }},
	// What a KV-cache run is for, kept before the throughput on a narrow
	// terminal: the hit ratio and the workload's verdict.
	{title: "Hit %", min: 6, right: true, priority: 5, value: hit,
		compare: func(a, b *runs.Run) int { return nilLast(a.HitRatio, b.HitRatio) }},
	{title: "Verdict", min: 7, priority: 6, value: verdict,
		compare: func(a, b *runs.Run) int { return cmp.Compare(verdictRank(a), verdictRank(b)) }},
	{title: "Out tok/s", min: 10, right: true, priority: 8, value: func(r *runs.Run) string { return fmt.Sprintf("%.1f", r.OutputThroughput) },
		compare: func(a, b *runs.Run) int { return cmp.Compare(a.OutputThroughput, b.OutputThroughput) }},
	{title: "Status", min: 6, priority: 3, value: func(r *runs.Run) string { return string(r.Status()) },
		compare: func(a, b *runs.Run) int { return cmp.Compare(r0(a.Status()), r0(b.Status())) }},
}

// verdict is the workload's verdict on its expectation, in the words
// the summary uses ("met", "NOT MET", "unknown"), "-" without one.
func verdict(r *runs.Run) string {
	if r.Verdict == nil {
		return "-"
	}
	return record.VerdictText(*r.Verdict)
}

// verdictRank sorts met, unknown, not met, then runs without a verdict.
func verdictRank(r *runs.Run) int {
	if r.Verdict == nil {
		return 3
	}
	switch *r.Verdict {
	case record.VerdictMet:
		return 0
	case record.VerdictNotMet:
		return 2
	}
	return 1
}

func r0(s runs.Status) string { return string(s) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cellPad is the space after every cell.
const cellPad = 1

// colSpec is what fitting a column needs.
type colSpec struct {
	min      int
	flex     bool
	priority int
	maxFlex  int // widest a flexible column grows
}

// fitColumns picks the columns that fit width, most important (lowest
// priority) first, the first column always, and shares the spare width
// among the flexible ones. It returns the indexes of the shown columns in
// their order and their widths; cellPad separates cells.
func fitColumns(specs []colSpec, width int) (shown []int, widths []int) {
	order := make([]int, len(specs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return specs[order[a]].priority < specs[order[b]].priority })
	keep := make([]bool, len(specs))
	used := 0
	for _, i := range order {
		w := specs[i].min + cellPad
		if used+w > width && i != 0 {
			continue
		}
		keep[i] = true
		used += w
	}
	nflex := 0
	for i, c := range specs {
		if keep[i] {
			shown = append(shown, i)
			widths = append(widths, c.min)
			if c.flex {
				nflex++
			}
		}
	}
	spare := width - used
	for k, i := range shown {
		if specs[i].flex && spare > 0 && nflex > 0 {
			add := min(spare/nflex, specs[i].maxFlex-specs[i].min)
			widths[k] += max(add, 0)
		}
	}
	return shown, widths
}

// layout fits the runs table's columns to width and to what the runs
// hold: a column is as wide as its widest value (the text columns cut
// at 32), a Name or Model column no run fills is the last to be shown,
// and the started time drops its year when the full one does not fit.
func layout(width int, rs []runs.Run) (shown []int, widths []int) {
	specs := make([]colSpec, len(columns))
	for i, c := range columns {
		specs[i] = colSpec{min: c.min, flex: c.flex, priority: c.priority, maxFlex: c.min}
		if c.value == nil {
			continue
		}
		need := len([]rune(c.title)) + 1 // the sort arrow
		empty := true
		for k := range rs {
			v := c.value(&rs[k])
			if i == startedColumn {
				v = startedLayout
			}
			if v != "-" {
				empty = false
			}
			need = max(need, ansi.StringWidth(v))
		}
		switch {
		case c.flex:
			specs[i].min = min(need, c.min)
			if i == workloadColumn {
				// A workload's name is what tells runs apart: never cut.
				specs[i].min = min(need, 20)
			}
			specs[i].maxFlex = min(need, 32)
			if empty && len(rs) > 0 {
				specs[i].priority += 20
			}
		case i != startedColumn:
			specs[i].min = need
		}
	}
	shown, widths = fitColumns(specs, width)
	// Spare room lets the started time keep its year.
	used := 0
	for _, w := range widths {
		used += w + cellPad
	}
	for k, i := range shown {
		if i == startedColumn && used+len(startedLayout)-widths[k] <= width {
			widths[k] = len(startedLayout)
		}
	}
	return shown, widths
}

// tableColumns are the bubbles columns for the shown ones, the sort
// column's title marked with its direction.
func tableColumns(shown, widths []int, sortCol int, desc bool) []table.Column {
	cols := make([]table.Column, len(shown))
	for k, i := range shown {
		t := columns[i].title
		if i == sortCol {
			if desc {
				t += "▼"
			} else {
				t += "▲"
			}
		}
		cols[k] = table.Column{Title: align(t, widths[k], columns[i].right), Width: widths[k]}
	}
	return cols
}

func align(s string, w int, right bool) string {
	n := len([]rune(s))
	if !right || n >= w {
		return s
	}
	return strings.Repeat(" ", w-n) + s
}

// spanColumns are the figure columns a sweep row writes its description
// over (OK/Fail to Out tok/s, those shown): a sweep has no figures of its
// own, and its cells, search and result are what tell it apart. first
// and last index shown; x is where the span starts on the row and w its
// width, the gaps between its cells included.
func spanColumns(shown, widths []int) (first, last, x, w int, ok bool) {
	first, last = -1, -1
	for j, ci := range shown {
		if ci >= okFailColumn && ci <= outColumn {
			if first < 0 {
				first = j
			}
			last = j
		}
	}
	if first < 0 {
		return 0, 0, 0, 0, false
	}
	for j := range first {
		x += widths[j] + cellPad
	}
	for j := first; j <= last; j++ {
		w += widths[j] + cellPad
	}
	return first, last, x, w - cellPad, true
}

// blankSpan empties a sweep row's figure cells: the description is drawn
// over them (spliceSweeps).
func blankSpan(row table.Row, shown, widths []int) {
	if first, last, _, _, ok := spanColumns(shown, widths); ok {
		for j := first; j <= last; j++ {
			row[j] = ""
		}
	}
}

// spliceSweep draws text over the cells of a rendered row from x on, w
// cells wide, in style (the row's, when it is the selected one); the
// rest of the row, escape sequences included, is kept.
func spliceSweep(line, text string, x, w int, style func(string) string) string {
	mid := ansi.Truncate(text, w, "…")
	mid += strings.Repeat(" ", max(w-ansi.StringWidth(mid), 0))
	return ansi.Truncate(line, x, "") + style(mid) + ansi.TruncateLeft(line, x+w, "")
}

// matches reports whether r matches every word of the filter text
// (case-insensitive, over the id, the started date, the shown text
// fields, the recorded name and the note; "sweep" finds sweeps,
// "series" series).
func matches(r *runs.Run, filter string) bool {
	if filter == "" {
		return true
	}
	fields := []string{r.ID, started(r), r.Name, r.RecordedName, r.Note, r.Workload, r.Model, r.EngineHost(), string(r.Status())}
	if r.Sweep != nil {
		fields = append(fields, "sweep")
	}
	if r.Series != nil {
		fields = append(fields, "series")
	}
	hay := strings.ToLower(strings.Join(fields, " "))
	for _, w := range strings.Fields(strings.ToLower(filter)) {
		if !strings.Contains(hay, w) {
			return false
		}
	}
	return true
}
