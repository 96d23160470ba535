package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/form"
	"github.com/kvbench/kvbench/screens/home"
	"github.com/kvbench/kvbench/screens/screentest"
)

// sizeRecorder is a screen that remembers its size and whether a key
// reached it.
type sizeRecorder struct {
	w, h   int
	typing bool
	keys   []string
}

func (s *sizeRecorder) Init() tea.Cmd { return nil }
func (s *sizeRecorder) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok {
		s.keys = append(s.keys, k.String())
	}
	return s, nil
}
func (s *sizeRecorder) View() string              { return "recorder" }
func (s *sizeRecorder) SetSize(w, h int)          { s.w, s.h = w, h }
func (s *sizeRecorder) Title() string             { return "recorder" }
func (s *sizeRecorder) Typing() bool              { return s.typing }
func (s *sizeRecorder) ShortHelp() []key.Binding  { return nil }
func (s *sizeRecorder) FullHelp() [][]key.Binding { return nil }

func TestResizeReachesEveryScreen(t *testing.T) {
	c := testCommon("/runs", "/cfg")
	bottom, top := &sizeRecorder{}, &sizeRecorder{}
	m := newModel(c, bottom)
	m.Update(common.PushMsg{Screen: top})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	// Header, status and a one-line help take three lines.
	for _, s := range []*sizeRecorder{bottom, top} {
		if s.w != 100 || s.h != 27 {
			t.Errorf("screen sized %dx%d, want 100x27", s.w, s.h)
		}
	}
	if c.Width != 100 || c.Height != 27 {
		t.Errorf("common size %dx%d", c.Width, c.Height)
	}
	// Full help takes more lines: the content shrinks, for both.
	m.Update(screentest.Key("?"))
	if top.h >= 27 || bottom.h != top.h {
		t.Errorf("with full help: top %d bottom %d", top.h, bottom.h)
	}
	if got := len(strings.Split(m.render(), "\n")); got != 30 {
		t.Errorf("view is %d lines, want 30", got)
	}
}

func TestQNeverStolenWhileTyping(t *testing.T) {
	c := testCommon("/runs", "/cfg")
	bottom, top := &sizeRecorder{}, &sizeRecorder{typing: true}
	m := newModel(c, bottom)
	m.Update(common.PushMsg{Screen: top})
	for _, k := range []string{"q", "?", "r"} {
		m.Update(screentest.Key(k))
	}
	if len(m.stack) != 2 || m.fullHelp {
		t.Fatalf("a global key acted while typing: stack %d, help %v", len(m.stack), m.fullHelp)
	}
	if strings.Join(top.keys, "") != "q?r" {
		t.Errorf("keys typed: %q", top.keys)
	}
	top.typing = false
	_, cmd := m.Update(screentest.Key("q"))
	if len(m.stack) != 1 || cmd != nil {
		t.Errorf("q did not go back: stack %d", len(m.stack))
	}
	_, cmd = m.Update(screentest.Key("q"))
	if cmd == nil || cmd() != tea.Quit() {
		t.Error("q on the last screen did not quit")
	}
	if m.code != 0 {
		t.Errorf("code %d", m.code)
	}
}

func TestCtrlCQuitsFromAnInput(t *testing.T) {
	c := testCommon("/runs", "/cfg")
	m := newModel(c, &sizeRecorder{typing: true})
	_, cmd := m.Update(screentest.Key("ctrl+c"))
	if cmd == nil || cmd() != tea.Quit() || m.code != 130 {
		t.Errorf("ctrl+c: code %d", m.code)
	}
}

