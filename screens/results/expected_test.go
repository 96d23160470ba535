package results_test

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/muesli/termenv"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/results"
)

// traceRun writes a trace-replay run: a request above its LRU figure,
// one as expected, one more than an engine block below, one unverified.
func traceRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	w, err := record.Create(dir, config.TraceReplay, "", t0)
	if err != nil {
		t.Fatal(err)
	}
	ip := func(v int) *int { return &v }
	for i, c := range []struct {
		prompt        int
		cached        *int
		exp, lru      int
		state         string
		ttftMs, latMs float64
	}{
		{1024, ip(1024), 1040, 512, sender.StateReused, 20, 120},
		{300, ip(240), 256, 240, sender.StateReused, 30, 130},
		{600, ip(448), 512, 512, sender.StateReused, 40, 140},
		{700, nil, 512, 512, sender.StateUnverified, 50, 150},
	} {
		ttft := c.ttftMs / 1000
		r := &sender.Result{RequestID: fmt.Sprintf("trace_%d", i), Phase: sender.PhaseMeasured, Successful: true, Complete: true,
			TTFT: &ttft, RequestLatency: c.latMs / 1000, PromptTokens: ip(c.prompt), CompletionTokens: ip(8), CachedTokens: c.cached,
			CacheState: c.state, TraceExpectation: &sender.TraceExpectation{ExpectedCachedTokens: c.exp, ExpectedCachedTokensLRU: ip(c.lru)}}
		if err := w.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	return w.Dir()
}

// openRequest opens the run's request tab, moves the cursor down n rows
// and opens that request's receipt (enter), as the root would: the
// pushed screen, then what its commands bring it.
func openRequest(t *testing.T, dir string, w, h, n int) (tea.Model, *results.Receipt) {
	t.Helper()
	d := results.NewDetail(newCommon(dir, w, h), dir)
	m, _ := drive(t, d, d.Init())
	m, _ = press(t, m, "3")
	for range n {
		m, _ = press(t, m, "down")
	}
	var rec *results.Receipt
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		msg := c()
		if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeOf(tea.Cmd(nil)) {
			// tea.Sequence: its commands in order.
			for i := range v.Len() {
				queue = append(queue, v.Index(i).Interface().(tea.Cmd))
			}
			continue
		}
		switch msg := msg.(type) {
		case common.PushMsg:
			rec = msg.Screen.(*results.Receipt)
		case nil:
		default:
			if rec != nil {
				var next tea.Cmd
				_, next = rec.Update(msg)
				queue = append(queue, next)
			}
		}
	}
	if rec == nil {
		t.Fatal("enter opened no receipt")
	}
	return m, rec
}

// A replayed trace's requests show the hit the trace predicted (with an
// unbounded cache and with the LRU of the KV budget) next to the one the
// engine reported and the deviation; a request more than one engine
// block under is marked, in colour and with "!"; other runs have none
// of these columns.
func TestDetailRequestsExpected(t *testing.T) {
	dir := traceRun(t)
	m, _ := openRequest(t, dir, 140, 30, 0)
	v := m.View()
	for _, re := range []string{
		`Cached +Expected +LRU +Dev +State`,
		`trace_0 .* 1024 +1040 +512 +\+512 +reused`,
		`trace_1 .* 240 +256 +240 +0 +reused`,
		`trace_2 .* 448 +512 +512 +-64! +reused`,
		`trace_3 .* - +512 +512 +- +unverified`,
	} {
		if !regexp.MustCompile(re).MatchString(v) {
			t.Errorf("requests lack %s:\n%s", re, v)
		}
	}
	if strings.Count(v, "!") != 1 {
		t.Errorf("only trace_2 is below expected:\n%s", v)
	}
	// Narrow, the expected columns stay beside Cached.
	m, _ = openRequest(t, dir, 60, 20, 0)
	if !regexp.MustCompile(`Cached +Expected`).MatchString(m.View()) || !regexp.MustCompile(`448 +512 +.*-64!`).MatchString(m.View()) {
		t.Errorf("at 60 columns:\n%s", m.View())
	}

	other := results.NewDetail(newCommon(dir, 140, 30), runDir(t, fixtureRuns(t), "slow"))
	m, _ = drive(t, other, other.Init())
	m, _ = press(t, m, "3")
	if strings.Contains(m.View(), "Expected") || strings.Contains(m.View(), "Dev") {
		t.Errorf("expectation columns for a workload without expectations:\n%s", m.View())
	}
}

// The below-expected request's observed hit and deviation are drawn in
// the warning colour, and only its.
func TestDetailRequestsBelowColour(t *testing.T) {
	prev := lipgloss.ColorProfile()
	lipgloss.SetColorProfile(termenv.ANSI)
	defer lipgloss.SetColorProfile(prev)
	dir := traceRun(t)
	c := newCommon(dir, 140, 30)
	warn := c.Styles.Warn.Render("x")
	warnOn := warn[:strings.Index(warn, "x")]
	d := results.NewDetail(c, dir)
	m, _ := drive(t, d, d.Init())
	m, _ = press(t, m, "3")
	// A number in the warning colour (the unverified state shares it).
	warnNumber := regexp.MustCompile(regexp.QuoteMeta(warnOn) + ` *([-+]?\d+!?)`)
	for _, l := range strings.Split(m.View(), "\n") {
		var got []string
		for _, sm := range warnNumber.FindAllStringSubmatch(l, -1) {
			got = append(got, sm[1])
		}
		switch {
		case strings.Contains(l, "trace_2"):
			if strings.Join(got, " ") != "448 -64!" {
				t.Errorf("trace_2: %v in the warning colour, want Cached and Dev: %q", got, l)
			}
		case strings.Contains(l, "trace_"):
			if len(got) > 0 {
				t.Errorf("warning colour on a request that is not below: %q", l)
			}
		}
	}
}

