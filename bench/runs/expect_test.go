package runs_test

import (
	"encoding/json"
	"testing"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/sender"
)

func TestTraceCacheVerdict(t *testing.T) {
	ip := func(v int) *int { return &v }
	res := func(cached *int, state string, exp int, lru *int) *sender.Result {
		return &sender.Result{CachedTokens: cached, CacheState: state,
			TraceExpectation: &sender.TraceExpectation{ExpectedCachedTokens: exp, ExpectedCachedTokensLRU: lru}}
	}
	for _, c := range []struct {
		name      string
		r         *sender.Result
		ref       int
		deviation *int
		below     bool
	}{
		{"equal, unbounded", res(ip(512), sender.StateReused, 512, nil), 512, ip(0), false},
		{"one block short is not below", res(ip(496), sender.StateReused, 512, nil), 512, ip(-16), false},
		{"more than a block short", res(ip(480), sender.StateReused, 512, nil), 512, ip(-32), true},
		{"the LRU figure is the reference", res(ip(256), sender.StateReused, 512, ip(256)), 256, ip(0), false},
		{"below the LRU figure", res(ip(0), sender.StateCold, 512, ip(256)), 256, ip(-256), true},
		{"above", res(ip(528), sender.StateReused, 512, nil), 512, ip(16), false},
		{"unverified is not judged", res(ip(0), sender.StateUnverified, 512, nil), 512, nil, false},
		{"no cached_tokens", res(nil, sender.StateCold, 512, nil), 512, nil, false},
	} {
		tc := runs.TraceCacheOf(c.r, 16)
		if tc.Reference != c.ref || tc.Below != c.below || (tc.Deviation == nil) != (c.deviation == nil) ||
			(tc.Deviation != nil && *tc.Deviation != *c.deviation) {
			t.Errorf("%s: reference %d deviation %v below %v; want %d %v %v", c.name, tc.Reference, tc.Deviation, tc.Below, c.ref, c.deviation, c.below)
		}
	}
	if runs.TraceCacheOf(&sender.Result{}, 16) != nil {
		t.Error("a request without an expectation judged")
	}
}

func TestEngineBlockSize(t *testing.T) {
	d := &runs.Detail{Summary: &record.Summary{}}
	if n := runs.EngineBlockSize(d); n != runs.DefaultEngineBlock {
		t.Errorf("default %d", n)
	}
	d.Config = json.RawMessage(`{"tr_engine_block_size": 32}`)
	if n := runs.EngineBlockSize(d); n != 32 {
		t.Errorf("from config.json %d", n)
	}
	d.Summary.Workload = json.RawMessage(`{"engine_block_size": 64}`)
	if n := runs.EngineBlockSize(d); n != 64 {
		t.Errorf("from the workload block %d", n)
	}
}
