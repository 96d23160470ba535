package report

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/internal/textclean/cleantest"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/screentest"
)

func TestMain(m *testing.M) {
	screentest.PinColors()
	os.Exit(m.Run())
}

// run feeds the message of cmd (and of the commands it leads to) to m,
// returning the messages meant for the root.
func run(t *testing.T, m tea.Model, cmd tea.Cmd) (tea.Model, []tea.Msg) {
	t.Helper()
	var root []tea.Msg
	for cmd != nil {
		msg := cmd()
		cmd = nil
		switch msg := msg.(type) {
		case common.StatusMsg, common.PopMsg:
			root = append(root, msg)
		case tea.BatchMsg:
			for _, c := range msg {
				_, r := run(t, m, c)
				root = append(root, r...)
			}
		case nil:
		default:
			m, cmd = m.Update(msg)
		}
	}
	return m, root
}

func TestWritesTheReportShowsAndCopiesItsPath(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a := runstest.Write(t, dir, runstest.Spec{Name: "a", Started: t0, Requests: 12, ReusedEvery: 2, Summary: true})
	c := screentest.Common(100, 30, t0)
	c.RunsDir = dir
	m := New(c, []string{a})
	if v := m.View(); !strings.Contains(v, "Writing the report of "+filepath.Base(a)) {
		t.Errorf("before the report is written:\n%s", v)
	}
	var got tea.Model
	got, root := run(t, m, m.Init())
	want := filepath.Join(a, "report.html")
	if m.Path() != want {
		t.Fatalf("path %q, want %q", m.Path(), want)
	}
	if b, err := os.ReadFile(want); err != nil || !bytes.Contains(b, []byte(`data-chart="ttft-cdf"`)) {
		t.Fatalf("report.html: %v", err)
	}
	if len(root) != 1 || !strings.Contains(root[0].(common.StatusMsg).Text, want) {
		t.Errorf("status after writing: %v", root)
	}
	v := got.View()
	for _, s := range []string{"Wrote the report of", "report.html", "c copy path", "esc close"} {
		if !strings.Contains(v, s) {
			t.Errorf("dialog lacks %q:\n%s", s, v)
		}
	}
	var clip bytes.Buffer
	clipboard = &clip
	t.Cleanup(func() { clipboard = os.Stdout })
	t.Setenv("TMUX", "")
	t.Setenv("TERM", "xterm-256color")
	got, cmd := got.Update(screentest.Key("c"))
	got, root = run(t, got, cmd)
	seq := "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(want)) + "\x07"
	if clip.String() != seq {
		t.Errorf("clipboard got %q, want the OSC 52 sequence %q", clip.String(), seq)
	}
	if len(root) != 1 || !strings.Contains(root[0].(common.StatusMsg).Text, "copied") || !strings.Contains(got.View(), "Path copied") {
		t.Errorf("after copying: %v\n%s", root, got.View())
	}
	_, cmd = got.Update(screentest.Key("esc"))
	if _, ok := cmd().(common.PopMsg); !ok {
		t.Error("esc does not close the dialog")
	}
}

func TestComparisonGoesToTheCurrentDirectory(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(t.TempDir())
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a := runstest.Write(t, dir, runstest.Spec{Name: "a", Started: t0, Requests: 12, Summary: true})
	b := runstest.Write(t, dir, runstest.Spec{Name: "b", Started: t0.Add(time.Hour), Requests: 12, Summary: true})
	c := screentest.Common(100, 30, t0)
	c.RunsDir = dir
	m := New(c, []string{a, b})
	run(t, m, m.Init())
	cwd, _ := os.Getwd()
	want := filepath.Join(cwd, "report-"+filepath.Base(a)+"-vs-"+filepath.Base(b)+".html")
	if m.Path() != want {
		t.Fatalf("path %q, want %q", m.Path(), want)
	}
	if _, err := os.Stat(want); err != nil {
		t.Fatal(err)
	}
	if v := m.View(); !strings.Contains(v, "comparison of") {
		t.Errorf("dialog:\n%s", v)
	}
}

func TestAFailedReportSaysWhy(t *testing.T) {
	c := screentest.Common(100, 30, time.Now())
	c.RunsDir = t.TempDir()
	m := New(c, []string{filepath.Join(c.RunsDir, "gone")})
	_, root := run(t, m, m.Init())
	if len(root) != 1 || !root[0].(common.StatusMsg).Err || !strings.Contains(root[0].(common.StatusMsg).Text, "gone") {
		t.Errorf("status: %v", root)
	}
	if v := m.View(); !strings.Contains(v, "gone") || strings.Contains(v, "copy path") {
		t.Errorf("dialog after a failure:\n%s", v)
	}
}

// A run whose folder name holds terminal controls: the dialog shows its
// id and the report's path cleaned, and copies the path cleaned.
func TestHostileFolderNameIsShownClean(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a := runstest.Hostile(t, dir, runstest.Spec{Started: t0, Requests: 12, ReusedEvery: 2, Summary: true}, false)
	c := screentest.Common(250, 40, t0)
	c.RunsDir = dir
	m := New(c, []string{a})
	cleantest.Check(t, "report dialog, writing", m.View())
	got, root := run(t, m, m.Init())
	for _, msg := range root {
		cleantest.Clean(t, "status", msg.(common.StatusMsg).Text)
	}
	if _, err := os.Stat(filepath.Join(a, "report.html")); err != nil {
		t.Fatalf("the report is not in the run's folder: %v", err)
	}
	cleantest.Check(t, "report dialog, written", got.View())
	var clip bytes.Buffer
	clipboard = &clip
	t.Cleanup(func() { clipboard = os.Stdout })
	t.Setenv("TMUX", "")
	t.Setenv("TERM", "xterm-256color")
	_, cmd := got.Update(screentest.Key("c"))
	run(t, got, cmd)
	pasted, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(clip.String(), "\x1b]52;c;"), "\x07"))
	if err != nil {
		t.Fatalf("clipboard %q: %v", clip.String(), err)
	}
	cleantest.Check(t, "copied path", string(pasted))
}
