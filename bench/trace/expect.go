package trace

import "github.com/kvbench/kvbench/sim/kvcache"

// Expector predicts, in release order, the cache hit of each request:
// with an unbounded cache (the longest common token prefix with any
// request released before it) and, when a KV budget is known, with the
// simulator's own LRU cache model of that size. Not safe for concurrent
// use: the dispatcher calls it as it releases each request.
type Expector struct {
	block  int // trace tokens per hash id
	engine int // engine block size: expectations are multiples of it
	// fp is how many leading tokens of a block key its siblings: when
	// trace blocks are whole engine blocks, a shared run shorter than an
	// engine block can never count, so blocks are compared only with
	// siblings whose first engine block is equal.
	fp     int
	blocks *Blocks

	nodes []tnode // nodes[0] is the root
	child map[edge]int32
	twins map[edge][]int32

	lru *kvcache.Cache
}

type edge struct {
	parent int32
	key    uint64
}

type tnode struct {
	hash   int64
	maxLen int32 // the longest cut of this block seen at this position
}

// NewExpector returns an expector over blocks' contents. engineBlock is
// the engine's block size; lruTokens is the KV budget in tokens (0: no
// LRU prediction).
func NewExpector(blocks *Blocks, engineBlock, lruTokens int) *Expector {
	e := &Expector{
		block: blocks.Size(), engine: engineBlock, fp: 1, blocks: blocks,
		nodes: []tnode{{}},
		child: make(map[edge]int32),
		twins: make(map[edge][]int32),
	}
	if e.block%engineBlock == 0 {
		e.fp = engineBlock
	}
	if n := lruTokens / engineBlock; n > 0 {
		e.lru = kvcache.New(engineBlock, n, 0)
	}
	return e
}

// HasLRU reports whether LRU predictions are made.
func (e *Expector) HasLRU() bool { return e.lru != nil }

// Expect predicts the hit of the next released request and remembers it.
// prompt is its content (pool indices, as Blocks.Prompt builds it, n
// tokens over hashes); ids are the token ids the engine will see (for the
// LRU model). lru is nil without a budget.
func (e *Expector) Expect(hashes []int64, n int, prompt, ids []uint32) (expected int, lru *int) {
	p := e.commonPrefix(hashes, n, prompt)
	e.insert(hashes, n, prompt)
	expected = min(p, n-1) / e.engine * e.engine
	if e.lru != nil {
		l := e.lru.Acquire(ids)
		v := l.Cached()
		e.lru.Release(&l)
		lru = &v
	}
	return expected, lru
}

// commonPrefix is the longest common token prefix between this prompt
// and any remembered one (up to what can count after rounding down to
// engine blocks, see fp).
func (e *Expector) commonPrefix(hashes []int64, n int, prompt []uint32) int {
	p := 0
	parent := int32(0)
	for i, h := range hashes {
		l := min(e.block, n-i*e.block)
		own := prompt[i*e.block : i*e.block+l]
		c, ok := e.child[edge{parent, uint64(h)}]
		best := 0
		if ok {
			best = min(int(e.nodes[c].maxLen), l)
			if best == e.block {
				p += e.block
				parent = c
				continue
			}
		}
		if l >= e.fp {
			for _, t := range e.twins[edge{parent, fingerprint(own[:e.fp])}] {
				tn := e.nodes[t]
				if tn.hash == h {
					continue
				}
				other := e.blocks.Block(tn.hash)[:tn.maxLen]
				best = max(best, lcp(own, other))
			}
		}
		return p + best
	}
	return p
}

func (e *Expector) insert(hashes []int64, n int, prompt []uint32) {
	parent := int32(0)
	for i, h := range hashes {
		l := min(e.block, n-i*e.block)
		k := edge{parent, uint64(h)}
		c, ok := e.child[k]
		if !ok {
			c = int32(len(e.nodes))
			e.nodes = append(e.nodes, tnode{hash: h})
			e.child[k] = c
		}
		old := int(e.nodes[c].maxLen)
		if l > old {
			e.nodes[c].maxLen = int32(l)
			if old < e.fp && l >= e.fp {
				own := prompt[i*e.block : i*e.block+e.fp]
				tk := edge{parent, fingerprint(own)}
				e.twins[tk] = append(e.twins[tk], c)
			}
		}
		parent = c
	}
}

func lcp(a, b []uint32) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func fingerprint(toks []uint32) uint64 {
	h := uint64(14695981039346656037)
	for _, t := range toks {
		for i := 0; i < 4; i++ {
			h ^= uint64(byte(t >> (8 * i)))
			h *= 1099511628211
		}
	}
	return h
}
