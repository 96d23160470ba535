package results

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/sender"
)

// requestTable is the per-request table of a run. Only a window of rows
// is ever in memory: the selection (line numbers of the filter) comes
// from the index, and rows are read from requests.jsonl a page at a time
// by a command when the view scrolls past what is loaded.
type requestTable struct {
	width, height int

	filter runs.Filter
	idx    *runs.Index
	sel    []int32 // line numbers of the filter; nil before the index
	gen    int     // bumps when sel changes; stale pages are dropped
	err    error

	head []sender.Result // the first lines, until the index exists

	cursor, top int

	page      []sender.Result
	pageStart int
	pageGen   int
	pending   bool
	pendStart int
	pendEnd   int
}

// request table columns
type reqColumn struct {
	title    string
	min      int
	flex     bool
	right    bool
	priority int
}

var reqColumns = []reqColumn{
	{"", 1, false, false, 0},
	{"ID", 8, true, false, 1},
	{"Phase", 8, false, false, 6},
	{"TTFT ms", 8, false, true, 2},
	{"Latency ms", 10, false, true, 3},
	{"Tok in/out", 11, false, true, 7},
	{"Cached", 7, false, true, 8},
	{"State", 10, false, false, 4},
	{"Error", 8, true, false, 5},
	// Trace replay only: the hit the trace predicts (the LRU one when a
	// KV budget was known), next to Cached.
	{"Expected", 8, false, true, 9},
}

// expectCol is the index of the Expected column.
const expectCol = 9

// columns are the table's columns: Expected only for a replayed trace.
func (t *requestTable) columns() []reqColumn {
	for _, rows := range [][]sender.Result{t.head, t.page} {
		for i := range rows {
			if rows[i].TraceExpectation != nil {
				return reqColumns
			}
		}
	}
	return reqColumns[:expectCol]
}

func (t *requestTable) setSize(w, h int) {
	t.width, t.height = w, h
	t.clampView()
}

// visible is the number of rows the table shows (below its header,
// above the position line).
func (t *requestTable) visible() int { return max(t.height-2, 1) }

func (t *requestTable) total() int {
	if t.sel != nil || t.idx != nil {
		return len(t.sel)
	}
	return len(t.head)
}

func (t *requestTable) move(n int) {
	t.cursor = clamp(t.cursor+n, 0, max(t.total()-1, 0))
	t.clampView()
}

func (t *requestTable) clampView() {
	v := t.visible()
	if t.cursor < t.top {
		t.top = t.cursor
	}
	if t.cursor >= t.top+v {
		t.top = t.cursor - v + 1
	}
	t.top = clamp(t.top, 0, max(t.total()-v, 0))
}

func (t *requestTable) setIndex(d *Detail, x *runs.Index) tea.Cmd {
	t.idx = x
	t.sel = x.Select(t.filter)
	t.gen++
	if t.filter == runs.All && len(t.head) > 0 {
		// The head is the first lines: the first page of "all".
		t.page, t.pageStart, t.pageGen = t.head, 0, t.gen
	}
	t.head = nil
	t.clampView()
	return t.ensurePage(d)
}

func (t *requestTable) setFilter(d *Detail, f runs.Filter) tea.Cmd {
	// Before the index the choice is kept for when it lands.
	t.filter = f
	if t.idx == nil {
		return nil
	}
	t.sel = t.idx.Select(f)
	t.gen++
	t.cursor, t.top = 0, 0
	t.page, t.pending = nil, false
	return t.ensurePage(d)
}

// row is the loaded request at position i of the selection, nil when it
// is not loaded (yet).
func (t *requestTable) row(i int) *sender.Result {
	if t.idx == nil {
		if t.filter == runs.All && i < len(t.head) {
			return &t.head[i]
		}
		return nil
	}
	if t.pageGen == t.gen && i >= t.pageStart && i < t.pageStart+len(t.page) {
		return &t.page[i-t.pageStart]
	}
	return nil
}

// ensurePage asks for the page around the view when it is not loaded.
func (t *requestTable) ensurePage(d *Detail) tea.Cmd {
	if t.idx == nil || d.tab != tabRequests {
		return nil
	}
	n := t.total()
	from, to := t.top, min(t.top+t.visible(), n)
	if from >= to {
		return nil
	}
	if t.row(from) != nil && t.row(to-1) != nil {
		return nil
	}
	if t.pending && t.pendStart <= from && to <= t.pendEnd {
		return nil
	}
	size := max(4*t.visible(), 128)
	start := max(from-size/4, 0)
	end := min(start+size, n)
	lines := t.sel[start:end]
	x, gen := t.idx, t.gen
	t.pending, t.pendStart, t.pendEnd = true, start, end
	return func() tea.Msg {
		rows, err := x.Window(lines)
		return pageMsg{to: d.id, gen: gen, start: start, rows: rows, err: err}
	}
}

