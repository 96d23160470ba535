package results

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/stats"
	"github.com/kvbench/kvbench/internal/textclean"
	"github.com/kvbench/kvbench/screens/common"
)

type tab int

const (
	tabSummary tab = iota
	tabCharts
	tabRequests
)

var tabNames = []string{"Summary", "Charts", "Requests"}

type detailKeys struct {
	Next, Prev, Summary, Charts, Requests key.Binding
	// The scroll keys move the summary, and the cursor of the requests.
	common.ScrollKeys
	Filter, FilterBack, Delete, Export, NewR key.Binding
	Back, Report, Open                       key.Binding
	Copy, Rename, Annotate                   key.Binding
}

func newDetailKeys(km *common.KeyMap) detailKeys {
	return detailKeys{
		Next:       common.Also(common.Named(km.Next, "tab", "next view"), "right", "l"),
		Prev:       common.Also(common.Named(km.Prev, "shift+tab", "previous view"), "left", "h"),
		Summary:    key.NewBinding(key.WithKeys("1"), key.WithHelp("1", "summary")),
		Charts:     key.NewBinding(key.WithKeys("2"), key.WithHelp("2", "charts")),
		Requests:   key.NewBinding(key.WithKeys("3"), key.WithHelp("3", "requests")),
		ScrollKeys: km.Scroll("first", "last"),
		Filter:     key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "filter state")),
		FilterBack: key.NewBinding(key.WithKeys("F"), key.WithHelp("F", "filter back")),
		Delete:     key.NewBinding(key.WithKeys("d", "delete"), key.WithHelp("d", "delete")),
		Export:     key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "export config")),
		NewR:       key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "new run from config")),
		Back:       km.Back,
		Report:     key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "HTML report")),
		Open:       common.Named(km.Select, "enter", "request detail"),
		Copy:       common.Named(km.Copy, "y", "copy id/path/cmd"),
		Rename:     km.Rename,
		Annotate:   km.Annotate,
	}
}

// headRows is how many requests are read before the index exists, so the
// first page shows at once.
const headRows = 256

// Detail is one run: its summary, charts and requests.
type Detail struct {
	c             *common.Common
	id            common.ID
	dir           string
	width, height int
	keys          detailKeys
	tab           tab

	det    *runs.Detail
	detErr error

	idx    *runs.Index
	idxErr error

	summary      viewport.Model
	summaryBuilt int // width the summary content was laid out for

	req requestTable

	// copy is the y dialog while it is being opened.
	copy copyChord
}

// NewDetail opens the run in dir.
func NewDetail(c *common.Common, dir string) *Detail {
	d := &Detail{c: c, id: common.NewID(), dir: dir, keys: newDetailKeys(c.KeyMap), summary: viewport.New(0, 0)}
	d.req.filter = runs.All
	d.SetSize(c.Width, c.Height)
	return d
}

type detailMsg struct {
	to  common.ID
	det *runs.Detail
	err error
}

type headMsg struct {
	to   common.ID
	rows []sender.Result
	err  error
}

type indexMsg struct {
	to  common.ID
	idx *runs.Index
	err error
}

type pageMsg struct {
	to    common.ID
	gen   int
	start int
	rows  []sender.Result
	err   error
}

// Init reads the summary, the first page of requests and, in the
// background, the index of every request line.
func (d *Detail) Init() tea.Cmd {
	dir := d.dir
	return tea.Batch(
		func() tea.Msg {
			det, err := runs.Load(dir)
			return detailMsg{to: d.id, det: det, err: err}
		},
		func() tea.Msg {
			rows, err := runs.Head(dir, headRows)
			return headMsg{to: d.id, rows: rows, err: err}
		},
		func() tea.Msg {
			idx, err := runs.BuildIndex(context.Background(), dir)
			return indexMsg{to: d.id, idx: idx, err: err}
		},
	)
}

