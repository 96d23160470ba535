package results

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/screens/common"
)

// Receipt is one request of a run, whole: its timings, then every field
// of its requests.jsonl line in the file's order, the error in full.
type Receipt struct {
	c             *common.Common
	id            string
	width, height int
	keys          receiptKeys
	vp            viewport.Model

	raw []byte // the line as recorded
	err error
	ctx receiptContext
}

type receiptKeys struct {
	common.ScrollKeys
	Back key.Binding
}

// NewReceipt shows the request r of the run; raw is its line as it is in
// the file (nil before it is read: Init reads it from line n of idx).
func NewReceipt(c *common.Common, r *sender.Result, raw []byte) *Receipt {
	if raw == nil {
		raw, _ = json.Marshal(r)
	}
	d := &Receipt{c: c, id: r.RequestID, raw: raw, vp: viewport.New(0, 0),
		keys: receiptKeys{ScrollKeys: c.KeyMap.Scroll("top", "bottom"), Back: c.KeyMap.Back}}
	d.SetSize(c.Width, c.Height)
	return d
}

type rawMsg struct {
	to  *Receipt
	raw []byte
	err error
}

// readRaw reads line n of the index into the receipt.
func (d *Receipt) readRaw(x *runs.Index, n int32) tea.Cmd {
	return func() tea.Msg {
		raw, err := x.Raw(n)
		return rawMsg{to: d, raw: raw, err: err}
	}
}

func (d *Receipt) Init() tea.Cmd { return nil }

func (d *Receipt) Title() string { return "request " + d.id }
func (d *Receipt) Typing() bool  { return false }

func (d *Receipt) SetSize(w, h int) {
	d.width, d.height = w, h
	d.vp.Width, d.vp.Height = max(w, 1), max(h-1, 1)
	d.vp.SetContent(d.content())
}

func (d *Receipt) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case rawMsg:
		if msg.to == d {
			if msg.err != nil {
				d.err = msg.err
			} else {
				d.raw = msg.raw
			}
			d.vp.SetContent(d.content())
		}
	case tea.KeyMsg:
		if key.Matches(msg, d.keys.Back) {
			return d, common.Pop
		}
		d.keys.Scroll(&d.vp, msg)
	}
	return d, nil
}

// fields lists the line's keys and values in order, values as compact
// JSON with strings unquoted, null as "null".
func fields(raw []byte) [][2]string { return flatten(json.RawMessage(raw)) }

func (d *Receipt) content() string {
	s := d.c.Styles
	w := max(d.width, 20)
	var r sender.Result
	_ = json.Unmarshal(d.raw, &r)
	var b []string
	if d.err != nil {
		b = append(b, s.StatusError.Render(common.ErrorText(d.err)), "")
	}
	// Timings first: what a reader looks for, in milliseconds from the
	// request's submission.
	ms := func(v *float64) string {
		if v == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.1f ms", *v*1000)
	}
	var first *float64
	if r.FirstTokenTime != nil {
		v := *r.FirstTokenTime - r.SubmitTime
		first = &v
	}
	total := r.FinishTime - r.SubmitTime
	b = append(b, s.PanelTitle.Render("Timings"),
		fmt.Sprintf("  first token  %s", ms(first)),
		fmt.Sprintf("  finished     %s", ms(&total)),
		fmt.Sprintf("  TTFT         %s", ms(r.TTFT)),
		fmt.Sprintf("  latency      %s", ms(&r.RequestLatency)),
		"")
	if sec := d.traceSection(&r, w); len(sec) > 0 {
		b = append(b, append(sec, "")...)
	}
	if sec := d.qualitySection(&r, w); len(sec) > 0 {
		b = append(b, append(sec, "")...)
	}
	b = append(b, s.PanelTitle.Render("Receipt")+s.Muted.Render("  every field of its requests.jsonl line"))
	kvs := fields(d.raw)
	labelW := 0
	for _, kv := range kvs {
		labelW = max(labelW, ansi.StringWidth(kv[0]))
	}
	labelW = min(labelW, 24)
	valueW := max(w-labelW-4, 16)
	for _, kv := range kvs {
		label := fmt.Sprintf("  %-*s  ", labelW, kv[0])
		style := lipgloss.NewStyle()
		if (kv[0] == "error" || kv[0] == "error_detail") && kv[1] != "null" {
			style = s.StatusError
		}
		lines := strings.Split(ansi.Hardwrap(ansi.Wordwrap(kv[1], valueW, " ,"), valueW, true), "\n")
		for i, l := range lines {
			if i > 0 {
				label = strings.Repeat(" ", labelW+4)
			}
			b = append(b, s.Muted.Render(label)+style.Render(l))
		}
	}
	return strings.Join(b, "\n")
}

func (d *Receipt) View() string {
	pos := ""
	if d.vp.TotalLineCount() > d.vp.Height {
		pos = fmt.Sprintf("%d%%", int(d.vp.ScrollPercent()*100))
	}
	return d.vp.View() + "\n" + d.c.Styles.Muted.Render(pos)
}

func (d *Receipt) ShortHelp() []key.Binding {
	return []key.Binding{d.keys.Up, d.keys.Down, d.keys.PageDown, d.keys.Back}
}

func (d *Receipt) FullHelp() [][]key.Binding {
	k := d.keys
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Back}}
}