func (t *requestTable) gotPage(msg pageMsg) {
	if msg.gen != t.gen {
		return
	}
	t.pending = false
	if msg.err != nil {
		t.err = msg.err
		return
	}
	t.page, t.pageStart, t.pageGen = msg.rows, msg.start, msg.gen
}

func fmtOptMs(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f", *v*1000)
}

func fmtOptInt(v *int) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}

func (t *requestTable) cells(r *sender.Result) []string {
	errText := ""
	if r.Error != nil {
		errText = *r.Error
		if r.ErrorDetail != nil && *r.ErrorDetail != "" {
			errText += ": " + *r.ErrorDetail
		}
	}
	lat := fmt.Sprintf("%.1f", r.RequestLatency*1000)
	state := r.CacheState
	if state == "" {
		state = sender.StateUnverified
	}
	expected := ""
	if e := r.TraceExpectation; e != nil {
		expected = fmt.Sprint(e.ExpectedCachedTokens)
		if e.ExpectedCachedTokensLRU != nil {
			expected = fmt.Sprint(*e.ExpectedCachedTokensLRU)
		}
	}
	return []string{
		"", r.RequestID, r.Phase, fmtOptMs(r.TTFT), lat,
		fmtOptInt(r.PromptTokens) + "/" + fmtOptInt(r.CompletionTokens),
		fmtOptInt(r.CachedTokens), state, errText, expected,
	}
}

func (t *requestTable) view(d *Detail) string {
	s := d.c.Styles
	cols := t.columns()
	specs := make([]colSpec, len(cols))
	for i, c := range cols {
		specs[i] = colSpec{min: c.min, flex: c.flex, priority: c.priority, maxFlex: 40}
	}
	shown, widths := fitColumns(specs, t.width)
	cell := func(text string, k int) string {
		c := cols[shown[k]]
		w := widths[k]
		text = ansi.Truncate(text, w, "…")
		pad := strings.Repeat(" ", max(w-ansi.StringWidth(text), 0))
		if c.right {
			return pad + text
		}
		return text + pad
	}
	var lines []string
	var hdr []string
	for k, i := range shown {
		hdr = append(hdr, cell(cols[i].title, k))
	}
	lines = append(lines, s.Header.Render(strings.Join(hdr, " ")))

	n := t.total()
	switch {
	case t.err != nil:
		lines = append(lines, s.StatusError.Render(t.err.Error()))
	case n == 0 && t.idx == nil && t.filter != runs.All:
		lines = append(lines, s.Muted.Render("Indexing requests … the filter applies when every line is read."))
	case n == 0 && t.idx == nil:
		lines = append(lines, s.Muted.Render("Reading requests …"))
	case n == 0:
		lines = append(lines, s.Muted.Render("No request matches the filter."))
	}
	for i := t.top; i < min(t.top+t.visible(), n); i++ {
		r := t.row(i)
		if r == nil {
			lines = append(lines, s.Muted.Render(cell("", 0)+" "+cell("…", 1)))
			continue
		}
		vals := t.cells(r)
		var parts []string
		for k, ci := range shown {
			txt := cell(vals[ci], k)
			switch {
			case ci == 0 && i == t.cursor:
				txt = cell("›", k)
			case ci == 7:
				txt = s.State(vals[ci]).Render(txt)
			case ci == 8 && vals[ci] != "":
				txt = s.StatusError.Render(txt)
			}
			parts = append(parts, txt)
		}
		line := strings.Join(parts, " ")
		if i == t.cursor {
			line = s.Selected.Render(line)
		}
		lines = append(lines, line)
	}
	body := strings.Join(lines, "\n")
	pos := ""
	if n > 0 {
		pos = fmt.Sprintf("row %d of %d", t.cursor+1, n)
		if t.idx == nil {
			pos += " (indexing …)"
		}
	}
	if pad := t.height - 1 - lipgloss.Height(body); pad > 0 {
		body += strings.Repeat("\n", pad)
	}
	return body + "\n" + s.Muted.Render(pos)
}
