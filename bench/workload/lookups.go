package workload

import "context"

// Which of LMCache's lookup counter families a server uses.
const (
	LookupBlend  = "blend" // lmcache_blend_lookup_*: non-prefix (blended) reuse
	LookupPrefix = "mp"    // lmcache_mp_lookup_*: prefix-chained lookups
	LookupNone   = "none"  // neither moved
)

// LookupTotals are an LMCache server's lookup counters, each summed over
// all of its label sets, or the change of them over a phase.
type LookupTotals struct {
	MPHit          int64 `json:"mp_hit_tokens"`
	MPRequested    int64 `json:"mp_requested_tokens"`
	BlendHit       int64 `json:"blend_hit_tokens"`
	BlendRequested int64 `json:"blend_requested_tokens"`
}

// LookupSource reads the counters (from the LMCache server's /metrics).
type LookupSource func(ctx context.Context) (LookupTotals, error)

// Sub is the change from before to t.
func (t LookupTotals) Sub(before LookupTotals) LookupTotals {
	return LookupTotals{
		MPHit: t.MPHit - before.MPHit, MPRequested: t.MPRequested - before.MPRequested,
		BlendHit: t.BlendHit - before.BlendHit, BlendRequested: t.BlendRequested - before.BlendRequested,
	}
}

// InUse is the family with more requested tokens: the one the server
// uses; LookupNone when neither moved.
func (t LookupTotals) InUse() string {
	switch {
	case t.MPRequested <= 0 && t.BlendRequested <= 0:
		return LookupNone
	case t.BlendRequested >= t.MPRequested:
		return LookupBlend
	}
	return LookupPrefix
}

func (t LookupTotals) moved() bool { return t.InUse() != LookupNone }

// inUseTotals are the hit and requested tokens of the family in use.
func (t LookupTotals) inUseTotals() (hit, requested int64) {
	if t.InUse() == LookupPrefix {
		return t.MPHit, t.MPRequested
	}
	return t.BlendHit, t.BlendRequested
}
