package common

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/kvbench/kvbench/bench"
	bsweep "github.com/kvbench/kvbench/bench/sweep"
	"github.com/kvbench/kvbench/config"
)

// An Intent says which screen a screen wants next ("open this run",
// "compare these two"); the application's router (app/router.go) builds
// it and puts it on the stack. Screens never construct one another, so
// no screen package needs to import another to navigate to it.
type Intent interface{ intent() }

// OpenResults opens the results explorer; Only, when set, limits it to
// those run folders.
type OpenResults struct{ Only []string }

// OpenRunDetail opens one run (a folder of the runs directory) in detail.
type OpenRunDetail struct{ Dir string }

// OpenSweep opens a finished (or interrupted) sweep folder: its curve and
// its cells, each openable as a run.
type OpenSweep struct{ Dir string }

// OpenCompare compares run B against run A, each named by id or path.
type OpenCompare struct{ A, B string }

// OpenForm opens the config form prefilled with Config (defaults when
// nil); Guided asks what Config is missing first.
type OpenForm struct {
	Config *config.Config
	Guided bool
	// Review opens at the summary (a saved profile: every value is
	// known, one key starts it); Start also starts the run at once.
	Review, Start bool
}

// OpenDoctor checks an engine, URL prefilled (builtin when empty).
type OpenDoctor struct{ URL string }

// OpenRun hands a prepared runner to a live run screen, which replaces
// the screen that prepared it (the form, or the finished run's screen
// for "run again").
type OpenRun struct{ Runner *bench.Runner }

// StartSweep starts a sweep (validated options: the form's sweep choice)
// on the sweep screen, which replaces the screen that asked for it.
type StartSweep struct{ Options bsweep.Options }

// OpenReport writes the HTML report of Runs (run folders; two or more
// compare) and shows where it went.
type OpenReport struct{ Runs []string }

func (OpenResults) intent()   {}
func (OpenReport) intent()    {}
func (OpenRunDetail) intent() {}
func (OpenSweep) intent()     {}
func (OpenCompare) intent()   {}
func (OpenForm) intent()      {}
func (OpenDoctor) intent()    {}
func (OpenRun) intent()       {}
func (StartSweep) intent()    {}

// Open returns the command that sends an intent to the router.
func Open(i Intent) tea.Cmd { return func() tea.Msg { return i } }
