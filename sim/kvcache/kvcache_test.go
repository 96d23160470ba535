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