// Dir is the run folder shown.
func (d *Detail) Dir() string { return d.dir }

func (d *Detail) Title() string {
	return "Run " + shortID(d.dir)
}

func (d *Detail) Typing() bool { return false }

// InterceptsKey keeps a q typed right after y (before the copy dialog
// is on the stack) for the dialog: it cancels, it does not go back.
func (d *Detail) InterceptsKey(k tea.KeyMsg) bool { return d.copy.pending() && k.String() == "q" }

func (d *Detail) SetSize(w, h int) {
	d.width, d.height = w, h
	bh := d.bodyHeight()
	d.summary.Width, d.summary.Height = w, bh
	if d.det != nil && d.summaryBuilt != w {
		d.buildSummary()
	}
	d.req.setSize(w, bh)
}

// header is the lines above the tabs.
const headerLines = 3

func (d *Detail) bodyHeight() int { return max(d.height-headerLines, 1) }

func (d *Detail) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case detailMsg:
		if msg.to == d.id {
			d.det, d.detErr = msg.det, msg.err
			if d.det != nil {
				d.buildSummary()
				d.req.block = runs.EngineBlockSize(d.det)
				return d, readQuality(d.id, d.det)
			}
		}
		return d, nil
	case qualityMsg:
		if msg.to == d.id {
			d.req.gotQuality(msg)
		}
		return d, nil
	case headMsg:
		if msg.to == d.id && d.idx == nil {
			d.req.head, d.req.err = msg.rows, msg.err
		}
		return d, nil
	case indexMsg:
		if msg.to != d.id {
			return d, nil
		}
		d.idx, d.idxErr = msg.idx, msg.err
		if d.idx != nil {
			return d, d.req.setIndex(d, d.idx)
		}
		return d, nil
	case pageMsg:
		if msg.to == d.id {
			d.req.gotPage(msg)
			return d, d.req.ensurePage(d)
		}
		return d, nil
	case deletedMsg:
		if msg.dir != d.dir {
			return d, nil
		}
		if msg.err != nil {
			if msg.by == d.id {
				return d, common.Failure(msg.err)
			}
			return d, nil
		}
		return d, tea.Sequence(common.Pop, common.Status("deleted "+shortID(d.dir)))
	case configMsg:
		if msg.to == d.id {
			return d, openForm(d.c, msg)
		}
		return d, nil
	case annotatedMsg:
		if msg.err == nil && msg.dir == d.dir && d.det != nil {
			applyAnnotations(&d.det.Run, msg.ann)
			d.buildSummary()
		}
		if msg.by == d.id {
			return d, annotatedStatus(msg)
		}
		return d, nil
	case common.CopiedMsg:
		if msg.To == d.id {
			return d, copiedStatus(msg)
		}
		return d, nil
	case tea.WindowSizeMsg:
		// SetSize has resized the table; a taller view may reach past
		// the page that is loaded, and nothing else would ask for it.
		return d, d.req.ensurePage(d)
	case tea.KeyMsg:
		return d, d.handleKey(msg)
	}
	return d, nil
}

