package cli

import "testing"

// A terminal that cannot draw the full screen gets the headless output.
func TestFullScreenTerm(t *testing.T) {
	for term, want := range map[string]bool{"": false, "dumb": false, "xterm-256color": true, "screen": true, "tmux-256color": true} {
		if got := fullScreenTerm(term); got != want {
			t.Errorf("TERM=%q: full screen %v, want %v", term, got, want)
		}
	}
}
