// Package results is the results explorer: the table of past runs and
// sweeps (sortable, filterable, runs marked for compare or for one
// delete, renamed and annotated, their id, folder or command copied to
// the clipboard, export the config, start a new run from it) and one run
// opened in detail (its summary, a TTFT chart over the run, the TTFT
// distribution and the per-request table, paged from disk).
package results

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/table"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/screens/common"
)

type listKeys struct {
	Up, Down, PageUp, PageDown, Top, Bottom     key.Binding
	Open, Mark, Compare, Sort, Reverse, Filter  key.Binding
	ClearFilter, Delete, Export, NewRun, Reload key.Binding
	Report, Copy, Rename, Annotate              key.Binding
}

// newListKeys composes the explorer's keys. Space marks a run here; the
// key is checked before the moves, so it never pages.
func newListKeys(km *common.KeyMap) listKeys {
	sk := km.Scroll("first", "last")
	return listKeys{
		Up:          sk.Up,
		Down:        sk.Down,
		PageUp:      sk.PageUp,
		PageDown:    sk.PageDown,
		Top:         sk.Top,
		Bottom:      sk.Bottom,
		Open:        common.Named(km.Select, "enter", "open"),
		Mark:        km.Mark,
		Compare:     key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "compare")),
		Sort:        key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort by")),
		Reverse:     key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "reverse")),
		Filter:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		ClearFilter: common.Named(km.Back, "esc", "clear filter/marks"),
		Delete:      common.Named(km.Delete, "d", "delete"),
		Export:      key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "export config")),
		NewRun:      key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "new run from config")),
		Reload:      km.Reload,
		Report:      key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "HTML report")),
		Copy:        common.Named(km.Copy, "y", "copy id/path/cmd"),
		Rename:      km.Rename,
		Annotate:    km.Annotate,
	}
}

// List is the table of runs.
type List struct {
	c             *common.Common
	id            common.ID
	width, height int
	keys          listKeys

	all    []runs.Run
	only   map[string]bool // when set, the runs listed (by folder)
	view   []int           // indexes into all: filtered, sorted
	loaded bool
	err    error

	sortCol int
	desc    bool

	filter    textinput.Model
	filtering bool

	// marks are run (and sweep) folders in the order they were marked;
	// the last two are A and B, the pair c compares; d deletes them all.
	marks []string

	// copy is the y dialog while it is being opened.
	copy copyChord

	// The table renders the visible window only; the cursor and the
	// scroll position are kept here (over view), not in the table.
	tbl           table.Model
	rows          []table.Row
	shown, widths []int
	cursor, top   int
}

// New is the explorer over c.RunsDir.
func New(c *common.Common) *List {
	ti := textinput.New()
	ti.Prompt = "/ "
	ti.Placeholder = "name, note, workload, model, engine, date, status, sweep"
	ti.Cursor.SetMode(cursor.CursorStatic)
	k := newListKeys(c.KeyMap)
	tbl := table.New(table.WithFocused(true))
	tbl.SetStyles(table.Styles{
		Header:   c.Styles.Header.PaddingRight(cellPad),
		Cell:     lipgloss.NewStyle().PaddingRight(cellPad),
		Selected: c.Styles.Selected,
	})
	l := &List{c: c, id: common.NewID(), keys: k, filter: ti, tbl: tbl, sortCol: 1, desc: true}
	l.SetSize(c.Width, c.Height)
	return l
}

// Only limits the list to the runs in dirs.
func (l *List) Only(dirs ...string) *List {
	l.only = map[string]bool{}
	for _, d := range dirs {
		l.only[filepath.Clean(d)] = true
	}
	return l
}

type runsMsg struct {
	to   common.ID
	runs []runs.Run
	err  error
}

// deletedMsg reports a run folder removed (or not); every screen that
// shows the run drops it, the one that asked (by) reports it.
type deletedMsg struct {
	dir string
	by  common.ID
	err error
}

func deleteCmd(dir string, by common.ID) tea.Cmd {
	return func() tea.Msg { return deletedMsg{dir: dir, by: by, err: runs.DeleteAny(dir)} }
}

// deletedManyMsg reports the marked folders removed: dirs are gone, err
// says which could not be (the others are still gone).
type deletedManyMsg struct {
	dirs []string
	by   common.ID
	err  error
}