func (d *Detail) handleKey(msg tea.KeyMsg) tea.Cmd {
	if cmd, ok := d.copy.key(msg); ok {
		return cmd
	}
	k := d.keys
	switch {
	case key.Matches(msg, k.Back):
		return common.Pop
	case key.Matches(msg, k.Next):
		d.tab = (d.tab + 1) % 3
		return d.req.ensurePage(d)
	case key.Matches(msg, k.Prev):
		d.tab = (d.tab + 2) % 3
		return d.req.ensurePage(d)
	case key.Matches(msg, k.Summary):
		d.tab = tabSummary
		return nil
	case key.Matches(msg, k.Charts):
		d.tab = tabCharts
		return nil
	case key.Matches(msg, k.Requests):
		d.tab = tabRequests
		return d.req.ensurePage(d)
	case key.Matches(msg, k.Filter), key.Matches(msg, k.FilterBack):
		step := 1
		if key.Matches(msg, k.FilterBack) {
			step = len(runs.Filters) - 1
		}
		return d.req.setFilter(d, runs.Filters[(int(d.req.filter)+step)%len(runs.Filters)])
	case key.Matches(msg, k.Delete):
		if d.det != nil {
			if err := runs.DeleteRefusal(&d.det.Run); err != nil {
				return common.Failure(err)
			}
		}
		return common.Push(confirmDelete(d.c, shortID(d.dir), d.dir, d.id))
	case key.Matches(msg, k.Export):
		return common.Push(NewExport(d.c, d.dir))
	case key.Matches(msg, k.NewR):
		return loadConfigCmd(d.dir, d.id)
	case key.Matches(msg, k.Report):
		return common.Open(common.OpenReport{Runs: []string{d.dir}})
	case d.det != nil && key.Matches(msg, k.Copy):
		return d.copy.open(NewCopy(d.c, &d.det.Run, d.id))
	case d.det != nil && key.Matches(msg, k.Rename):
		return common.Push(NewRename(d.c, &d.det.Run, d.id))
	case d.det != nil && key.Matches(msg, k.Annotate):
		return common.Push(NewNote(d.c, &d.det.Run, d.id))
	}
	switch d.tab {
	case tabSummary:
		k.Scroll(&d.summary, msg)
	case tabRequests:
		n := d.req.visible()
		switch {
		case key.Matches(msg, k.Open):
			return d.openReceipt()
		case key.Matches(msg, k.Up):
			d.req.move(-1)
		case key.Matches(msg, k.Down):
			d.req.move(1)
		case key.Matches(msg, k.PageUp):
			d.req.move(-n)
		case key.Matches(msg, k.PageDown):
			d.req.move(n)
		case key.Matches(msg, k.Top):
			d.req.move(-d.req.total())
		case key.Matches(msg, k.Bottom):
			d.req.move(d.req.total())
		}
		return d.req.ensurePage(d)
	}
	return nil
}

// openReceipt shows the request under the cursor whole, read again from
// its line so that every recorded field is there.
func (d *Detail) openReceipt() tea.Cmd {
	r := d.req.row(d.req.cursor)
	if r == nil {
		return nil
	}
	rec := NewReceipt(d.c, r, nil)
	rec.setContext(d.req.receiptContext(r))
	if d.idx != nil && d.req.cursor < len(d.req.sel) {
		return tea.Sequence(common.Push(rec), rec.readRaw(d.idx, d.req.sel[d.req.cursor]))
	}
	return common.Push(rec)
}

func (d *Detail) View() string {
	s := d.c.Styles
	head := d.headerView()
	var tabs []string
	for i, n := range tabNames {
		label := fmt.Sprintf("%d %s", i+1, n)
		if tab(i) == d.tab {
			tabs = append(tabs, s.Selected.Render("["+label+"]"))
		} else {
			tabs = append(tabs, s.Muted.Render(" "+label+" "))
		}
	}
	tabLine := strings.Join(tabs, " ")
	if d.tab != tabSummary {
		tabLine += s.Muted.Render("   filter: ") + d.filterView()
	}
	var body string
	switch {
	case d.detErr != nil:
		body = s.StatusError.Render(common.ErrorText(d.detErr))
	case d.tab == tabSummary:
		if d.det == nil {
			body = s.Muted.Render("Reading the summary …")
		} else {
			body = d.summary.View()
		}
	case d.tab == tabCharts:
		body = d.chartsView()
	case d.tab == tabRequests:
		body = d.req.view(d)
	}
	out := lipgloss.JoinVertical(lipgloss.Left, head, ansi.Truncate(tabLine, max(d.width, 1), "…"), body)
	return lipgloss.NewStyle().MaxWidth(max(d.width, 1)).MaxHeight(max(d.height, 1)).Render(out)
}

