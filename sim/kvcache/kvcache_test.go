package kvcache

import "testing"

func TestPinnedBlocksSurviveEviction(t *testing.T) {
	c := New(16, 4, 0)
	a := make([]uint32, 48) // 3 blocks
	b := make([]uint32, 48)
	for i := range a {
		a[i], b[i] = uint32(i+1), uint32(1000+i)
	}
	la := c.Acquire(a)
	lb := c.Acquire(b) // only one GPU block left: b keeps its first block
	if len(lb.pinned) != 1 {
		t.Fatalf("b pinned %d blocks, want 1", len(lb.pinned))
	}
	c.Release(&lb)
	again := c.Acquire(a)
	if again.GPUTokens != 32 {
		t.Errorf("a while pinned: %d GPU tokens cached, want 32", again.GPUTokens)
	}
	c.Release(&again)
	c.Release(&la)
	// Unpinned now: b's three blocks evict a's, tail first.
	lb = c.Acquire(b)
	if lb.GPUTokens != 16 || len(lb.pinned) != 3 {
		t.Errorf("b: cached %d pinned %d", lb.GPUTokens, len(lb.pinned))
	}
	c.Release(&lb)
	la = c.Acquire(a)
	if la.GPUTokens != 16 {
		t.Errorf("a after eviction: cached %d, want 16 (its head survived)", la.GPUTokens)
	}
}

func TestResetDropsBothTiers(t *testing.T) {
	c := New(16, 2, 4)
	a := make([]uint32, 49) // 3 full blocks
	b := make([]uint32, 33) // 2 full blocks
	for i := range a {
		a[i] = uint32(i + 1)
	}
	for i := range b {
		b[i] = uint32(500 + i)
	}
	la := c.Acquire(a) // a's blocks demote each other into the CPU tier
	c.Release(&la)
	lb := c.Acquire(b) // b stays pinned: a running request
	if gpu, cpu := c.Resident(); gpu == 0 || cpu == 0 {
		t.Fatalf("setup: resident %d GPU %d CPU blocks, want both tiers used", gpu, cpu)
	}
	if n := c.Reset(); n == 0 {
		t.Fatal("reset dropped nothing")
	}
	if _, cpu := c.Resident(); cpu != 0 {
		t.Errorf("CPU tier holds %d blocks after reset", cpu)
	}
	if again := c.Acquire(a); again.Cached() != 0 {
		t.Errorf("a after reset: %d cached tokens, want 0", again.Cached())
	} else {
		c.Release(&again)
	}
	// The running request's blocks stayed and serve a repeat once it ends.
	c.Release(&lb)
	if again := c.Acquire(b); again.Cached() != 32 {
		t.Errorf("b (running during the reset): %d cached, want 32", again.Cached())
	}
}
