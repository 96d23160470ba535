package bench

import (
	"context"
	"strings"
	"time"

	"github.com/kvbench/kvbench/bench/metrics"
	"github.com/kvbench/kvbench/bench/workload"
)

// lmcacheLookups reads the LMCache server's lookup counters from
// {--lmcache-url}/metrics; nil without --lmcache-url.
func (p *Prepared) lmcacheLookups() workload.LookupSource {
	base := p.Config.ConnURL("lmcache_url")
	if base == "" {
		return nil
	}
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	url := strings.TrimRight(base, "/") + "/metrics"
	return func(ctx context.Context) (workload.LookupTotals, error) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		vals, err := metrics.Scrape(ctx, nil, url)
		if err != nil {
			return workload.LookupTotals{}, err
		}
		return workload.LookupTotals{
			MPHit:          int64(vals["lmcache_mp_lookup_hit_tokens_total"]),
			MPRequested:    int64(vals["lmcache_mp_lookup_requested_tokens_total"]),
			BlendHit:       int64(vals["lmcache_blend_lookup_hit_tokens_total"]),
			BlendRequested: int64(vals["lmcache_blend_lookup_requested_tokens_total"]),
		}, nil
	}
}
