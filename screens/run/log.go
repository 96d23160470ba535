package run

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/internal/textclean"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/theme"
)

// logKind decides how a log line is drawn.
type logKind int

const (
	logInfo logKind = iota
	logPhase
	logWarn
	logError
	logRequest
)

type logLine struct {
	at    time.Time
	kind  logKind
	text  string
	state string // cache state of a finished request
}

// ring is the bounded rolling log: the newest lines, oldest dropped.
type ring struct {
	lines []logLine
	start int // index of the oldest line when full
	full  bool
}

const logCapacity = 1000

// add keeps l; its text is cleaned for one line (textclean.Line): the
// log quotes engines' errors, model ids and paths.
func (r *ring) add(l logLine) {
	l.text = textclean.Line(l.text)
	if !r.full {
		r.lines = append(r.lines, l)
		if len(r.lines) == logCapacity {
			r.full = true
		}
		return
	}
	r.lines[r.start] = l
	r.start = (r.start + 1) % len(r.lines)
}

func (r *ring) len() int { return len(r.lines) }

// at returns the i-th oldest line.
func (r *ring) at(i int) logLine {
	return r.lines[(r.start+i)%len(r.lines)]
}

// fromEvent turns a runner event into a log line; ok is false for events
// the log does not show (a request sent).
func fromEvent(e bench.Event) (logLine, bool) {
	l := logLine{at: e.Time}
	switch e.Kind {
	case bench.RunStarted:
		l.kind, l.text = logPhase, "run started"
	case bench.PhaseChanged:
		l.kind = logPhase
		l.text = "phase " + e.Phase
		switch {
		case e.Total >= 0:
			l.text += ": " + report.Requests(e.Total)
		case e.Duration > 0:
			l.text += fmt.Sprintf(": %s", e.Duration)
		}
	case bench.LogLine:
		l.kind, l.text = logInfo, oneLine(e.Text)
		if e.Warn {
			l.kind = logWarn
		}
	case bench.RequestFinished:
		res := e.Result
		if res == nil {
			return l, false
		}
		id := res.RequestID
		if res.Phase != "" && res.Phase != "measured" {
			id += " (" + res.Phase + ")"
		}
		if !res.Successful {
			l.kind = logError
			msg := "failed"
			if res.Error != nil && *res.Error != "" {
				msg = *res.Error
			}
			if res.ErrorDetail != nil && *res.ErrorDetail != "" {
				msg += ": " + *res.ErrorDetail
			}
			l.text = id + " " + oneLine(msg)
			return l, true
		}
		l.kind, l.state = logRequest, res.CacheState
		ttft := "   n/a"
		if res.TTFT != nil {
			ttft = fmt.Sprintf("%6.1f ms", *res.TTFT*1000)
		}
		l.text = fmt.Sprintf("%s  ttft %s", id, ttft)
	default:
		return l, false
	}
	return l, true
}

// render draws one entry in rows of at most width cells: a message too
// long for one row goes on under itself, indented past the time, never
// cut.
func (l logLine) render(s *theme.Styles, width int) string {
	ts, tsW := "", 0
	if !l.at.IsZero() {
		ts, tsW = s.Muted.Render(l.at.Format("15:04:05"))+" ", 9
	}
	var mark, text string
	var style lipgloss.Style
	switch l.kind {
	case logPhase:
		mark, text, style = "» ", l.text, s.Bold
	case logWarn:
		mark, text, style = "! ", l.text, s.Warn
	case logError:
		mark, text, style = "✗ ", l.text, s.Error
	case logRequest:
		state := l.state
		if state == "" {
			state = "unverified"
		}
		return truncate(ts+"  "+l.text+"  "+s.State(state).Render(state), width)
	default:
		mark, text, style = "  ", l.text, lipgloss.NewStyle()
	}
	room := width - tsW - 2
	if room < 8 {
		return truncate(ts+style.Render(mark+text), width)
	}
	lines := common.Wrap(text, room)
	out := make([]string, len(lines))
	for i, t := range lines {
		if i == 0 {
			out[i] = ts + style.Render(mark+t)
		} else {
			out[i] = strings.Repeat(" ", tsW+2) + style.Render(t)
		}
	}
	return strings.Join(out, "\n")
}

// oneLine keeps a message on one line of the log.
func oneLine(s string) string {
	return strings.TrimRight(lineBreaks.Replace(s), " ")
}

var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ")

// finishLine is the log's last line: the exit code and why the workload's
// check failed, if it did.
func finishLine(now time.Time, f bench.Finish) logLine {
	at := now
	if f.Summary != nil {
		if t, err := time.Parse(time.RFC3339, f.Summary.Run.FinishedAt); err == nil {
			at = t
		}
	}
	l := logLine{at: at, kind: logPhase, text: fmt.Sprintf("run finished (exit %d)", f.ExitCode)}
	for _, r := range f.Reasons {
		l.text += "; " + r
	}
	return l
}