func (d *Detail) filterView() string {
	s := d.c.Styles
	var parts []string
	for _, f := range runs.Filters {
		name := f.String()
		if f == d.req.filter {
			parts = append(parts, s.Selected.Render("["+name+"]"))
		} else {
			parts = append(parts, s.Muted.Render(name))
		}
	}
	return strings.Join(parts, " ")
}

// age says how long ago t was, roughly.
func age(now, t time.Time) string {
	dd := now.Sub(t)
	switch {
	case t.IsZero() || dd < 0:
		return ""
	case dd < time.Minute:
		return "just now"
	case dd < time.Hour:
		return fmt.Sprintf("%d min ago", int(dd.Minutes()))
	case dd < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(dd.Hours()))
	}
	return fmt.Sprintf("%d days ago", int(dd.Hours()/24))
}

func (d *Detail) headerView() string {
	s := d.c.Styles
	w := max(d.width, 1)
	if d.det == nil {
		return ansi.Truncate(s.Bold.Render(shortID(d.dir)), w, "…") + "\n"
	}
	r := &d.det.Run
	st := r.Status()
	line1 := s.Bold.Render(r.ID) + "  " + common.RunStatusStyle(s, st).Render(string(st))
	if !r.StartedAt.IsZero() {
		line1 += s.Muted.Render("  started " + r.StartedAt.Local().Format(startedLayout))
		if a := age(d.c.Now(), r.StartedAt); a != "" {
			line1 += s.Muted.Render(" (" + a + ")")
		}
	}
	line2 := strings.Join(common.RunInfo(r), s.Muted.Render(" · "))
	if r.Note != "" {
		line2 += s.Muted.Render("  note: ") + oneLine(r.Note)
	}
	if n := d.det.Corrupt; n > 0 {
		line2 += s.Warn.Render(fmt.Sprintf("  %d unreadable line(s) skipped", n))
	}
	return ansi.Truncate(line1, w, "…") + "\n" + ansi.Truncate(line2, w, "…")
}

// summaryColumn is the width of one section of the summary.
const summaryColumn = 38