func deleteManyCmd(dirs []string, by common.ID) tea.Cmd {
	return func() tea.Msg {
		var gone []string
		var errs []error
		for _, d := range dirs {
			if err := runs.DeleteAny(d); err != nil {
				errs = append(errs, err)
				continue
			}
			gone = append(gone, d)
		}
		return deletedManyMsg{dirs: gone, by: by, err: errors.Join(errs...)}
	}
}

// load reads the runs and the sweeps of the runs directory.
func (l *List) load() tea.Cmd {
	dir := l.c.RunsDir
	if l.only != nil {
		// The runs asked for, wherever they are (a series' runs sit in its
		// folder, not in the runs directory).
		dirs := make([]string, 0, len(l.only))
		for d := range l.only {
			dirs = append(dirs, d)
		}
		return func() tea.Msg { return runsMsg{to: l.id, runs: runs.ReadDirs(dirs)} }
	}
	return func() tea.Msg {
		rs, err := runs.ListAll(dir)
		return runsMsg{to: l.id, runs: rs, err: err}
	}
}

func (l *List) Init() tea.Cmd { return l.load() }

// Title names the screen in the header.
func (l *List) Title() string { return "Results" }

// Typing is true while the filter has focus.
func (l *List) Typing() bool { return l.filtering }

// SetSize lays the table out for the new size.
func (l *List) SetSize(w, h int) {
	l.width, l.height = w, h
	l.filter.Width = max(w-4, 10)
	l.shown, l.widths = layout(w, l.Runs())
	// The table renders its rows against the new columns at once: drop
	// the rows built for the old ones first (a row with more cells than
	// there are columns panics in the table's renderer).
	l.tbl.SetRows(nil)
	l.tbl.SetColumns(tableColumns(l.shown, l.widths, l.sortCol, l.desc))
	l.tbl.SetWidth(w)
	l.tbl.SetHeight(max(h-l.chromeLines(), 2))
	l.rebuild()
}

// visible is the number of table rows on screen.
func (l *List) visible() int { return max(l.height-l.chromeLines()-1, 1) }

func (l *List) chromeLines() int {
	n := 1 // footer
	if l.filtering || l.filter.Value() != "" {
		n++
	}
	return n
}

// selected is the run under the cursor, nil when there is none.
func (l *List) selected() *runs.Run {
	i := l.cursor
	if i < 0 || i >= len(l.view) {
		return nil
	}
	return &l.all[l.view[i]]
}

// Runs are the runs shown, in table order.
func (l *List) Runs() []runs.Run {
	out := make([]runs.Run, len(l.view))
	for k, i := range l.view {
		out[k] = l.all[i]
	}
	return out
}

// Marked are the folders of the marked runs, A first.
func (l *List) Marked() []string { return slices.Clone(l.marks) }

// refresh filters and sorts, keeping the cursor on the run it was on;
// when that run is gone (deleted, filtered out) the cursor stays at the
// same position, on the run that took its place, never jumps to the top.
func (l *List) refresh() { l.refreshKeeping(l.selectedDir()) }

// selectedDir is the folder of the run under the cursor, "" when none.
// It must be read before l.all changes: the view indexes into it.
func (l *List) selectedDir() string {
	if r := l.selected(); r != nil {
		return r.Dir
	}
	return ""
}

// successor is the run the cursor goes to when the run in dir goes away:
// the next one in table order, else the previous one.
func (l *List) successor(dir string) string {
	return l.successorOf(map[string]bool{dir: true})
}

// successorOf is where the cursor goes when the runs in gone go away: the
// first run after the cursor's in table order that stays, else the
// nearest one before it.
func (l *List) successorOf(gone map[string]bool) string {
	at := l.cursor
	if at < 0 || at >= len(l.view) {
		return ""
	}
	for k := at; k < len(l.view); k++ {
		if d := l.all[l.view[k]].Dir; !gone[d] {
			return d
		}
	}
	for k := at - 1; k >= 0; k-- {
		if d := l.all[l.view[k]].Dir; !gone[d] {
			return d
		}
	}
	return ""
}

func (l *List) refreshKeeping(keep string) {
	at := l.cursor
	l.view = l.view[:0]
	f := l.filter.Value()
	for i := range l.all {
		if matches(&l.all[i], f) {
			l.view = append(l.view, i)
		}
	}
	col := columns[l.sortCol]
	slices.SortStableFunc(l.view, func(a, b int) int {
		c := col.compare(&l.all[a], &l.all[b])
		if c == 0 {
			c = strings.Compare(l.all[a].ID, l.all[b].ID)
		}
		if l.desc {
			return -c
		}
		return c
	})
	l.shown, l.widths = layout(l.width, l.Runs())
	l.tbl.SetRows(nil)
	l.tbl.SetColumns(tableColumns(l.shown, l.widths, l.sortCol, l.desc))
	l.cursor = clamp(at, 0, max(len(l.view)-1, 0))
	for k, i := range l.view {
		if l.all[i].Dir == keep {
			l.cursor = k
		}
	}
	l.rebuild()
}