// enter on a replayed request: its receipt says what was expected, what
// was observed and whether it fell below.
func TestReceiptTraceExpectation(t *testing.T) {
	dir := traceRun(t)
	for n, want := range map[int][]string{
		0: {"cached (observed)  1024", "expected           1040 (unbounded cache)", "expected, LRU      512",
			"deviation          +512 tokens against the LRU of the KV budget", "verdict            above expected by 512 tokens"},
		1: {"deviation          +0 tokens against the LRU of the KV budget", "verdict            as expected"},
		2: {"cached (observed)  448", "deviation          -64 tokens against the LRU of the KV budget",
			"verdict            BELOW EXPECTED: 64 tokens short, more than one engine block (16 tokens)"},
		3: {"cached (observed)  -", "verdict            not judged: the engine reported no usable cached_tokens (unverified)"},
	} {
		_, rec := openRequest(t, dir, 120, 60, n)
		v := rec.View()
		for _, w := range want {
			if !strings.Contains(v, w) {
				t.Errorf("trace_%d receipt lacks %q:\n%s", n, w, v)
			}
		}
		if !strings.Contains(v, "Cache against the trace") || !strings.Contains(v, "expected_cached_tokens_lru") {
			t.Errorf("trace_%d receipt:\n%s", n, v)
		}
	}
	_, rec := openRequest(t, dir, 80, 24, 2)
	golden.RequireEqual(t, []byte(rec.View()))
}

// ragRun writes a rag-qa-quality run of three samples (two warmups
// before them) with its rag_qa_quality.json.
func ragRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	// A UTC start: the receipt shows submit times, the same in every zone.
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	run := runstest.Write(t, dir, runstest.Spec{Name: "rag", Workload: config.RAGQAQuality, Started: start, Requests: 3, Warmup: 2, Summary: true})
	runstest.WriteRAGQuality(t, run, "0123456789abcdef", []runstest.RAGSample{
		{ID: "2hop_1", F1: runstest.F1(1), Answer: "Paris", Gold: []string{"Paris", "City of Light"}, TTFTms: 100},
		{ID: "2hop_2", F1: runstest.F1(0.5), Answer: "Berlin Germany", Gold: []string{"Berlin"}, TTFTms: 90},
		{ID: "3hop_3", Gold: []string{"Rome", "Roma"}, TTFTms: 80},
	})
	return run
}

// A rag-qa-quality run's requests show each sample's F1; its receipt the
// sample, the extracted answer and the gold answers.
func TestDetailRequestsRAGQuality(t *testing.T) {
	run := ragRun(t)
	m, _ := openRequest(t, run, 120, 30, 0)
	v := m.View()
	for _, re := range []string{
		`State +F1 +Error`,
		`warmup-0 .* cold +\n`,
		`req-0 .* cold +1\.000`,
		`req-1 .* cold +0\.500`,
		`req-2 .* cold +n/a`,
	} {
		if !regexp.MustCompile(re).MatchString(v) {
			t.Errorf("requests lack %s:\n%s", re, v)
		}
	}
	for n, want := range map[int][]string{
		2: {"Answer quality  rag_qa_quality.json", "sample        2hop_1", "F1            1.000", "answer        Paris", "gold answers  Paris | City of Light"},
		3: {"sample        2hop_2", "F1            0.500", "answer        Berlin Germany", "gold answers  Berlin"},
		4: {"sample        3hop_3", "F1            n/a (no final answer parsed)", "answer        (none: no <final_answer> region)", "gold answers  Rome | Roma"},
	} {
		_, rec := openRequest(t, run, 120, 60, n)
		for _, w := range want {
			if !strings.Contains(rec.View(), w) {
				t.Errorf("request %d's receipt lacks %q:\n%s", n, w, rec.View())
			}
		}
	}
	// A warmup is no sample: no quality section.
	if _, rec := openRequest(t, run, 120, 60, 0); strings.Contains(rec.View(), "Answer quality") {
		t.Errorf("a warmup's receipt:\n%s", rec.View())
	}
	_, rec := openRequest(t, run, 80, 24, 3)
	golden.RequireEqual(t, []byte(rec.View()))
}

// A rag-qa-quality run whose file is missing says so in a measured
// request's receipt, and its table still opens.
func TestDetailRAGQualityMissing(t *testing.T) {
	dir := t.TempDir()
	run := runstest.Write(t, dir, runstest.Spec{Name: "rag", Workload: config.RAGQAQuality, Started: t0, Requests: 2, Summary: true})
	m, rec := openRequest(t, run, 120, 40, 1)
	if !strings.Contains(m.View(), "F1") || !strings.Contains(rec.View(), "has no rag_qa_quality.json") {
		t.Errorf("table:\n%s\nreceipt:\n%s", m.View(), rec.View())
	}
}