func (d *Detail) buildSummary() {
	s := d.c.Styles
	d.summaryBuilt = d.width
	var blocks []string
	add := func(title string, rows [][2]string) {
		if len(rows) == 0 {
			return
		}
		lines := []string{s.PanelTitle.Render(title)}
		for _, r := range rows {
			label, value := r[0], r[1]
			if label == "" {
				// A note (a reason in words): wrapped whole.
				for _, l := range common.Wrap(value, summaryColumn-2) {
					lines = append(lines, "  "+s.Muted.Render(l))
				}
				continue
			}
			if room := summaryColumn - ansi.StringWidth(label) - 1; ansi.StringWidth(value) > room && strings.HasPrefix(value, "/") {
				// Keep the end of a long path (the run folder's name).
				value = ansi.TruncateLeft(value, ansi.StringWidth(value)-room+1, "…")
			} else if ansi.StringWidth(value) > room {
				// Other long values go under their label, wrapped, never cut.
				lines = append(lines, label)
				// Text breaks at its spaces only (never inside 80,000);
				// a list or a path without spaces at , and / too.
				breaks := " ,/"
				if strings.Contains(value, " ") {
					breaks = ""
				}
				wrapped := ansi.Hardwrap(ansi.Wordwrap(value, summaryColumn-2, breaks), summaryColumn-2, true)
				for _, l := range strings.Split(wrapped, "\n") {
					lines = append(lines, "  "+l)
				}
				continue
			}
			gap := max(summaryColumn-ansi.StringWidth(label)-ansi.StringWidth(value), 1)
			lines = append(lines, label+strings.Repeat(" ", gap)+value)
		}
		blocks = append(blocks, strings.Join(lines, "\n"))
	}
	det := d.det
	r := &det.Run
	run := [][2]string{{"Status", string(r.Status())}}
	if r.Name != r.RecordedName {
		run = append(run, [2]string{"Name", r.Name}, [2]string{"Recorded name", orDash(r.RecordedName)})
	}
	if r.Note != "" {
		run = append(run, [2]string{"Note", r.Note})
	}
	if det.Summary.Run.FinishedAt != "" {
		run = append(run, [2]string{"Finished", fmtTime(det.Summary.Run.FinishedAt)})
	}
	if r.Complete {
		run = append(run, [2]string{"Exit code", fmt.Sprint(r.ExitCode)})
	}
	if v := det.Summary.Tool.Version; v != "" {
		run = append(run, [2]string{"kvbench", v})
	}
	if !r.Complete {
		run = append(run, [2]string{"Summary", "from requests.jsonl"})
	}
	if n := r.ShardNote(); n != "" {
		run = append(run, [2]string{"Merged from", n})
		skew := runs.FormatValue(r.StartSkewMs, "ms")
		if r.StartSkewMs != nil {
			skew += " ms"
		}
		run = append(run, [2]string{"Largest start skew", skew})
	}
	add("Run", run)
	// The workload's verdict on its own expectation, beside the run's
	// status: the first thing a reader checks.
	if e := record.WorkloadExpectation(det.Summary); e != nil {
		add("Expectation", [][2]string{
			{"Verdict", common.ExpectationStyle(s, e.Verdict).Render(record.VerdictText(e.Verdict))},
			{"Expected", e.Expected},
			{"Observed", e.Reason},
		})
	}

	// Every figure as the text summary labels it (report.Shown): the
	// same table of labels as the terminal's summary and the report.
	for _, sec := range report.Shown(det.Summary, r.Complete) {
		switch sec.Title {
		case "Configuration", "Expectation", "KV cache":
			// The header, the panel above and the headline say these.
			continue
		}
		rows := make([][2]string, 0, len(sec.Rows))
		for _, row := range sec.Rows {
			rows = append(rows, [2]string{row.Label, row.Value})
		}
		add(sec.Title, rows)
	}
	add("Config", rowsOf(report.ConfigShown(configOf(det.Summary.Config, det.Config))))
	add("Workload", rowsOf(report.ShownPairs(det.Summary.Workload, "expectation")))

	content := masonry(blocks, d.width)
	if h := d.headline(); h != "" {
		content = h + "\n\n" + content
	}
	d.summary.SetContent(content)
}

// headline is the summary's headline across the width, first: the
// verdict in its colour, hit ratio, cold vs reused TTFT and the speedup
// (the terminal's and the report's words), then what limited the run;
// "" for a summary written before headlines.
func (d *Detail) headline() string {
	h := d.det.Summary.Headline
	if h == nil {
		return ""
	}
	s := d.c.Styles
	line := report.HeadlineLine(h)
	words := report.VerdictWords(h.Verdict)
	vs := s.Bold
	if h.Verdict != nil {
		vs = common.ExpectationStyle(s, *h.Verdict).Bold(true)
	}
	w := max(d.width, 20)
	out := []string{common.WrapStyled(lipgloss.NewStyle(), vs.Render(words)+s.Bold.Render(strings.TrimPrefix(line, words)), w, 0)}
	for _, why := range h.LimitedBy {
		out = append(out, common.WrapStyled(s.Warn, "! limited by: "+why, w, 2))
	}
	return strings.Join(out, "\n")
}

// rowsOf are display rows as label/value pairs.
func rowsOf(rows []report.Row) [][2]string {
	out := make([][2]string, len(rows))
	for i, r := range rows {
		out[i] = [2]string{r.Label, r.Value}
	}
	return out
}

func fmtTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// masonry lays blocks out in as many columns as fit width, each block
// going to the shortest column.
func masonry(blocks []string, width int) string {
	ncol := max(1, (width+3)/(summaryColumn+3))
	cols := make([][]string, ncol)
	heights := make([]int, ncol)
	for _, b := range blocks {
		best := 0
		for i := range heights {
			if heights[i] < heights[best] {
				best = i
			}
		}
		cols[best] = append(cols[best], b)
		heights[best] += lipgloss.Height(b) + 1
	}
	rendered := make([]string, 0, ncol)
	for i, c := range cols {
		if len(c) == 0 {
			continue
		}
		st := lipgloss.NewStyle().Width(summaryColumn)
		if i < ncol-1 {
			st = st.MarginRight(3)
		}
		rendered = append(rendered, st.Render(strings.Join(c, "\n\n")))
	}
	return lipgloss.JoinHorizontal(lipgloss.Top, rendered...)
}

// configOf is the run's config: the summary's block, else config.json.
func configOf(summaryConfig any, configJSON json.RawMessage) any {
	switch v := summaryConfig.(type) {
	case nil:
	case json.RawMessage:
		if len(v) > 0 {
			return v
		}
	default:
		return v
	}
	if len(configJSON) == 0 {
		return nil
	}
	return configJSON
}

// flatten lists an object's keys in order, nested objects as a.b, values
// as compact JSON (strings unquoted).
func flatten(v any) [][2]string {
	var b []byte
	switch t := v.(type) {
	case json.RawMessage:
		b = t
	case nil:
		return nil
	default:
		b, _ = json.Marshal(t)
	}
	var out [][2]string
	var walk func(prefix string, raw json.RawMessage)
	walk = func(prefix string, raw json.RawMessage) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			out = append(out, [2]string{prefix, scalar(raw)})
			return
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return
			}
			k, _ := tok.(string)
			var val json.RawMessage
			if dec.Decode(&val) != nil {
				return
			}
			name := k
			if prefix != "" {
				name = prefix + "." + k
			}
			walk(name, val)
		}
	}
	walk("", b)
	return out
}

// scalar is a value as one table cell: a string unquoted, on one line.
func scalar(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return textclean.Line(s)
	}
	var c bytes.Buffer
	if json.Compact(&c, raw) == nil {
		return c.String()
	}
	return string(raw)
}

