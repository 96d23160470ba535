package app

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/internal/debuglog"
	"github.com/kvbench/kvbench/screens/home"
)

// The full-screen application writes to the command's debug log: every
// screen change, and each message's type at debug level.
func TestDebugLogFollowsScreens(t *testing.T) {
	var buf bytes.Buffer
	l := debuglog.New(&buf)
	c := newCommon(bench.WithLogger(context.Background(), l))
	if c.Logger != l {
		t.Fatal("the shared context does not carry the command's logger")
	}
	tc := testCommon(t.TempDir(), t.TempDir())
	tc.Logger = l
	m := sized(tc, home.New(tc), 100, 30)
	m.Update(homeData())
	press(m, "r") // the explorer
	press(m, "q") // back home
	type line struct{ Msg, Action, Title, Type, Level string }
	var screens []string
	types := map[string]bool{}
	for _, s := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var ln line
		if err := json.Unmarshal([]byte(s), &ln); err != nil {
			t.Fatalf("not a JSON line: %q", s)
		}
		switch ln.Msg {
		case "screen":
			screens = append(screens, ln.Action+" "+ln.Title)
		case "message":
			if ln.Level != "DEBUG" {
				t.Errorf("message types logged at %s, want DEBUG", ln.Level)
			}
			types[ln.Type] = true
		}
	}
	if got := strings.Join(screens, ", "); got != "push Results, pop home" {
		t.Errorf("screen changes logged: %q", got)
	}
	for _, want := range []string{"tea.KeyMsg", "home.LoadedMsg", "common.OpenResults"} {
		if !types[want] {
			t.Errorf("message type %s not logged; got %v", want, types)
		}
	}
}
