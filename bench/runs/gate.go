package runs

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Regression gates for CI (spec/stats.md): metric[:state]:THRESHOLD.

// GateKind is how a gate judges its row.
type GateKind int

const (
	// Relative: B significantly worse than A by more than Threshold
	// percent (+5% for latencies, -5% for throughputs).
	Relative GateKind = iota
	// PointDrop: B significantly worse than A by more than Threshold
	// percentage points (hit_ratio:-2pp, error_rate:+1pp).
	PointDrop
	// Limit: B's value beyond Threshold (a ceiling for lower-is-better
	// metrics, a floor otherwise), whatever A.
	Limit
)

// Gate is one parsed gate.
type Gate struct {
	Text          string // as given
	Metric, State string
	Kind          GateKind
	// Threshold is in percent (Relative), points (PointDrop), or the
	// metric's own unit (Limit: ms, req/s, tok/s, or a share 0..1).
	Threshold float64
	m         Metric
}

// ParseGates reads comma-separated gates (each flag value may hold
// several). An error names the gate and says what is expected.
func ParseGates(values []string) ([]Gate, error) {
	var out []Gate
	for _, v := range values {
		for _, g := range strings.Split(v, ",") {
			g = strings.TrimSpace(g)
			if g == "" {
				continue
			}
			p, err := parseGate(g)
			if err != nil {
				return nil, fmt.Errorf("--gate %q: %v", g, err)
			}
			out = append(out, p)
		}
	}
	return out, nil
}

func parseGate(text string) (Gate, error) {
	parts := strings.Split(text, ":")
	g := Gate{Text: text}
	switch len(parts) {
	case 2:
	case 3:
		g.State = parts[1]
	default:
		return g, fmt.Errorf("want metric[:state]:threshold, e.g. ttft_p50:+5%%")
	}
	m, ok := LookupMetric(parts[0])
	if !ok {
		keys := make([]string, len(Metrics))
		for i, m := range Metrics {
			keys[i] = m.Key
		}
		return g, fmt.Errorf("unknown metric %q (known: %s)", parts[0], strings.Join(keys, ", "))
	}
	g.Metric, g.m = m.Key, m
	if g.State != "" {
		if m.Kind != Latency {
			return g, fmt.Errorf("%s has no cache states (only the latency metrics do)", m.Key)
		}
		if stateSlot(g.State) < 0 {
			return g, fmt.Errorf("unknown cache state %q (cold or reused)", g.State)
		}
	}
	th := parts[len(parts)-1]
	sign := 0
	switch {
	case strings.HasPrefix(th, "+"):
		sign, th = 1, th[1:]
	case strings.HasPrefix(th, "-"):
		sign, th = -1, th[1:]
	}
	num := func(s string) (float64, error) {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return 0, fmt.Errorf("%q is not a number >= 0", s)
		}
		return v, nil
	}
	worse := "+"
	if !m.Lower {
		worse = "-"
	}
	var err error
	switch {
	case sign != 0 && strings.HasSuffix(th, "pp"):
		if !m.Points() {
			return g, fmt.Errorf("%s changes in percent, not points: e.g. %s:%s5%%", m.Key, m.Key, worse)
		}
		g.Kind = PointDrop
		g.Threshold, err = num(strings.TrimSuffix(th, "pp"))
	case sign != 0 && strings.HasSuffix(th, "%"):
		if m.Points() {
			return g, fmt.Errorf("%s changes in percentage points: e.g. %s:%s2pp, or a limit such as %s:%s", m.Key, m.Key, worse, m.Key, limitExample(m))
		}
		g.Kind = Relative
		g.Threshold, err = num(strings.TrimSuffix(th, "%"))
	case sign != 0:
		return g, fmt.Errorf("a relative gate ends in %% (or pp for shares): e.g. %s:%s5%%", m.Key, worse)
	default:
		g.Kind = Limit
		g.Threshold, err = parseLimit(m, th)
	}
	if err != nil {
		return g, err
	}
	if sign != 0 && (sign > 0) != m.Lower {
		way := "higher"
		if !m.Lower {
			way = "lower"
		}
		return g, fmt.Errorf("%s is worse when %s: write %s%s", m.Key, way, worse, th)
	}
	return g, nil
}

func limitExample(m Metric) string {
	switch {
	case m.Points():
		return "1%"
	case m.Kind == Latency:
		return "500ms"
	}
	return "100"
}

// parseLimit reads an absolute limit in the metric's unit.
func parseLimit(m Metric, th string) (float64, error) {
	bad := func() (float64, error) {
		what := map[Kind]string{Latency: "a duration such as 500ms or 2s", Throughput: "a number in " + m.Unit,
			HitRatio: "a share such as 80%", ErrorRate: "a share such as 1%"}[m.Kind]
		return 0, fmt.Errorf("a limit on %s is %s (a relative gate has a sign: %s)", m.Key, what, relExample(m))
	}
	var s string
	scale := 1.0
	switch m.Kind {
	case Latency:
		switch {
		case strings.HasSuffix(th, "ms"):
			s = strings.TrimSuffix(th, "ms")
		case strings.HasSuffix(th, "s"):
			s, scale = strings.TrimSuffix(th, "s"), 1000
		default:
			return bad()
		}
	case Throughput:
		s = th
	default:
		if !strings.HasSuffix(th, "%") {
			return bad()
		}
		s, scale = strings.TrimSuffix(th, "%"), 0.01
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return bad()
	}
	return v * scale, nil
}