// rebuild renders every row's cells, then the window.
func (l *List) rebuild() {
	l.rows = make([]table.Row, len(l.view))
	for k, i := range l.view {
		r := &l.all[i]
		row := make(table.Row, len(l.shown))
		for j, ci := range l.shown {
			if ci == markColumn {
				continue
			}
			v := columns[ci].value(r)
			if ci == startedColumn {
				v = startedIn(r, l.widths[j])
			}
			row[j] = align(ansi.Truncate(v, l.widths[j], "…"), l.widths[j], columns[ci].right)
		}
		if r.Sweep != nil || r.Series != nil {
			blankSpan(row, l.shown, l.widths)
		}
		l.rows[k] = row
	}
	l.scroll(0)
}

// scroll moves the cursor by n rows and hands the table the window
// around it.
func (l *List) scroll(n int) {
	v := l.visible()
	l.cursor = clamp(l.cursor+n, 0, max(len(l.rows)-1, 0))
	if l.cursor < l.top {
		l.top = l.cursor
	}
	if l.cursor >= l.top+v {
		l.top = l.cursor - v + 1
	}
	l.top = clamp(l.top, 0, max(len(l.rows)-v, 0))
	end := min(l.top+v, len(l.rows))
	for k := l.top; k < end; k++ {
		if len(l.rows[k]) > 0 && l.shown[0] == markColumn {
			l.rows[k][0] = l.markCell(&l.all[l.view[k]], k == l.cursor)
		}
	}
	l.tbl.SetRows(l.rows[l.top:end])
	l.tbl.SetCursor(l.cursor - l.top)
}

// markCell is the cursor and the mark of a row: A and B for the pair c
// compares (the last two marked), * for the other marked rows. Marks are
// letters, so they read without colour.
func (l *List) markCell(r *runs.Run, current bool) string {
	c := " "
	if current {
		c = "›"
	}
	i := slices.Index(l.marks, r.Dir)
	n := len(l.marks)
	switch {
	case i < 0:
		return c + " "
	case n == 1 || i == n-2:
		return c + "A"
	case i == n-1:
		return c + "B"
	}
	return c + "*"
}

// pair is what c compares (and o reports on): the last two marked, or
// the one marked and the run under the cursor; ok is false when there is
// no pair.
func (l *List) pair(r *runs.Run) (a, b string, ok bool) {
	switch n := len(l.marks); {
	case n >= 2:
		return l.marks[n-2], l.marks[n-1], true
	case n == 1 && r != nil && r.Dir != l.marks[0]:
		return l.marks[0], r.Dir, true
	}
	return "", "", false
}

// row is the listed run (or sweep) of dir, nil when it is not listed.
func (l *List) row(dir string) *runs.Run {
	for i := range l.all {
		if l.all[i].Dir == dir {
			return &l.all[i]
		}
	}
	return nil
}

func (l *List) status(text string) tea.Cmd { return common.Status(text) }

func (l *List) fail(err error) tea.Cmd { return common.Failure(err) }

