package results

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/screens/common"
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

	// block is the engine block size trace expectations are judged with.
	block int
	// quality maps request ids to their rag-qa-quality samples (nil for
	// other runs, and until rag_qa_quality.json is read); qualityErr is
	// why it could not be read.
	quality    map[string]*record.RAGSample
	qualityErr error
}

// reqColumn is one column of the request table.
type reqColumn struct {
	key      string
	title    string
	min      int
	flex     bool
	right    bool
	priority int // lower is kept first when the screen is narrow
}

// Column keys.
const (
	colCursor   = "cursor"
	colID       = "id"
	colPhase    = "phase"
	colTTFT     = "ttft"
	colLatency  = "latency"
	colTokens   = "tokens"
	colCached   = "cached"
	colExpected = "expected"
	colLRU      = "lru"
	colDev      = "dev"
	colState    = "state"
	colF1       = "f1"
	colError    = "error"
)

var reqColumnDefs = map[string]reqColumn{
	colCursor:   {colCursor, "", 1, false, false, 0},
	colID:       {colID, "ID", 8, true, false, 1},
	colPhase:    {colPhase, "Phase", 8, false, false, 6},
	colTTFT:     {colTTFT, "TTFT ms", 8, false, true, 2},
	colLatency:  {colLatency, "Latency ms", 10, false, true, 3},
	colTokens:   {colTokens, "Tok in/out", 11, false, true, 7},
	colCached:   {colCached, "Cached", 7, false, true, 8},
	colState:    {colState, "State", 10, false, false, 4},
	colError:    {colError, "Error", 8, true, false, 5},
	colExpected: {colExpected, "Expected", 8, false, true, 0},
	colLRU:      {colLRU, "LRU", 6, false, true, 0},
	colDev:      {colDev, "Dev", 6, false, true, 0},
	colF1:       {colF1, "F1", 6, false, true, 0},
}

// columnsOf lists keys with their priorities, in display order.
func columnsOf(spec ...any) []reqColumn {
	var out []reqColumn
	for i := 0; i < len(spec); i += 2 {
		c := reqColumnDefs[spec[i].(string)]
		c.priority = spec[i+1].(int)
		out = append(out, c)
	}
	return out
}

// columns are the table's columns for what the run is. A replayed trace
// sets the hit its trace predicted beside the observed one (Expected:
// an unbounded cache; LRU: with the KV budget, when one was known; Dev:
// observed minus the LRU figure, else the unbounded one), and keeps them
// before the rest when narrow. A rag-qa-quality run adds each sample's F1.
func (t *requestTable) columns() []reqColumn {
	trace, lru := false, false
	for _, rows := range [][]sender.Result{t.head, t.page} {
		for i := range rows {
			if e := rows[i].TraceExpectation; e != nil {
				trace = true
				lru = lru || e.ExpectedCachedTokensLRU != nil
			}
		}
	}
	switch {
	case trace:
		cols := columnsOf(colCursor, 0, colID, 1, colPhase, 10, colTTFT, 2, colLatency, 8, colTokens, 11,
			colCached, 3, colExpected, 4)
		if lru {
			cols = append(cols, columnsOf(colLRU, 7)...)
		}
		return append(cols, columnsOf(colDev, 5, colState, 6, colError, 9)...)
	case t.quality != nil || t.qualityErr != nil:
		return columnsOf(colCursor, 0, colID, 1, colPhase, 6, colTTFT, 2, colLatency, 3, colTokens, 8,
			colCached, 9, colState, 4, colF1, 5, colError, 7)
	}
	return columnsOf(colCursor, 0, colID, 1, colPhase, 6, colTTFT, 2, colLatency, 3, colTokens, 7,
		colCached, 8, colState, 4, colError, 5)
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

// cells is the row's text by column key.
func (t *requestTable) cells(r *sender.Result) map[string]string {
	errText := ""
	if r.Error != nil {
		errText = *r.Error
		if r.ErrorDetail != nil && *r.ErrorDetail != "" {
			errText += ": " + *r.ErrorDetail
		}
	}
	state := r.CacheState
	if state == "" {
		state = sender.StateUnverified
	}
	out := map[string]string{
		colID: r.RequestID, colPhase: r.Phase, colTTFT: fmtOptMs(r.TTFT),
		colLatency: fmt.Sprintf("%.1f", r.RequestLatency*1000),
		colTokens:  fmtOptInt(r.PromptTokens) + "/" + fmtOptInt(r.CompletionTokens),
		colCached:  fmtOptInt(r.CachedTokens), colState: state, colError: errText,
	}
	if tc := runs.TraceCacheOf(r, t.block); tc != nil {
		out[colExpected] = fmt.Sprint(tc.Expected)
		out[colLRU] = fmtOptInt(tc.ExpectedLRU)
		out[colDev] = "-"
		if tc.Deviation != nil {
			out[colDev] = fmt.Sprintf("%+d", *tc.Deviation)
			if *tc.Deviation == 0 {
				out[colDev] = "0"
			}
		}
		if tc.Below {
			// Marked in words too, so NO_COLOR keeps the verdict.
			out[colDev] += "!"
		}
	}
	out[colF1] = t.f1Cell(r)
	return out
}

// below reports whether r's cache hit is under what its trace predicted.
func (t *requestTable) below(r *sender.Result) bool {
	tc := runs.TraceCacheOf(r, t.block)
	return tc != nil && tc.Below
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
		lines = append(lines, s.StatusError.Render(common.ErrorText(t.err)))
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
		below := t.below(r)
		var parts []string
		for k, ci := range shown {
			key := cols[ci].key
			txt := cell(vals[key], k)
			switch {
			case key == colCursor && i == t.cursor:
				txt = cell("›", k)
			case key == colState:
				txt = s.State(vals[key]).Render(txt)
			case key == colError && vals[key] != "":
				txt = s.StatusError.Render(txt)
			case (key == colCached || key == colDev) && below:
				txt = s.Warn.Render(txt)
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
