package theme

import (
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

func TestSetupHonoursNoColor(t *testing.T) {
	prev := lipgloss.ColorProfile()
	t.Cleanup(func() { lipgloss.SetColorProfile(prev) })
	lipgloss.SetColorProfile(termenv.ANSI)
	t.Setenv("NO_COLOR", "1")
	s := Setup()
	if lipgloss.ColorProfile() != termenv.Ascii {
		t.Fatalf("profile = %v, want Ascii under NO_COLOR", lipgloss.ColorProfile())
	}
	if out := s.Error.Render("boom"); out != "boom" {
		t.Errorf("NO_COLOR output carries escapes: %q", out)
	}
}

func TestCacheStatesHaveTheirOwnColours(t *testing.T) {
	s := New(Default)
	cold, reused, unverified := s.State("cold").GetForeground(), s.State("reused").GetForeground(), s.State("unverified").GetForeground()
	if cold != Default.Cold || reused != Default.Reused || unverified != Default.Unverified {
		t.Errorf("state colours: %v %v %v", cold, reused, unverified)
	}
	if cold == reused || cold == unverified || reused == unverified {
		t.Error("two cache states share a colour")
	}
}

func TestHuhThemeFollowsPalette(t *testing.T) {
	s := New(Default)
	h := s.Huh()
	if h.Focused.Title.GetForeground() != Default.Accent {
		t.Errorf("focused title colour = %v", h.Focused.Title.GetForeground())
	}
	if h.Focused.ErrorMessage.GetForeground() != Default.Error {
		t.Errorf("error colour = %v", h.Focused.ErrorMessage.GetForeground())
	}
}
