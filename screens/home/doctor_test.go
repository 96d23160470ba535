package home

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/kvbench/kvbench/bench/doctor"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/screentest"
)

func testCommon(w, h int) *common.Common {
	screentest.PinColors()
	return screentest.Common(w, h, screentest.Now)
}

func sampleReport() doctor.Report {
	return doctor.Report{EngineURL: "http://gpu-box:8000/v1", Model: "Qwen/Qwen3-8B", Checks: []doctor.Check{
		{ID: doctor.IDModels, Status: doctor.Pass, Message: `GET /v1/models lists 1 model ("Qwen/Qwen3-8B"); a run would use "Qwen/Qwen3-8B"`},
		{ID: doctor.IDStream, Status: doctor.Pass, Message: "a streaming chat request ended with [DONE] (8 chunks, TTFT 31 ms)"},
		{ID: doctor.IDCachedTokens, Status: doctor.Warn, Message: "prompt_tokens_details is missing on a unique prompt: receipts will be unverified",
			Hint: "start vLLM with --enable-prompt-tokens-details (SGLang: --enable-cache-report)"},
		{ID: doctor.IDPrefixCache, Status: doctor.Fail, Message: "an identical repeat reported no cached tokens",
			Hint: "prefix caching looks off: vLLM --enable-prefix-caching"},
		{ID: doctor.IDTokenize, Status: doctor.Info, Message: "POST /tokenize answers (8 tokens for a test prompt)"},
	}}
}

// The checklist: a status per check, hints under their message, wrapped
// to the width.
func TestGoldenDoctorReport(t *testing.T) {
	for _, sz := range [][2]int{{80, 21}, {140, 42}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			d := NewDoctor(testCommon(sz[0], sz[1]), "http://gpu-box:8000")
			d.Update(doctorMsg{to: d.id, report: sampleReport()})
			out := d.View()
			golden.RequireEqual(t, []byte(out))
			for i, l := range strings.Split(out, "\n") {
				if lipgloss.Width(l) > sz[0] {
					t.Errorf("line %d wider than %d: %q", i+1, sz[0], l)
				}
			}
			if !strings.Contains(out, "hint: start vLLM with") || !strings.Contains(out, "2 pass, 1 warn, 1 fail, 1 info") {
				t.Errorf("report:\n%s", out)
			}
		})
	}
}

func TestDoctorIgnoresAnotherScreensAnswer(t *testing.T) {
	d := NewDoctor(testCommon(80, 21), "")
	other := NewDoctor(testCommon(80, 21), "")
	d.Update(doctorMsg{to: other.id, report: sampleReport()})
	if d.report != nil {
		t.Error("took another doctor's report")
	}
	if !d.Typing() {
		t.Error("the engine input does not count as typing")
	}
	if _, cmd := d.Update(tea.KeyMsg{Type: tea.KeyEsc}); cmd == nil {
		t.Error("esc does not go back")
	}
}
