package app

import (
	"bytes"
	"fmt"
	"github.com/kvbench/kvbench/internal/testutil"
	"io"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/form"
)

// Keys that arrive in one read (a paste, a burst over a slow link) go to
// the field that has focus when each is handled, also across an enter
// that moves focus: the whole long-doc-qa form typed in one write lands
// field by field.
func TestFormBurstAcrossFields(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {200, 60}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			cfg := config.Default()
			cfg.SetString("workload", config.LongDocQA)
			cfg.SetString("output_dir", t.TempDir())
			c := testCommon(t.TempDir(), t.TempDir())
			f := form.New(c, cfg)
			m := newModel(c, f)

			in, feed := io.Pipe()
			out := &testutil.LockedBuffer{}
			p := tea.NewProgram(m, tea.WithInput(in), tea.WithOutput(out), tea.WithoutSignals())
			done := make(chan error, 1)
			go func() { _, err := p.Run(); done <- err }()
			p.Send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			teatest.WaitFor(t, out, func(b []byte) bool { return bytes.Contains(b, []byte("--engine-url")) },
				teatest.WithDuration(time.Minute))

			// URL kept; model and served name typed; api key env, LMCache
			// question, volume, tokens per GB, length, queries, shuffle,
			// in flight kept; max output cleared (ctrl+u) and typed; seed,
			// ignore-eos, output dir kept; a name; no advanced settings.
			burst := "\rmymodel\ralias\r" + "\r\r\r\r" + "\r\r\r\r" + "\x1532\r" + "\r\r\r" + "burst\r" + "\r"
			if _, err := feed.Write([]byte(burst)); err != nil {
				t.Fatal(err)
			}
			teatest.WaitFor(t, out, func(b []byte) bool { return bytes.Contains(b, []byte("Summary")) },
				teatest.WithDuration(time.Minute))
			p.Quit()
			feed.Close()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			got, err := f.Config()
			if err != nil {
				t.Fatal(err)
			}
			for key, want := range map[string]string{
				"engine_url": "builtin", "model": "mymodel", "served_model_name": "alias", "name": "burst",
			} {
				if v := got.String(key); v != want {
					t.Errorf("%s = %q, want %q", key, v, want)
				}
			}
			if v := got.Int("ldqa_max_output_length"); v != 32 {
				t.Errorf("ldqa_max_output_length = %d, want 32", v)
			}
			if v := got.Int("ldqa_document_length"); v != 10000 {
				t.Errorf("ldqa_document_length = %d, want the default 10000", v)
			}
		})
	}
}
