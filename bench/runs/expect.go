package runs

import (
	"encoding/json"

	"github.com/kvbench/kvbench/bench/sender"
)

// DefaultEngineBlock is --tr-engine-block-size's default (spec/trace.md).
const DefaultEngineBlock = 16

// TraceCache is one replayed request's cache hit set against what its
// trace predicted (spec/trace.md, "Expected cache per request").
type TraceCache struct {
	// Observed is the engine's cached_tokens (nil when not reported).
	Observed *int
	// Expected is expected_cached_tokens (an unbounded cache);
	// ExpectedLRU expected_cached_tokens_lru (nil without a KV budget).
	Expected    int
	ExpectedLRU *int
	// Reference is what the verdict compares with: the LRU figure when
	// known, else the unbounded one.
	Reference int
	// Deviation is Observed - Reference, nil for a request whose receipt
	// cannot be judged (no cached_tokens, or an unverified cache state).
	Deviation *int
	// Below: more than one engine block under Reference, as the
	// summary's below_expected counts.
	Below bool
	Block int
}

// TraceCacheOf judges r against its trace expectation with engine blocks
// of block tokens; nil for a request without one.
func TraceCacheOf(r *sender.Result, block int) *TraceCache {
	e := r.TraceExpectation
	if e == nil {
		return nil
	}
	if block <= 0 {
		block = DefaultEngineBlock
	}
	c := &TraceCache{Observed: r.CachedTokens, Expected: e.ExpectedCachedTokens, ExpectedLRU: e.ExpectedCachedTokensLRU,
		Reference: e.ExpectedCachedTokens, Block: block}
	if e.ExpectedCachedTokensLRU != nil {
		c.Reference = *e.ExpectedCachedTokensLRU
	}
	if r.CachedTokens == nil || r.CacheState == sender.StateUnverified || r.CacheState == "" {
		return c
	}
	d := *r.CachedTokens - c.Reference
	c.Deviation = &d
	c.Below = *r.CachedTokens < c.Reference-block
	return c
}

// EngineBlockSize is the engine block size a trace replay judged its
// requests with: the workload block's engine_block_size, else the
// config's tr_engine_block_size, else the default.
func EngineBlockSize(d *Detail) int {
	if d == nil {
		return DefaultEngineBlock
	}
	if d.Summary != nil {
		if n := positiveKey(d.Summary.Workload, "engine_block_size"); n > 0 {
			return n
		}
		if n := positiveKey(d.Summary.Config, "tr_engine_block_size"); n > 0 {
			return n
		}
	}
	if n := positiveKey(d.Config, "tr_engine_block_size"); n > 0 {
		return n
	}
	return DefaultEngineBlock
}

// positiveKey is a positive integer key of a JSON object, 0 otherwise.
func positiveKey(v any, key string) int {
	var b []byte
	switch t := v.(type) {
	case nil:
		return 0
	case json.RawMessage:
		b = t
	default:
		var err error
		if b, err = json.Marshal(t); err != nil {
			return 0
		}
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return 0
	}
	var n int
	if json.Unmarshal(m[key], &n) != nil || n <= 0 {
		return 0
	}
	return n
}
