package load

import (
	"testing"

	"github.com/kvbench/kvbench/config"
)

// A shard sends its share of the run's rate and is judged against it:
// target 10/s for shard 1/3 of a 30/s run, and the lag allowed is 10% of
// its own mean gap (100 ms, not the run's 33 ms).
func TestShardJudgedAgainstItsShare(t *testing.T) {
	s := Settings{Rate: 30, Arrival: Poisson, Burstiness: 1, Shard: config.Shard{Index: 1, Count: 3}}
	b, _ := NewTracker(s).Final(0, nil, nil)
	if b.TargetRate == nil || *b.TargetRate != 10 {
		t.Fatalf("shard 1/3 of 30/s: target %v, want 10", b.TargetRate)
	}
	if got := LagLimitMs(s); got != 10 {
		t.Fatalf("lag limit %v ms, want 10 (max(10, 10%% of 100 ms))", got)
	}
	s.Rate = 3
	if got := LagLimitMs(s); got != 100 {
		t.Fatalf("lag limit %v ms, want 100 (10%% of the shard's 1 s gap)", got)
	}
	s.Shard = config.Shard{}
	if b, _ := NewTracker(s).Final(0, nil, nil); *b.TargetRate != 3 {
		t.Fatalf("a whole run's target is its rate: %v", *b.TargetRate)
	}
}
