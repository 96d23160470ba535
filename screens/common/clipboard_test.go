package common_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/textclean/cleantest"
	"github.com/kvbench/kvbench/screens/common"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// The bytes of the OSC 52 sequence: plain on a terminal, plain then
// wrapped in tmux's DCS passthrough (each ESC doubled) inside tmux,
// wrapped for GNU screen inside screen.
func TestClipboardSequence(t *testing.T) {
	text := "kvbench run --engine-url http://gpu:8000 --workload long-doc-qa"
	b64 := base64.StdEncoding.EncodeToString([]byte(text))
	plain := "\x1b]52;c;" + b64 + "\x07"
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"terminal", map[string]string{"TERM": "xterm-256color"}, plain},
		{"tmux", map[string]string{"TMUX": "/tmp/tmux-0/default,1,0", "TERM": "screen-256color"},
			plain + "\x1bPtmux;\x1b\x1b]52;c;" + b64 + "\x07\x1b\\"},
		// screen passes at most 76 bytes of a DCS string: the library cuts
		// the sequence into DCS chunks.
		{"screen", map[string]string{"TERM": "screen.xterm-256color"},
			"\x1bP\x1b]52;c;" + b64[:76] + "\x1b\\\x1bP" + b64[76:] + "\x07\x1b\\"},
	} {
		if got := string(common.ClipboardSequence(text, env(tc.env))); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("terminal gone") }

// Copy writes the sequence to the terminal in one write and reports what
// it copied to the screen that asked.
func TestCopyCommand(t *testing.T) {
	t.Setenv("TMUX", "")
	t.Setenv("TERM", "xterm")
	var term countingWriter
	old := common.Terminal
	common.Terminal = &term
	t.Cleanup(func() { common.Terminal = old })
	id := common.NewID()
	msg := common.Copy(id, "run id", "20260301-120000-long-doc-qa")().(common.CopiedMsg)
	if msg.To != id || msg.What != "run id" || msg.Text != "20260301-120000-long-doc-qa" || msg.Err != nil {
		t.Errorf("copied %+v", msg)
	}
	want := "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte("20260301-120000-long-doc-qa")) + "\x07"
	if term.String() != want || term.writes != 1 {
		t.Errorf("terminal got %q in %d writes, want %q in one", term.String(), term.writes, want)
	}
	common.Terminal = failingWriter{}
	if msg := common.Copy(id, "run id", "x")().(common.CopiedMsg); msg.Err == nil {
		t.Error("a failed write is not reported")
	}
}

type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// The one writer of OSC 52 copies cleaned text: what is pasted holds no
// terminal control, whatever a folder name or a model id held.
func TestCopyWritesCleanedText(t *testing.T) {
	t.Setenv("TMUX", "")
	t.Setenv("TERM", "xterm")
	var term countingWriter
	if err := common.WriteClipboard(&term, cleantest.Text+"\nline two"); err != nil {
		t.Fatal(err)
	}
	b64 := strings.TrimSuffix(strings.TrimPrefix(term.String(), "\x1b]52;c;"), "\x07")
	pasted, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || term.writes != 1 {
		t.Fatalf("one OSC 52 sequence: %q (%d writes): %v", term.String(), term.writes, err)
	}
	cleantest.Check(t, "clipboard", string(pasted))
	if !strings.HasSuffix(string(pasted), "end\nline two") {
		t.Errorf("pasted %q: want the line break kept", pasted)
	}
}

// A failure on the status line is cleaned: errors quote paths.
func TestFailureIsCleaned(t *testing.T) {
	msg := common.Failure(errors.New("open /runs/" + cleantest.Text + ": permission denied"))().(common.StatusMsg)
	cleantest.Check(t, "status", msg.Text)
	if !msg.Err {
		t.Error("a failure is not an error")
	}
}
