package common_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/kvbench/kvbench/screens/common"
)

func TestScroll(t *testing.T) {
	k := common.ScrollKeys{
		Up:       key.NewBinding(key.WithKeys("k")),
		Down:     key.NewBinding(key.WithKeys("j")),
		PageUp:   key.NewBinding(key.WithKeys("b")),
		PageDown: key.NewBinding(key.WithKeys("f")),
		Top:      key.NewBinding(key.WithKeys("g")),
		Bottom:   key.NewBinding(key.WithKeys("G")),
	}
	lines := make([]string, 100)
	for i := range lines {
		lines[i] = fmt.Sprint(i)
	}
	vp := viewport.New(10, 10)
	vp.SetContent(strings.Join(lines, "\n"))
	for _, step := range []struct {
		key  string
		want int
	}{{"j", 1}, {"f", 11}, {"x", 11}, {"k", 10}, {"b", 0}, {"G", 90}, {"g", 0}} {
		k.Scroll(&vp, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(step.key)})
		if vp.YOffset != step.want {
			t.Fatalf("after %s the top line is %d, want %d", step.key, vp.YOffset, step.want)
		}
	}
}
