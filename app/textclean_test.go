package app

import (
	"testing"

	"github.com/kvbench/kvbench/internal/textclean/cleantest"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/home"
)

// Every screen's status reaches the status line through the root, which
// cleans it: a status quoting a hostile path draws no terminal control.
func TestStatusLineIsCleaned(t *testing.T) {
	c := testCommon(t.TempDir(), t.TempDir())
	m := sized(c, home.New(c), 250, 30)
	m.Update(home.LoadedMsg{})
	for _, msg := range []common.StatusMsg{
		{Text: "config written to /runs/" + cleantest.Text},
		{Text: "export config: open /runs/" + cleantest.Text + ": permission denied", Err: true},
	} {
		m.Update(msg)
		cleantest.Check(t, "status line", m.statusLine())
		cleantest.Clean(t, "screen", m.render())
	}
}
