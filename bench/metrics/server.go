package metrics

import (
	"fmt"
	"strconv"
)

// Delta is one counter over the measured phase.
type Delta struct {
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	Delta  float64 `json:"delta"`
}

// ServerMetrics is the summary's server_metrics (spec/record.md): every
// known counter present before and after the measured phase, and the
// engine's prefix-cache hit rate over it.
type ServerMetrics struct {
	// Counters by canonical name.
	Counters map[string]Delta `json:"counters"`
	// PrefixCacheHitRate is hits delta / queries delta of the first
	// HitRatePairs entry present; null without one or with no queries.
	PrefixCacheHitRate *float64 `json:"prefix_cache_hit_rate"`
	// HitRateSource names the counters it came from ("hits / queries").
	HitRateSource string `json:"hit_rate_source,omitempty"`
	// Exact is true when both marks got their own scrape; false when a
	// neighbouring sample stood in for one (or a mark was never made).
	Exact         bool `json:"exact"`
	Scrapes       int  `json:"scrapes"`
	FailedScrapes int  `json:"failed_scrapes"`
}

func serverMetrics(before, after map[string]float64, scrapes, failed int, exact bool) ServerMetrics {
	m := ServerMetrics{Counters: map[string]Delta{}, Exact: exact, Scrapes: scrapes, FailedScrapes: failed}
	if before == nil || after == nil {
		m.Exact = false
		return m
	}
	for _, k := range Known {
		if k.Kind != Counter {
			continue
		}
		b, ok1 := before[k.Name]
		a, ok2 := after[k.Name]
		if ok1 && ok2 {
			m.Counters[k.Name] = Delta{Before: b, After: a, Delta: counterDelta(b, a)}
		}
	}
	if rate, p := hitRate(before, after); p != nil {
		m.HitRateSource = p.String()
		m.PrefixCacheHitRate = rate
	}
	return m
}

// counterDelta is after - before; a counter that went down was reset (the
// engine restarted), and then counts from zero as Prometheus' increase()
// does.
func counterDelta(before, after float64) float64 {
	if after < before {
		return after
	}
	return after - before
}

// hitRate is the hit rate between two samples, and the pair it used
// (nil when no pair is present in both).
func hitRate(before, after map[string]float64) (*float64, *HitRatePair) {
	p, ok := hitRatePair(before)
	if !ok {
		return nil, nil
	}
	for _, name := range append([]string{p.Hits}, p.Queries...) {
		if _, ok := after[name]; !ok {
			return nil, nil
		}
	}
	hits := counterDelta(before[p.Hits], after[p.Hits])
	var queries float64
	for _, q := range p.Queries {
		queries += counterDelta(before[q], after[q])
	}
	if queries <= 0 {
		return nil, &p
	}
	r := hits / queries
	return &r, &p
}

// Section is the text summary's "Server metrics" section: the hit rate,
// each counter's delta over the measured phase, and the scrape count.
func Section(m ServerMetrics) (title string, rows [][2]string) {
	title = "Server metrics"
	if m.PrefixCacheHitRate != nil {
		rows = append(rows, [2]string{"Server prefix cache hit rate (%)", fmt2(100 * *m.PrefixCacheHitRate)})
	} else {
		rows = append(rows, [2]string{"Server prefix cache hit rate (%)", "n/a"})
	}
	sum, ok1 := m.Counters[ttftSum]
	count, ok2 := m.Counters[ttftCount]
	if ok1 && ok2 && count.Delta > 0 {
		rows = append(rows, [2]string{"Server mean TTFT (ms)", fmt2(1000 * sum.Delta / count.Delta)})
	}
	for _, k := range Known {
		if k.Name == ttftSum || k.Name == ttftCount {
			continue
		}
		if d, ok := m.Counters[k.Name]; ok {
			rows = append(rows, [2]string{k.Name, fmt2(d.Delta)})
		}
	}
	rows = append(rows, [2]string{"Scrapes (failed)", fmt.Sprintf("%d (%d)", m.Scrapes, m.FailedScrapes)})
	if !m.Exact {
		rows = append(rows, [2]string{"Window", "approximate"})
	}
	return title, rows
}

const (
	ttftSum   = "vllm:time_to_first_token_seconds_sum"
	ttftCount = "vllm:time_to_first_token_seconds_count"
)

func fmt2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
