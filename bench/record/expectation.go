package record

import "encoding/json"

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
