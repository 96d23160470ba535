package app

import (
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/home"
	"github.com/kvbench/kvbench/screens/run"
	sweepscreen "github.com/kvbench/kvbench/screens/sweep"
)

// messages runs cmd and the commands of every batch it returns, and
// returns what they sent.
func messages(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, messages(c)...)
		}
		return out
	}
	return []tea.Msg{msg}
}

func sent[T any](msgs []tea.Msg) bool {
	for _, m := range msgs {
		if _, ok := m.(T); ok {
			return true
		}
	}
	return false
}

// The end of a run or a sweep reaches the home screen beneath as
// common.RunsChanged (the home screen never imports the run screen), and
// the home screen then reads the runs directory again.
func TestEndOfARunRefreshesHome(t *testing.T) {
	runsDir := t.TempDir()
	c := testCommon(runsDir, t.TempDir())
	m := sized(c, home.New(c), 100, 30)

	for name, end := range map[string]tea.Msg{
		"run":   run.FinishedMsg{Session: run.NewSession(&fakeSource{}, runInfo()), Code: 0},
		"sweep": sweepscreen.DoneMsg{Code: 0},
	} {
		_, cmd := m.Update(end)
		if !sent[common.RunsChanged](messages(cmd)) {
			t.Errorf("%s end: no RunsChanged sent", name)
		}
	}

	w, err := record.Create(runsDir, config.LongDocQA, "fresh", time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	_, cmd := m.Update(common.RunsChanged{})
	var loaded *home.LoadedMsg
	for _, msg := range messages(cmd) {
		if l, ok := msg.(home.LoadedMsg); ok {
			loaded = &l
		}
	}
	if loaded == nil || loaded.RunsErr != nil || len(loaded.Runs) != 1 || loaded.Runs[0].ID != "20260504-090000-long-doc-qa-fresh" {
		t.Fatalf("after RunsChanged home loaded %+v, want the one new run", loaded)
	}
}

// A saved profile reaches the home screen as common.ProfilesChanged.
func TestSavedProfileRefreshesHome(t *testing.T) {
	cfgDir := t.TempDir()
	c := testCommon(t.TempDir(), cfgDir)
	m := sized(c, home.New(c), 100, 30)
	cfg := config.Default()
	cfg.SetString("workload", config.LongDocQA)
	if err := (config.Profiles{Dir: cfgDir}).Save("mine", cfg); err != nil {
		t.Fatal(err)
	}
	_, cmd := m.Update(common.ProfilesChanged{})
	var loaded *home.LoadedMsg
	for _, msg := range messages(cmd) {
		if l, ok := msg.(home.LoadedMsg); ok {
			loaded = &l
		}
	}
	if loaded == nil || len(loaded.Profiles) != 1 || loaded.Profiles[0].Name != "mine" {
		t.Fatalf("after ProfilesChanged home loaded %+v, want the saved profile", loaded)
	}
}
