package record

import (
	"fmt"
	"strings"

	"github.com/kvbench/kvbench/bench/stats"
)

// Headline is the summary's `headline`: what reuse changed, by how much,
// with what confidence, and what makes the figures less than they seem
// (spec/record.md, "The headline and the figures by cache state").
type Headline struct {
	Verdict         *string     `json:"verdict"`
	HitRatio        *float64    `json:"hit_ratio"`
	Baseline        *string     `json:"baseline"`
	ColdTTFTP50ms   *float64    `json:"cold_ttft_p50_ms"`
	ReusedTTFTP50ms *float64    `json:"reused_ttft_p50_ms"`
	Speedup         *float64    `json:"speedup"`
	SpeedupCI95     *[2]float64 `json:"speedup_ci95"`
	LimitedBy       []string    `json:"limited_by"`
}

// NewHeadline builds the headline of a summary whose blocks are filled
// (results, cache, client, load, workload), from the speedup the
// collector computed.
func NewHeadline(s *Summary, sp stats.Speedup) *Headline {
	h := &Headline{
		HitRatio:        s.Cache.HitRatio,
		Baseline:        sp.Baseline,
		ColdTTFTP50ms:   sp.ColdP50,
		ReusedTTFTP50ms: sp.ReusedP50,
		Speedup:         sp.Ratio,
		SpeedupCI95:     sp.CI95,
		LimitedBy:       []string{},
	}
	e := WorkloadExpectation(s)
	if e != nil {
		v := e.Verdict
		h.Verdict = &v
	}
	if s.Load != nil && !s.Load.Delivered {
		why := "the load was not delivered"
		if len(s.Load.DegradedReasons) > 0 {
			why += ": " + s.Load.DegradedReasons[0]
		}
		h.LimitedBy = append(h.LimitedBy, why)
	}
	if s.Client.Overloaded && !(s.Load != nil && !s.Load.Delivered && anyContains(s.Load.DegradedReasons, "overloaded")) {
		why := "the client was overloaded"
		if len(s.Client.OverloadReasons) > 0 {
			why += ": " + s.Client.OverloadReasons[0]
		}
		h.LimitedBy = append(h.LimitedBy, why)
	}
	if n := s.Results.FailedRequests; n > 0 {
		h.LimitedBy = append(h.LimitedBy, fmt.Sprintf("%d of %d requests failed", n, s.Results.TotalRequests))
	}
	if n := s.Cache.Unverified - s.Results.FailedRequests; n > 0 {
		h.LimitedBy = append(h.LimitedBy, fmt.Sprintf("%d %s without a verified cache receipt", n, plural(n, "request", "requests")))
	}
	if e != nil && e.Verdict == VerdictNotMet {
		h.LimitedBy = append(h.LimitedBy, "the workload's expectation was not met")
	}
	return h
}

func anyContains(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
