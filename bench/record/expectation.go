package record

import (
	"encoding/json"
	"fmt"
)

// Verdicts of a workload's expectation.
const (
	VerdictMet     = "met"
	VerdictNotMet  = "not_met"
	VerdictUnknown = "unknown"
)

// Expectation is the `expectation` object of the summary's workload
// block: what the workload expected of the engine's cache, sized to this
// run, and whether its receipts show it. Verdict is VerdictUnknown when
// the receipts that decide it are missing or unverified: an expectation
// is never met by default. Reason holds the figures that decide it.
type Expectation struct {
	Expected string `json:"expected"`
	Verdict  string `json:"verdict"`
	Reason   string `json:"reason"`
}

// VerdictText is how a verdict reads in text: "met", "NOT MET" (so it
// stands out without colour) or "unknown".
func VerdictText(v string) string {
	switch v {
	case VerdictMet:
		return "met"
	case VerdictNotMet:
		return "NOT MET"
	case VerdictUnknown:
		return "unknown"
	}
	return v
}

// WorkloadExpectation reads workload.expectation of a summary; nil when
// the block has none (runs written before it existed, or a malformed
// one).
func WorkloadExpectation(s *Summary) *Expectation {
	if s == nil {
		return nil
	}
	v, ok := Field(s.Workload, "expectation")
	if !ok || v == nil {
		return nil
	}
	if e, isExp := v.(*Expectation); isExp {
		return e
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var e Expectation
	if err := json.Unmarshal(b, &e); err != nil || e.Verdict == "" {
		return nil
	}
	switch e.Verdict {
	case VerdictMet, VerdictNotMet, VerdictUnknown:
	default:
		return nil
	}
	return &e
}

// ExpectationIn is the expectation a workload block holds (the
// `expectation` key of a map or an Ordered block), nil when it has none.
// It is the block's own value, so a change to it is a change to the
// block.
func ExpectationIn(block any) *Expectation {
	var v any
	switch b := block.(type) {
	case map[string]any:
		v = b["expectation"]
	case Ordered:
		for _, p := range b {
			if p.Key == "expectation" {
				v = p.Value
			}
		}
	}
	e, _ := v.(*Expectation)
	return e
}

// CountFailures makes an expectation whose run had failed measured
// requests not met (spec/workloads.md, "Verdicts count failures"): a
// request that failed tested nothing, so no verdict can rest on the
// rest. "k of n requests failed" leads the reason.
func (e *Expectation) CountFailures(failed, total int) {
	if e == nil || failed <= 0 {
		return
	}
	e.Verdict = VerdictNotMet
	lead := fmt.Sprintf("%d of %d requests failed", failed, total)
	if e.Reason == "" {
		e.Reason = lead
		return
	}
	e.Reason = lead + "; " + e.Reason
}