func relExample(m Metric) string {
	switch {
	case m.Points() && m.Lower:
		return m.Key + ":+1pp"
	case m.Points():
		return m.Key + ":-2pp"
	case m.Lower:
		return m.Key + ":+5%"
	}
	return m.Key + ":-5%"
}

// GateResult is one gate judged.
type GateResult struct {
	Gate   string `json:"gate"`
	Passed bool   `json:"passed"`
	Reason string `json:"reason"`
	// Row is the row it judged (nil when there is none).
	Row *Row `json:"-"`
}

// Judge evaluates the gates against the rows and keeps the results; it
// reports whether all passed.
func (t *Tested) Judge(gates []Gate) bool {
	t.Gates = nil
	all := true
	for _, g := range gates {
		res := t.judgeGate(g)
		all = all && res.Passed
		t.Gates = append(t.Gates, res)
	}
	return all
}

// Failed counts the failed gates.
func (t *Tested) Failed() int {
	n := 0
	for _, g := range t.Gates {
		if !g.Passed {
			n++
		}
	}
	return n
}

func (t *Tested) judgeGate(g Gate) GateResult {
	res := GateResult{Gate: g.Text}
	var row *Row
	for i := range t.Rows {
		if t.Rows[i].Metric == g.Metric && t.Rows[i].State == g.State {
			row = &t.Rows[i]
		}
	}
	if row == nil {
		res.Reason = fmt.Sprintf("no %s requests in A or B", g.State)
		return res
	}
	res.Row = row
	m := row.m
	if g.Kind == Limit {
		if row.B == nil {
			res.Reason = "B has no value (" + row.Note + ")"
			return res
		}
		b := FormatRowValue(row.B, m.Unit)
		lim := FormatRowValue(&g.Threshold, m.Unit)
		if m.Lower {
			res.Passed = *row.B <= g.Threshold
			res.Reason = fmt.Sprintf("B %s is within the limit of %s", b, lim)
			if !res.Passed {
				res.Reason = fmt.Sprintf("B %s is over the limit of %s", b, lim)
			}
		} else {
			res.Passed = *row.B >= g.Threshold
			res.Reason = fmt.Sprintf("B %s is at or above the floor of %s", b, lim)
			if !res.Passed {
				res.Reason = fmt.Sprintf("B %s is under the floor of %s", b, lim)
			}
		}
		return res
	}
	if row.A == nil || row.B == nil || row.Delta == nil {
		res.Reason = "cannot compare: " + row.Note
		return res
	}
	unit := "%"
	if g.Kind == PointDrop {
		unit = "pp"
	}
	sign := "+"
	if !m.Lower {
		sign = "-"
	}
	limit := fmt.Sprintf("%s%s%s", sign, strconv.FormatFloat(g.Threshold, 'f', -1, 64), unit)
	beyond := *row.Delta > g.Threshold
	if !m.Lower {
		beyond = *row.Delta < -g.Threshold
	}
	figures := row.Figures()
	switch {
	case row.Word == WordWorse && beyond:
		res.Reason = fmt.Sprintf("worse by %s, beyond %s", figures, limit)
	case row.Word == WordWorse:
		res.Passed = true
		res.Reason = fmt.Sprintf("worse by %s, within %s", figures, limit)
	case row.Word == WordBetter:
		res.Passed = true
		res.Reason = "better: " + figures
	case row.P == nil:
		res.Passed = true
		res.Reason = fmt.Sprintf("%s: not tested (%s); a gate fails only on a significant change", figures, row.Note)
	default:
		res.Passed = true
		res.Reason = fmt.Sprintf("%s: not significantly worse", figures)
	}
	return res
}

// Figures are a row's delta, interval and p in a few words:
// "+10.2% [+9.8%, +10.6%], p<0.001".
func (r *Row) Figures() string {
	s := FormatRowDelta(r)
	if r.CI95 != nil {
		s += " " + FormatCI(r)
	}
	if r.P != nil {
		s += ", p" + FormatPEq(*r.P)
	}
	return s
}

// junit is the JUnit XML CI systems read: one testsuite, one testcase
// per gate.
type junitSuite struct {
	XMLName    xml.Name        `xml:"testsuite"`
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure"`
	Output    string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the gates as JUnit XML.
func (t *Tested) WriteJUnit(w io.Writer) error {
	s := junitSuite{Name: "kvbench compare " + t.A.ID + " vs " + t.B.ID, Tests: len(t.Gates), Failures: t.Failed(), Time: "0",
		Properties: []junitProperty{{"a", t.A.ID}, {"b", t.B.ID}, {"alpha", strconv.FormatFloat(t.Alpha, 'g', -1, 64)}}}
	for _, g := range t.Gates {
		c := junitCase{Name: g.Gate, Classname: "kvbench.gate", Time: "0", Output: g.Reason}
		if !g.Passed {
			c.Failure = &junitFailure{Message: g.Reason, Type: "gate", Text: gateFigures(g)}
			c.Output = ""
		}
		s.Cases = append(s.Cases, c)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// gateFigures is a failed gate's row in full, for the failure element.
func gateFigures(g GateResult) string {
	r := g.Row
	if r == nil {
		return g.Reason
	}
	unit := r.m.Unit
	s := fmt.Sprintf("%s: A %s, B %s, delta %s", r.Key(), FormatRowValue(r.A, unit), FormatRowValue(r.B, unit), FormatRowDelta(r))
	if r.CI95 != nil {
		s += ", 95% interval " + FormatCI(r)
	}
	if r.P != nil {
		s += ", p " + FormatP(r.P)
	}
	s += ", " + r.Word
	if r.Note != "" {
		s += " (" + r.Note + ")"
	}
	return s
}
