// Package results is the results explorer: the table of past runs
// (sortable, filterable, two runs marked for compare, delete, export the
// config, start a new run from it) and one run opened in detail (its
// summary, a TTFT chart over the run, the TTFT distribution and the
// per-request table, paged from disk).
package results

import (
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
	Report                                      key.Binding
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
		Mark:        key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "mark")),
		Compare:     key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "compare")),
		Sort:        key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort by")),
		Reverse:     key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "reverse")),
		Filter:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		ClearFilter: common.Named(km.Back, "esc", "clear filter"),
		Delete:      key.NewBinding(key.WithKeys("d", "delete"), key.WithHelp("d", "delete")),
		Export:      key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "export config")),
		NewRun:      key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "new run from config")),
		Reload:      key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "reload")),
		Report:      key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "HTML report (of the marked pair)")),
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

	// marks are run folders in the order they were marked: A then B.
	marks []string

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
	ti.Placeholder = "name, workload, model, engine, status"
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
	return func() tea.Msg { return deletedMsg{dir: dir, by: by, err: runs.Delete(dir)} }
}

func (l *List) load() tea.Cmd {
	dir := l.c.RunsDir
	return func() tea.Msg {
		rs, err := runs.List(dir)
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
	for k, i := range l.view {
		if l.all[i].Dir != dir {
			continue
		}
		if k+1 < len(l.view) {
			return l.all[l.view[k+1]].Dir
		}
		if k > 0 {
			return l.all[l.view[k-1]].Dir
		}
	}
	return l.selectedDir()
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

func (l *List) markCell(r *runs.Run, current bool) string {
	c := " "
	if current {
		c = "›"
	}
	switch slices.Index(l.marks, r.Dir) {
	case 0:
		return c + "A"
	case 1:
		return c + "B"
	}
	return c + " "
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
	k := l.keys
	switch {
	case key.Matches(msg, k.Filter):
		l.filtering = true
		l.SetSize(l.width, l.height)
		return l.filter.Focus()
	case key.Matches(msg, k.ClearFilter):
		if l.filter.Value() != "" {
			l.filter.SetValue("")
			l.SetSize(l.width, l.height)
			l.refresh()
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
	case key.Matches(msg, k.Open):
		if r == nil {
			return nil
		}
		return common.Push(NewDetail(l.c, r.Dir))
	case key.Matches(msg, k.Mark):
		if r == nil {
			return nil
		}
		if i := slices.Index(l.marks, r.Dir); i >= 0 {
			l.marks = slices.Delete(l.marks, i, i+1)
		} else {
			if len(l.marks) == 2 {
				l.marks = l.marks[1:]
			}
			l.marks = append(l.marks, r.Dir)
		}
		l.rebuild()
		l.scroll(1)
		return nil
	case key.Matches(msg, k.Compare):
		a, b := "", ""
		switch {
		case len(l.marks) == 2:
			a, b = l.marks[0], l.marks[1]
		case len(l.marks) == 1 && r != nil && r.Dir != l.marks[0]:
			a, b = l.marks[0], r.Dir
		default:
			return l.status("mark two runs with space, then press c")
		}
		return common.Open(common.OpenCompare{A: a, B: b})
	case key.Matches(msg, k.Report):
		var dirs []string
		switch {
		case len(l.marks) == 2:
			dirs = l.marks
		case len(l.marks) == 1 && r != nil && r.Dir != l.marks[0]:
			dirs = []string{l.marks[0], r.Dir}
		case r != nil:
			dirs = []string{r.Dir}
		default:
			return nil
		}
		return common.Open(common.OpenReport{Runs: slices.Clone(dirs)})
	case key.Matches(msg, k.Delete):
		if r == nil {
			return nil
		}
		return common.Push(confirmDelete(l.c, r.ID, r.Dir, l.id))
	case key.Matches(msg, k.Export):
		if r == nil {
			return nil
		}
		return common.Push(NewExport(l.c, r.Dir))
	case key.Matches(msg, k.NewRun):
		if r == nil {
			return nil
		}
		return loadConfigCmd(r.Dir, l.id)
	}
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
		parts = append(parts, s.StatusError.Render(l.err.Error()))
	case len(l.all) == 0:
		parts = append(parts, s.Muted.Render("No runs in "+l.c.RunsDir+" yet.\nStart one with: kvbench run --engine-url builtin --workload long-doc-qa"))
	case len(l.view) == 0:
		parts = append(parts, s.Muted.Render("No run matches the filter."))
	default:
		parts = append(parts, l.tbl.View())
	}
	body := lipgloss.JoinVertical(lipgloss.Left, parts...)
	if pad := l.height - 1 - lipgloss.Height(body); pad > 0 {
		body += strings.Repeat("\n", pad)
	}
	return body + "\n" + ansi.Truncate(l.footer(), max(l.width, 1), "…")
}

func (l *List) footer() string {
	s := l.c.Styles
	plural := "s"
	if len(l.all) == 1 {
		plural = ""
	}
	n := fmt.Sprintf("%d run%s", len(l.all), plural)
	if len(l.view) != len(l.all) {
		n = fmt.Sprintf("%d of %d run%s", len(l.view), len(l.all), plural)
	}
	dir := "▲"
	if l.desc {
		dir = "▼"
	}
	out := n + s.Muted.Render(" · sort "+strings.ToLower(columns[l.sortCol].title)+" "+dir)
	for i, m := range l.marks {
		out += s.Muted.Render(fmt.Sprintf(" · %c ", 'A'+i)) + shortID(m)
	}
	if len(l.marks) == 2 {
		out += s.Muted.Render(" · c compares")
	}
	return out
}

func (l *List) ShortHelp() []key.Binding {
	if l.filtering {
		return []key.Binding{
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear")),
		}
	}
	return []key.Binding{l.keys.Open, l.keys.Mark, l.keys.Compare, l.keys.Sort, l.keys.Filter, l.keys.Delete}
}

func (l *List) FullHelp() [][]key.Binding {
	k := l.keys
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Open, k.Mark, k.Compare, k.Delete},
		{k.Sort, k.Reverse, k.Filter, k.ClearFilter},
		{k.Export, k.NewRun, k.Report, k.Reload},
	}
}
