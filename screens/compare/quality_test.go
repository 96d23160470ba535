package compare_test

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/muesli/termenv"

	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/compare"
	"github.com/kvbench/kvbench/screens/screentest"
	"github.com/kvbench/kvbench/theme"
)

// ragRuns writes two rag-qa-quality runs: B answers s2 better, parses
// s3 where A did not, and loses s4's answer.
func ragRuns(t *testing.T) (dir, a, b string) {
	t.Helper()
	dir = t.TempDir()
	a = runstest.Write(t, dir, runstest.Spec{Name: "a", Workload: config.RAGQAQuality, Started: t0, Requests: 4, Summary: true})
	b = runstest.Write(t, dir, runstest.Spec{Name: "b", Workload: config.RAGQAQuality, Started: t0.Add(time.Hour), Requests: 4, Summary: true, BaseTTFTms: 50})
	F := runstest.F1
	runstest.WriteRAGQuality(t, a, "0123456789abcdef", []runstest.RAGSample{
		{ID: "s1", F1: F(1), Answer: "Paris", TTFTms: 100},
		{ID: "s2", F1: F(0.5), Answer: "Berlin Germany", TTFTms: 120},
		{ID: "s3", TTFTms: 90},
		{ID: "s4", F1: F(1), Answer: "Rome", TTFTms: 80},
	})
	runstest.WriteRAGQuality(t, b, "0123456789abcdef", []runstest.RAGSample{
		{ID: "s1", F1: F(1), Answer: "Paris", TTFTms: 50},
		{ID: "s2", F1: F(1), Answer: "Berlin", TTFTms: 60},
		{ID: "s3", F1: F(0.4), Answer: "Rome Italy x", TTFTms: 70},
		{ID: "s4", TTFTms: 95},
	})
	return dir, a, b
}

// The answer quality of two rag-qa-quality runs: F1 beside TTFT for each
// sample, a rise in F1 in the OK colour and a fall (or a lost answer) in
// the error colour.
func TestQualitySection(t *testing.T) {
	prev := lipgloss.ColorProfile()
	lipgloss.SetColorProfile(termenv.ANSI)
	lipgloss.SetHasDarkBackground(true)
	defer lipgloss.SetColorProfile(prev)
	dir, a, b := ragRuns(t)
	cmp, err := runs.CompareNamed(dir, a, b)
	if err != nil {
		t.Fatal(err)
	}
	st := theme.New(theme.Default)
	body := compare.Body(cmp, st)
	on := func(s lipgloss.Style) string { r := s.Render("x"); return r[:strings.Index(r, "x")] }
	green, red := on(st.OK), on(st.StatusError)
	for prefix, colour := range map[string]string{
		"s2":                    green, // 0.5 -> 1
		"s3":                    green, // parsed in B only
		"s4":                    red,   // B lost the answer
		"Mean F1 delta (B - A)": green,
	} {
		l := line(body, prefix)
		if l == "" {
			t.Fatalf("no %q line:\n%s", prefix, body)
		}
		if !strings.Contains(l, colour) {
			t.Errorf("%s: %q lacks colour %q", prefix, l, colour)
		}
	}
	plain := ansiStrip(body)
	for _, want := range []string{
		"Answer quality  samples paired by id",
		"Samples whose F1 changed  3 of 4 paired",
	} {
		if !strings.Contains(plain, want) {
			t.Errorf("lacks %q:\n%s", want, plain)
		}
	}
	if got := strings.Join(strings.Fields(line(plain, "s4 ")), " "); got != "s4 1.000 n/a parsed A only 80.0 95.0 +15.0" {
		t.Errorf("s4 row %q", got)
	}
	if strings.Index(plain, "Answer quality") > strings.Index(plain, "Config differences") {
		t.Errorf("answer quality after the config differences:\n%s", plain)
	}
}

func ansiStrip(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func TestQualityGolden(t *testing.T) {
	screentest.PinColors()
	dir, a, b := ragRuns(t)
	c := screentest.Common(100, 80, screentest.Now)
	c.RunsDir = dir
	s := compare.New(c, a, b)
	m, _ := s.Update(s.Init()())
	// The whole body, scrolled to where the answer quality is.
	for range 60 {
		m, _ = m.Update(screentest.Key("down"))
	}
	golden.RequireEqual(t, []byte(strings.ReplaceAll(m.View(), dir, "$RUNS")))
}