func (l *List) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case runsMsg:
		if msg.to != l.id {
			return l, nil
		}
		keep := l.selectedDir()
		l.loaded, l.err = true, msg.err
		l.all = msg.runs
		if l.only != nil {
			l.all = slices.DeleteFunc(l.all, func(r runs.Run) bool { return !l.only[filepath.Clean(r.Dir)] })
		}
		// Marks of runs that are gone are dropped.
		l.marks = slices.DeleteFunc(l.marks, func(dir string) bool {
			return !slices.ContainsFunc(l.all, func(r runs.Run) bool { return r.Dir == dir })
		})
		l.view = nil
		l.refreshKeeping(keep)
		return l, nil
	case deletedMsg:
		var cmd tea.Cmd
		if msg.err == nil {
			keep := l.selectedDir()
			if keep == msg.dir {
				keep = l.successor(msg.dir)
			}
			l.all = slices.DeleteFunc(l.all, func(r runs.Run) bool { return r.Dir == msg.dir })
			l.marks = slices.DeleteFunc(l.marks, func(d string) bool { return d == msg.dir })
			l.view = nil
			l.refreshKeeping(keep)
		}
		if msg.by == l.id {
			if msg.err != nil {
				cmd = l.fail(msg.err)
			} else {
				cmd = l.status("deleted " + shortID(msg.dir))
			}
		}
		return l, cmd
	case deletedManyMsg:
		gone := map[string]bool{}
		for _, d := range msg.dirs {
			gone[d] = true
		}
		keep := l.selectedDir()
		if gone[keep] {
			keep = l.successorOf(gone)
		}
		l.all = slices.DeleteFunc(l.all, func(r runs.Run) bool { return gone[r.Dir] })
		l.marks = slices.DeleteFunc(l.marks, func(d string) bool { return gone[d] })
		l.view = nil
		l.refreshKeeping(keep)
		if msg.by != l.id {
			return l, nil
		}
		if msg.err != nil {
			return l, l.fail(fmt.Errorf("deleted %d, but: %w", len(msg.dirs), msg.err))
		}
		return l, l.status(fmt.Sprintf("deleted %d marked", len(msg.dirs)))
	case annotatedMsg:
		if msg.err == nil {
			if r := l.row(msg.dir); r != nil {
				applyAnnotations(r, msg.ann)
				l.refresh()
			}
		}
		if msg.by == l.id {
			return l, annotatedStatus(msg)
		}
		return l, nil
	case common.CopiedMsg:
		if msg.To == l.id {
			return l, copiedStatus(msg)
		}
		return l, nil
	case configMsg:
		if msg.to != l.id {
			return l, nil
		}
		return l, openForm(l.c, msg)
	case tea.KeyMsg:
		if l.filtering {
			return l, l.updateFilter(msg)
		}
		return l, l.handleKey(msg)
	}
	return l, nil
}

func (l *List) updateFilter(msg tea.KeyMsg) tea.Cmd {
	switch msg.Type {
	case tea.KeyEnter:
		l.filtering = false
		l.filter.Blur()
		l.SetSize(l.width, l.height)
		return nil
	case tea.KeyEsc:
		l.filtering = false
		l.filter.Blur()
		l.filter.SetValue("")
		l.SetSize(l.width, l.height)
		l.refresh()
		return nil
	}
	before := l.filter.Value()
	var cmd tea.Cmd
	l.filter, cmd = l.filter.Update(msg)
	if l.filter.Value() != before {
		l.refresh()
	}
	return cmd
}

