package common

import (
	"github.com/charmbracelet/lipgloss"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/theme"
)

// A run named on a screen (the explorer's detail, compare) reads the same
// on every one: the colour of its status and the facts beside its id.

// RunStatusStyle colours a run's status: ok, failed, and the rest
// (interrupted, incomplete) as a warning.
func RunStatusStyle(s *theme.Styles, st runs.Status) lipgloss.Style {
	switch st {
	case runs.StatusOK:
		return s.OK
	case runs.StatusFailed:
		return s.Error
	}
	return s.Warn
}

// RunInfo is what tells a run apart besides its id: its name, workload,
// model and engine host, the empty ones left out.
func RunInfo(r *runs.Run) []string {
	var info []string
	for _, v := range []string{r.Name, r.Workload, r.Model, r.EngineHost()} {
		if v != "" {
			info = append(info, v)
		}
	}
	return info
}

// ExpectationStyle colours a workload expectation's verdict: met ok, not
// met an error, unknown a warning. The words differ too (NO_COLOR).
func ExpectationStyle(s *theme.Styles, verdict string) lipgloss.Style {
	switch verdict {
	case record.VerdictMet:
		return s.OK
	case record.VerdictNotMet:
		return s.Error
	}
	return s.Warn
}