// TestProfileSaveLoadDelete: save the form's config as a profile from the
// summary, see it on home, load it into the form, delete it.
func TestProfileSaveLoadDelete(t *testing.T) {
	cfgDir := t.TempDir()
	c := testCommon(t.TempDir(), cfgDir)
	m := newModel(c, home.New(c))
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	var tr transcript

	tr.waitFor(t, tm, "none yet")
	tm.Send(screentest.Key("enter")) // long-doc-qa
	for _, title := range editFocus(config.LongDocQA) {
		tr.waitFor(t, tm, title)
		switch title {
		case "┃ --engine-url":
			typeInto(tm, "http://gpu-box:8000")
		case "┃ --tokens-per-gb-kvcache":
			typeInto(tm, "6553")
		case "┃ --ldqa-document-length":
			typeInto(tm, "4242")
		}
		tm.Send(screentest.Key("enter"))
	}
	tr.waitFor(t, tm, "Summary", "4242")
	tm.Send(screentest.Key("p"))
	tr.waitFor(t, tm, "Save as profile")
	typeInto(tm, "bad name")
	tm.Send(screentest.Key("enter"))
	tr.waitFor(t, tm, "✗ profile name \"bad name\"")
	typeInto(tm, "gpu-box")
	tm.Send(screentest.Key("enter"))
	tr.waitFor(t, tm, `saved as profile "gpu-box"`)

	data, err := os.ReadFile(filepath.Join(cfgDir, "profiles", "gpu-box.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"ldqa_document_length": 4242`) || strings.Contains(string(data), "gpu-box:8000") {
		t.Errorf("profile file:\n%s", data)
	}

	tm.Send(screentest.Key("esc")) // the summary's esc: back to the form
	tr.waitFor(t, tm, "┃ --engine-url")
	tm.Send(screentest.Key("esc")) // the form's esc: back home, where the profile is listed
	tr.waitFor(t, tm, "kvbench › home", "gpu-box")
	for range config.Workloads {
		tm.Send(screentest.Key("down"))
	}
	// A profile opens at its summary: one key from the start.
	tm.Send(screentest.Key("enter"))
	tr.waitFor(t, tm, "configure long-doc-qa", "Summary", "4242", "[ Start ]")
	tm.Send(screentest.Key("c")) // change: the form, values kept
	for _, title := range editFocus(config.LongDocQA) {
		tr.waitFor(t, tm, title)
		tm.Send(screentest.Key("enter"))
		if title == "┃ --ldqa-document-length" {
			break
		}
	}
	tr.waitFor(t, tm, "> 4242")
	tm.Send(screentest.Key("esc"))
	tr.waitFor(t, tm, "kvbench › home")
	tm.Send(screentest.Key("x"))
	tr.waitFor(t, tm, "Delete profile?")
	tm.Send(screentest.Key("y"))
	tr.waitFor(t, tm, `profile "gpu-box" deleted`)
	tm.Send(screentest.Key("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	if _, err := os.Stat(filepath.Join(cfgDir, "profiles", "gpu-box.json")); !os.IsNotExist(err) {
		t.Errorf("profile still on disk: %v", err)
	}
}

// TestExportConfig writes the export format to the file named.
func TestExportConfig(t *testing.T) {
	dir := t.TempDir()
	c := testCommon(t.TempDir(), t.TempDir())
	cfg := config.Default()
	cfg.SetString("workload", config.CacheProbe)
	cfg.SetString("engine_url", "http://gpu-box:8000")
	cfg.SetString("cp_streams", "8")
	f := form.New(c, cfg)
	tm := teatest.NewTestModel(t, newModel(c, f), teatest.WithInitialTermSize(120, 40))
	var tr transcript
	for _, title := range editFocus(config.CacheProbe) {
		tr.waitFor(t, tm, title)
		tm.Send(screentest.Key("enter"))
	}
	tr.waitFor(t, tm, "Summary", "[ Start ]")
	tm.Send(screentest.Key("e"))
	tr.waitFor(t, tm, "Export the config to", "bench_config.json")
	path := filepath.Join(dir, "probe.json")
	typeInto(tm, path)
	tm.Send(screentest.Key("enter"))
	tr.waitFor(t, tm, "config exported to")
	tm.Send(screentest.Key("ctrl+c"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := f.Config()
	if string(data) != string(want.ExportJSON()) || !strings.Contains(string(data), `"cp_streams": 8`) {
		t.Errorf("exported:\n%s", data)
	}
	back := config.Default()
	if err := back.LoadJSON(path); err != nil || back.Int("cp_streams") != 8 {
		t.Errorf("the export does not load back: %v", err)
	}
}