func (l *List) handleKey(msg tea.KeyMsg) tea.Cmd {
	if cmd, ok := l.copy.key(msg); ok {
		return cmd
	}
	k := l.keys
	switch {
	case key.Matches(msg, k.Filter):
		l.filtering = true
		l.SetSize(l.width, l.height)
		return l.filter.Focus()
	case key.Matches(msg, k.ClearFilter):
		switch {
		case l.filter.Value() != "":
			l.filter.SetValue("")
			l.SetSize(l.width, l.height)
			l.refresh()
		case len(l.marks) > 0:
			l.marks = nil
			l.rebuild()
			return l.status("marks cleared")
		}
		return nil
	case key.Matches(msg, k.Sort):
		l.sortCol = l.nextSortColumn()
		l.refresh()
		return l.status("sorted by " + strings.ToLower(columns[l.sortCol].title))
	case key.Matches(msg, k.Reverse):
		l.desc = !l.desc
		l.refresh()
		return nil
	case key.Matches(msg, k.Reload):
		return l.load()
	}
	r := l.selected()
	switch {
	case key.Matches(msg, k.Delete) && len(l.marks) > 0:
		if err := refuseDeleteMany(l.markedRows()); err != nil {
			return l.fail(err)
		}
		return common.Push(confirmDeleteMany(l.c, l.markedRows(), l.id))
	case key.Matches(msg, k.Compare):
		a, b, ok := l.pair(r)
		if !ok {
			return l.status("mark two runs with space, then press c")
		}
		// Two runs, or two sweeps (their curves overlaid); not one of each.
		if x, y := l.row(a), l.row(b); x != nil && y != nil && (x.Sweep == nil) != (y.Sweep == nil) {
			sw := x
			if y.Sweep != nil {
				sw = y
			}
			return l.status("c compares two runs or two sweeps: " + sw.ID + " is a sweep, the other a run")
		}
		return common.Open(common.OpenCompare{A: a, B: b})
	case key.Matches(msg, k.Report):
		var dirs []string
		a, b, ok := l.pair(r)
		switch {
		case len(l.marks) > 2:
			dirs = l.marks
		case ok:
			dirs = []string{a, b}
		case r != nil:
			dirs = []string{r.Dir}
		default:
			return nil
		}
		return common.Open(common.OpenReport{Runs: slices.Clone(dirs)})
	}
	if r == nil {
		return l.move(msg)
	}
	switch {
	case key.Matches(msg, k.Open):
		if r.Sweep != nil {
			return common.Open(common.OpenSweep{Dir: r.Dir})
		}
		if r.Series != nil {
			// A series opens as the list of its runs.
			if len(r.Series.Dirs) == 0 {
				return l.status("the series has no run yet")
			}
			return common.Open(common.OpenResults{Only: slices.Clone(r.Series.Dirs)})
		}
		return common.Push(NewDetail(l.c, r.Dir))
	case key.Matches(msg, k.Mark):
		if i := slices.Index(l.marks, r.Dir); i >= 0 {
			l.marks = slices.Delete(l.marks, i, i+1)
		} else {
			l.marks = append(l.marks, r.Dir)
		}
		l.rebuild()
		l.scroll(1)
		return nil
	case key.Matches(msg, k.Delete):
		if err := runs.DeleteRefusal(r); err != nil {
			return l.fail(err)
		}
		if r.Sweep != nil || r.Series != nil {
			return common.Push(confirmDeleteSweep(l.c, r, l.id))
		}
		return common.Push(confirmDelete(l.c, r.ID, r.Dir, l.id))
	case key.Matches(msg, k.Copy):
		return l.copy.open(NewCopy(l.c, r, l.id))
	case key.Matches(msg, k.Rename):
		return common.Push(NewRename(l.c, r, l.id))
	case key.Matches(msg, k.Annotate):
		return common.Push(NewNote(l.c, r, l.id))
	case key.Matches(msg, k.Export), key.Matches(msg, k.NewRun):
		if r.Sweep != nil {
			return l.status("a sweep has a config per cell: open it (enter), then a cell")
		}
		if r.Series != nil {
			return l.status("a series is runs of one config: open it (enter), then a run")
		}
		if key.Matches(msg, k.Export) {
			return common.Push(NewExport(l.c, r.Dir))
		}
		return loadConfigCmd(r.Dir, l.id)
	}
	return l.move(msg)
}

// InterceptsKey keeps a q typed right after y (before the copy dialog
// is on the stack) for the dialog: it cancels, it does not leave.
func (l *List) InterceptsKey(k tea.KeyMsg) bool { return l.copy.pending() && k.String() == "q" }

// markedRows are the marked runs and sweeps, in the order marked.
func (l *List) markedRows() []runs.Run {
	var out []runs.Run
	for _, d := range l.marks {
		if r := l.row(d); r != nil {
			out = append(out, *r)
		}
	}
	return out
}

// move moves the cursor as a move key asks.
func (l *List) move(msg tea.KeyMsg) tea.Cmd {
	k := l.keys
	switch {
	case key.Matches(msg, k.Up):
		l.scroll(-1)
	case key.Matches(msg, k.Down):
		l.scroll(1)
	case key.Matches(msg, k.PageUp):
		l.scroll(-l.visible())
	case key.Matches(msg, k.PageDown):
		l.scroll(l.visible())
	case key.Matches(msg, k.Top):
		l.scroll(-len(l.rows))
	case key.Matches(msg, k.Bottom):
		l.scroll(len(l.rows))
	}
	return nil
}

// nextSortColumn cycles through the sortable columns on screen.
func (l *List) nextSortColumn() int {
	at := slices.Index(l.shown, l.sortCol)
	for n := 1; n <= len(l.shown); n++ {
		ci := l.shown[(at+n)%len(l.shown)]
		if columns[ci].compare != nil {
			return ci
		}
	}
	return l.sortCol
}

