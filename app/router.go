package app

import (
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/compare"
	"github.com/kvbench/kvbench/screens/form"
	"github.com/kvbench/kvbench/screens/home"
	"github.com/kvbench/kvbench/screens/report"
	"github.com/kvbench/kvbench/screens/results"
	"github.com/kvbench/kvbench/screens/run"
	sweepscreen "github.com/kvbench/kvbench/screens/sweep"
)

// This file is the map of the application: every screen it can show and
// the intent that opens it. A screen asks for another by returning
// common.Open(intent); the root (model.go) calls route and pushes the
// result, or swaps it for the top screen when replace is set.
//
// Adding a screen: write its package under screens/, declare its intent
// in screens/common/intent.go (a struct with the fields the screen needs
// plus the intent() marker), and add one case here. Commands open it with
// app.Open (entry.go); nothing is registered anywhere else.

// route builds the screen an intent asks for.
func route(c *common.Common, i common.Intent) (s common.Screen, replace bool) {
	switch i := i.(type) {
	case common.OpenResults:
		l := results.New(c)
		if len(i.Only) > 0 {
			l.Only(i.Only...)
		}
		return l, false
	case common.OpenRunDetail:
		return results.NewDetail(c, i.Dir), false
	case common.OpenSweep:
		// A recorded sweep: its curve and its cells, each opened as a
		// run (OpenRunDetail).
		return sweepscreen.NewReview(c, i.Dir), false
	case common.OpenCompare:
		return compare.New(c, i.A, i.B), false
	case common.OpenReport:
		return report.New(c, i.Runs), false
	case common.OpenForm:
		switch {
		case i.Guided:
			return form.NewGuided(c, i.Config), false
		case i.Review || i.Start:
			return form.NewReview(c, i.Config, i.Start), false
		}
		return form.New(c, i.Config), false
	case common.OpenDoctor:
		return home.NewDoctor(c, i.URL), false
	case common.OpenRun:
		// The live screen takes the place of the screen that prepared
		// the run, so q on it goes back past the form.
		return run.New(c, i.Runner), true
	case common.StartSweep:
		// As a run's: the sweep screen takes the form's place.
		return sweepscreen.Start(c, i.Options), true
	}
	return nil, false
}
