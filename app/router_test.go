package app

import (
	"strings"
	"testing"

	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/compare"
	"github.com/kvbench/kvbench/screens/form"
	"github.com/kvbench/kvbench/screens/home"
	"github.com/kvbench/kvbench/screens/report"
	"github.com/kvbench/kvbench/screens/results"
	sweepscreen "github.com/kvbench/kvbench/screens/sweep"
)

// Every intent a screen can send reaches a screen of the right kind.
func TestRouteEveryIntent(t *testing.T) {
	c := testCommon(t.TempDir(), t.TempDir())
	cfg := config.Default()
	for _, tc := range []struct {
		intent common.Intent
		want   string
		title  string
	}{
		{common.OpenResults{}, "*results.List", "Results"},
		{common.OpenRunDetail{Dir: "/runs/x"}, "*results.Detail", ""},
		{common.OpenCompare{A: "a", B: "b"}, "*compare.Screen", ""},
		{common.OpenForm{Config: cfg}, "*form.Model", "configure"},
		{common.OpenForm{Config: cfg, Guided: true}, "*form.Model", "guided setup"},
		{common.OpenDoctor{}, "*home.Doctor", "doctor"},
		{common.OpenReport{Runs: []string{"/runs/x"}}, "*report.Model", "Report"},
		{common.OpenSweep{Dir: "/runs/20260301-120000-sweep-random-prefill"}, "*sweep.Model", "Sweep 20260301-120000-sweep-random-prefill"},
	} {
		s, replace := route(c, tc.intent)
		if s == nil || replace {
			t.Errorf("%T: screen %v, replace %v", tc.intent, s, replace)
			continue
		}
		var ok bool
		switch tc.want {
		case "*results.List":
			_, ok = s.(*results.List)
		case "*results.Detail":
			_, ok = s.(*results.Detail)
		case "*compare.Screen":
			_, ok = s.(*compare.Screen)
		case "*form.Model":
			_, ok = s.(*form.Model)
		case "*home.Doctor":
			_, ok = s.(*home.Doctor)
		case "*report.Model":
			_, ok = s.(*report.Model)
		case "*sweep.Model":
			_, ok = s.(*sweepscreen.Model)
		}
		if !ok {
			t.Errorf("%T routed to %T, want %s", tc.intent, s, tc.want)
		}
		if !strings.HasPrefix(s.Title(), tc.title) {
			t.Errorf("%T: title %q, want %q…", tc.intent, s.Title(), tc.title)
		}
	}
}

// Home's keys ask for screens by intent and the root pushes them: r opens
// the explorer, d the doctor, enter on a recent run that run's detail.
func TestHomeNavigatesThroughTheRouter(t *testing.T) {
	c := testCommon(t.TempDir(), t.TempDir())
	for _, tc := range []struct {
		keys []string
		want string
	}{
		{[]string{"r"}, "Results"},
		{[]string{"d"}, "doctor"},
	} {
		m := sized(c, home.New(c), 100, 30)
		m.Update(homeData())
		for _, k := range tc.keys {
			press(m, k)
		}
		if len(m.stack) != 2 || m.top().Title() != tc.want {
			t.Errorf("keys %v: stack of %d, top %q, want %q", tc.keys, len(m.stack), m.top().Title(), tc.want)
		}
	}
	// The recent runs follow the workloads and the profiles.
	m := sized(c, home.New(c), 100, 30)
	m.Update(homeData())
	for range len(config.Workloads) + len(homeData().Profiles) {
		press(m, "down")
	}
	press(m, "enter")
	d, ok := m.top().(*results.Detail)
	if !ok {
		t.Fatalf("enter on a recent run opened %T", m.top())
	}
	if d.Dir() != homeData().Runs[0].Dir {
		t.Errorf("opened %s, want %s", d.Dir(), homeData().Runs[0].Dir)
	}
}
