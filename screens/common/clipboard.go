package common

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/aymanbagabas/go-osc52/v2"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/kvbench/kvbench/internal/textclean"
)

// Terminal is where clipboard sequences go: the program's output (the
// application draws on stdout). Tests swap it for a buffer.
var Terminal io.Writer = os.Stdout

// termMu keeps two copies from interleaving their bytes.
var termMu sync.Mutex

// ClipboardSequence is the OSC 52 sequence that puts text on the
// terminal's clipboard, which works over SSH too. Inside tmux it is sent
// twice: plain, for tmux itself (with `set-clipboard on` tmux keeps it
// in its buffer and passes it on to the outer terminal), and wrapped in
// tmux's passthrough (with `allow-passthrough on` the outer terminal gets
// it directly); inside GNU screen it is wrapped for screen. env reads the
// environment (os.Getenv).
func ClipboardSequence(text string, env func(string) string) []byte {
	seq := osc52.New(text)
	var b bytes.Buffer
	switch {
	case env("TMUX") != "":
		b.WriteString(seq.String())
		b.WriteString(seq.Tmux().String())
	case strings.HasPrefix(env("TERM"), "screen"):
		b.WriteString(seq.Screen().String())
	default:
		b.WriteString(seq.String())
	}
	return b.Bytes()
}

// WriteClipboard writes the clipboard sequence of text to w in one write,
// between two frames of the renderer (which also writes whole frames).
// It is the only writer of OSC 52, and what it copies is cleaned
// (textclean.Clean): pasted, the text holds no terminal control.
func WriteClipboard(w io.Writer, text string) error {
	termMu.Lock()
	defer termMu.Unlock()
	_, err := w.Write(ClipboardSequence(textclean.Clean(text), os.Getenv))
	return err
}

// CopiedMsg reports a copy to the clipboard: What says what was copied
// ("run id", "folder path"...), for the status line.
type CopiedMsg struct {
	To   ID
	What string
	Text string
	Err  error
}

// Copy is the command that puts text on the terminal's clipboard and
// reports it to the screen to (which says so on the status line). The
// sequence goes straight to the terminal: bubbletea v1 offers no
// clipboard command, and a tea.Printf line is dropped in the alternate
// screen.
func Copy(to ID, what, text string) tea.Cmd {
	return func() tea.Msg {
		return CopiedMsg{To: to, What: what, Text: text, Err: WriteClipboard(Terminal, text)}
	}
}