func (d *Detail) chartsView() string {
	s := d.c.Styles
	switch {
	case d.idxErr != nil:
		return s.StatusError.Render(common.ErrorText(d.idxErr))
	case d.idx == nil:
		return s.Muted.Render("Indexing requests … the charts appear when every line is read.")
	}
	x := d.idx
	h := d.bodyHeight()
	show := func(state string) bool {
		switch d.req.filter {
		case runs.Cold, runs.Reused, runs.Unverified:
			return state == d.req.filter.String()
		}
		return true
	}
	// The measured requests, as the Summary tab counts them; the
	// warmup's are a series of their own, drawn apart.
	counts := map[string]int{}
	for _, st := range states {
		counts[st] = x.CountMeasured(filterOf(st))
	}
	warm := len(x.WarmupTTFTs)
	ttfts := x.MeasuredTTFTs
	yMax := nearest(ttfts, 99.5) * 1.1
	if len(ttfts) == 0 {
		for _, p := range x.Points {
			yMax = max(yMax, p.TTFT)
		}
	}
	if warm > 0 && d.req.filter == runs.All {
		// The warmup's dots stay on the chart.
		yMax = max(yMax, float64(x.WarmupTTFTs[len(x.WarmupTTFTs)-1])*1.05)
	}
	// The titles wrap on a narrow screen; the charts share what is left.
	w := max(d.width, 1)
	head := common.WrapStyled(lipgloss.NewStyle(), s.PanelTitle.Render("TTFT (ms) over the run")+"  "+legend(s, counts, show, warm, d.req.filter == runs.All), w, 2)
	// The summary's percentiles (linear), written as its figures are.
	pct := func(p float64) string { return report.Figure{Unit: "ms"}.ShowNumber(linear(ttfts, p)) }
	caption := common.WrapStyled(lipgloss.NewStyle(), s.PanelTitle.Render("TTFT distribution")+s.Muted.Render(fmt.Sprintf(", %s: p50 %s · p90 %s · p99 %s ms",
		measuredWords(len(ttfts)), pct(50), pct(90), pct(99))), w, 2)
	avail := max(h-2-lipgloss.Height(head)-lipgloss.Height(caption), 4)
	// The hit ratio per second (the summary's series), when the summary
	// has one: where it falls, eviction started. With room for three
	// charts it sits between the two; on a short screen it takes the
	// histogram's place (the caption's percentiles stay).
	var hits string
	noHist := false
	if d.det != nil && d.det.Summary != nil && avail >= 9 {
		hh := 5
		if avail >= 16 {
			hh = max(avail*30/100, 5)
		}
		if c := hitChart(d.det.Summary.Series, measuredStart(x.Points), x.Span, d.width, hh-1, s); c != "" {
			const name = "Hit ratio per second (%)"
			how := ", cached / prompt tokens of the requests that finished in each second"
			if len(name+how) > w {
				how = ", cached / prompt tokens"
			}
			title := ansi.Truncate(s.PanelTitle.Render(name)+s.Muted.Render(how), w, "…")
			hits = title + "\n" + c
			noHist = avail < 16
			avail -= lipgloss.Height(hits)
		}
	}
	hs := max(avail*55/100, 3)
	if noHist {
		// The histogram's axis rows are the scatter's too.
		hs = avail + 2
	}
	hh := max(avail-hs, 3)
	top := lipgloss.JoinVertical(lipgloss.Left, head,
		scatter(x.Points, show, d.req.filter == runs.All, x.Span, yMax, d.width, hs, s),
	)
	if hits != "" {
		top = lipgloss.JoinVertical(lipgloss.Left, top, hits)
	}
	hi := nearest(ttfts, 99.5)
	var bottom string
	switch {
	case len(ttfts) == 0:
		bottom = caption + "\n" + s.Muted.Render("no successful measured request with a first token")
	case noHist:
		bottom = caption
	default:
		bottom = lipgloss.JoinVertical(lipgloss.Left, caption, histogram(ttfts, hi, d.width, hh, s))
	}
	return lipgloss.JoinVertical(lipgloss.Left, top, bottom)
}

// measuredWords is "1 measured request", "27 measured requests".
func measuredWords(n int) string {
	if n == 1 {
		return "1 measured request"
	}
	return fmt.Sprintf("%d measured requests", n)
}

// linear is the p-th percentile of sorted values, interpolated as the
// summary's figures are (stats.Linear); nil without a value.
func linear(sorted []float32, p float64) *float64 {
	if len(sorted) == 0 {
		return nil
	}
	v := make([]float64, len(sorted))
	for i, x := range sorted {
		v[i] = float64(x)
	}
	out := stats.Linear(v, p)
	return &out
}

func filterOf(state string) runs.Filter {
	switch state {
	case sender.StateCold:
		return runs.Cold
	case sender.StateReused:
		return runs.Reused
	}
	return runs.Unverified
}

func (d *Detail) ShortHelp() []key.Binding {
	k := d.keys
	switch d.tab {
	case tabSummary:
		return []key.Binding{k.Next, k.Down, k.Delete, k.Export, k.NewR}
	case tabRequests:
		return []key.Binding{k.Next, k.Down, k.Open, k.Filter, k.Delete}
	}
	return []key.Binding{k.Next, k.Down, k.Filter, k.Delete, k.Export}
}

func (d *Detail) FullHelp() [][]key.Binding {
	k := d.keys
	return [][]key.Binding{
		{k.Next, k.Prev, k.Summary, k.Charts, k.Requests, k.Back},
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Open, k.Filter, k.FilterBack, k.Delete, k.Export, k.NewR, k.Report},
		{k.Copy, k.Rename, k.Annotate},
	}
}