func (l *List) View() string {
	s := l.c.Styles
	var parts []string
	if l.filtering || l.filter.Value() != "" {
		if l.filtering {
			parts = append(parts, l.filter.View())
		} else {
			parts = append(parts, s.Muted.Render("/ "+l.filter.Value()+"  (esc clears)"))
		}
	}
	switch {
	case !l.loaded:
		parts = append(parts, s.Muted.Render("Reading "+l.c.RunsDir+" …"))
	case l.err != nil:
		parts = append(parts, s.StatusError.Render(common.ErrorText(l.err)))
	case len(l.all) == 0:
		parts = append(parts, s.Muted.Render("No runs in "+l.c.RunsDir+" yet.\nStart one with: kvbench run --engine-url builtin --workload long-doc-qa"))
	case len(l.view) == 0:
		parts = append(parts, s.Muted.Render("No run matches the filter."))
	default:
		parts = append(parts, l.tableView())
	}
	body := lipgloss.JoinVertical(lipgloss.Left, parts...)
	if pad := l.height - 1 - lipgloss.Height(body); pad > 0 {
		body += strings.Repeat("\n", pad)
	}
	return body + "\n" + ansi.Truncate(l.footer(), max(l.width, 1), "…")
}

// tableView is the table with each sweep row's description drawn over
// its figure columns, the longest that fits.
func (l *List) tableView() string {
	out := l.tbl.View()
	_, _, x, w, ok := spanColumns(l.shown, l.widths)
	if !ok {
		return out
	}
	lines := strings.Split(out, "\n")
	end := min(l.top+l.visible(), len(l.rows))
	for k := l.top; k < end; k++ {
		r := &l.all[l.view[k]]
		i := 1 + k - l.top // under the header line
		if (r.Sweep == nil && r.Series == nil) || i >= len(lines) {
			continue
		}
		style := func(s string) string { return s }
		if k == l.cursor {
			style = func(s string) string { return l.c.Styles.Selected.Render(s) }
		}
		what := ""
		if r.Sweep != nil {
			what = r.Sweep.Describe(w)
		} else {
			what = r.Series.Describe(w)
		}
		lines[i] = spliceSweep(lines[i], what, x, w, style)
	}
	return strings.Join(lines, "\n")
}

func (l *List) footer() string {
	s := l.c.Styles
	plural := "s"
	if len(l.all) == 1 {
		plural = ""
	}
	sweeps, series := 0, 0
	for i := range l.all {
		switch {
		case l.all[i].Sweep != nil:
			sweeps++
		case l.all[i].Series != nil:
			series++
		}
	}
	nruns := len(l.all) - sweeps - series
	if nruns == 1 {
		plural = ""
	}
	total := fmt.Sprintf("%d run%s", nruns, plural)
	switch sweeps {
	case 0:
	case 1:
		total += ", 1 sweep"
	default:
		total += fmt.Sprintf(", %d sweeps", sweeps)
	}
	if series > 0 {
		total += fmt.Sprintf(", %d series", series)
	}
	n := total
	if len(l.view) != len(l.all) {
		n = fmt.Sprintf("%d of %s", len(l.view), total)
	}
	dir := "▲"
	if l.desc {
		dir = "▼"
	}
	out := n + s.Muted.Render(" · sort "+strings.ToLower(columns[l.sortCol].title)+" "+dir)
	if m := len(l.marks); m > 2 {
		out += s.Muted.Render(fmt.Sprintf(" · %d marked (d deletes them)", m))
	}
	if a, b, ok := l.pair(nil); ok {
		out += s.Muted.Render(" · A ") + shortID(a) + s.Muted.Render(" · B ") + shortID(b) + s.Muted.Render(" · c compares")
	} else if len(l.marks) == 1 {
		out += s.Muted.Render(" · A ") + shortID(l.marks[0])
	}
	if r := l.selected(); r != nil && (r.Note != "" || r.Name != r.RecordedName) {
		ann := r.Name
		if r.Note != "" {
			ann = strings.TrimPrefix(ann+" — ", " — ") + r.Note
		}
		out += s.Muted.Render(" · › ") + oneLine(ann)
	}
	return out
}

// oneLine keeps a note on the footer's line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func (l *List) ShortHelp() []key.Binding {
	if l.filtering {
		return []key.Binding{
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear")),
		}
	}
	return []key.Binding{l.keys.Open, l.keys.Mark, l.keys.Compare, l.keys.Delete, l.keys.Copy, l.keys.Filter}
}

func (l *List) FullHelp() [][]key.Binding {
	k := l.keys
	// The explorer's own keys first: at 80 columns the help shows what
	// fits, and the moves are the ones every screen shares.
	return [][]key.Binding{
		{k.Open, k.Mark, k.Compare, k.Delete, k.Report, k.Reload},
		{k.Copy, k.Rename, k.Annotate, k.Export, k.NewRun},
		{k.Filter, k.ClearFilter, k.Sort, k.Reverse},
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
	}
}
