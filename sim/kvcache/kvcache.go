// Package kvcache is the simulated engine's prefix-cache model: vLLM-style
// chained block hashes, a GPU tier under LRU with pinning, and an optional
// LMCache-like CPU tier. The simulator serves from it; trace replay uses
// the same model, as a library, to predict what an LRU cache of a given
// size would have served.
package kvcache

import "sync"

// The prefix cache works like vLLM's: a prompt is cut into full blocks of
// blockSize tokens, block i is keyed by hash(key of block i-1, ids of block
// i), so a block can only be found through the whole prefix before it. The
// GPU tier keeps blocks under LRU; blocks that running requests use are
// pinned and never evicted. An optional CPU tier (LMCache-like) receives the
// blocks the GPU tier evicts and hands them back on a hit (the tiers are
// exclusive: a block lives in one of them).

type tierID int8

const (
	tierGPU tierID = iota
	tierCPU
)

type block struct {
	hash       uint64
	tier       tierID
	refs       int // running requests using it; pinned while > 0 (GPU only)
	prev, next *block
}

// lru is an intrusive doubly linked list: head is the next victim.
type lru struct {
	head, tail *block
	n          int
}

func (l *lru) pushBack(b *block) {
	b.prev, b.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = b
	} else {
		l.head = b
	}
	l.tail = b
	l.n++
}

func (l *lru) remove(b *block) {
	if b.prev != nil {
		b.prev.next = b.next
	} else {
		l.head = b.next
	}
	if b.next != nil {
		b.next.prev = b.prev
	} else {
		l.tail = b.prev
	}
	b.prev, b.next = nil, nil
	l.n--
}

// Cache is a two-tier prefix cache; it is safe for concurrent use.
type Cache struct {
	mu        sync.Mutex
	blockSize int
	gpuCap    int // blocks
	cpuCap    int // blocks
	blocks    map[uint64]*block
	gpuUsed   int // resident GPU blocks, pinned or not
	gpuFree   lru // resident GPU blocks with refs == 0
	cpu       lru // every CPU block
}

// New returns an empty cache of gpuBlocks GPU blocks and cpuBlocks CPU
// blocks of blockSize tokens each (gpuBlocks 0 turns caching off).
func New(blockSize, gpuBlocks, cpuBlocks int) *Cache {
	return &Cache{
		blockSize: blockSize,
		gpuCap:    gpuBlocks,
		cpuCap:    cpuBlocks,
		blocks:    make(map[uint64]*block),
	}
}

// Lookup is what one admitted request saw in the cache.
type Lookup struct {
	PromptTokens int // tokens looked up (the whole prompt)
	GPUTokens    int // served from the GPU tier
	CPUTokens    int // served from the CPU tier (charged at --cpu-load-tps)
	pinned       []*block
}

// Cached is the cached_tokens the request reports: both tiers' hits.
func (l Lookup) Cached() int { return l.GPUTokens + l.CPUTokens }

// BlockHashes returns the chained keys of ids' full blocks.
func BlockHashes(ids []uint32, blockSize int) []uint64 {
	n := len(ids) / blockSize
	hashes := make([]uint64, n)
	parent := uint64(fnvOffset64)
	for i := 0; i < n; i++ {
		h := fnvAdd64(fnvOffset64, parent)
		for _, id := range ids[i*blockSize : (i+1)*blockSize] {
			h = fnvAdd32(h, id)
		}
		hashes[i] = h
		parent = h
	}
	return hashes
}

// Acquire looks the prompt up, then inserts and pins every full block of
// it, so that a request's own blocks survive while it runs. Only whole
// blocks are served and the last prompt token never is (it must be
// computed to produce the first output token), so at most
// floor((len(ids)-1)/blockSize) blocks hit. The caller must Release.
func (c *Cache) Acquire(ids []uint32) Lookup {
	res := Lookup{PromptTokens: len(ids)}
	if c.gpuCap == 0 || len(ids) == 0 {
		return res
	}
	hashes := BlockHashes(ids, c.blockSize)
	maxHit := (len(ids) - 1) / c.blockSize

	c.mu.Lock()
	defer c.mu.Unlock()

	// 1. The cached run of the chain: pin its GPU blocks first, so that
	// making room below can never evict them, and take its CPU blocks out
	// of the CPU tier's LRU.
	var fromCPU []*block
	n := 0
	for ; n < len(hashes); n++ {
		b := c.blocks[hashes[n]]
		if b == nil {
			break
		}
		hit := n < maxHit
		switch b.tier {
		case tierGPU:
			c.pin(b)
			res.pinned = append(res.pinned, b)
			if hit {
				res.GPUTokens += c.blockSize
			}
		case tierCPU:
			c.cpu.remove(b)
			fromCPU = append(fromCPU, b)
			if hit {
				res.CPUTokens += c.blockSize
			}
		}
	}
	// 2. Promote the CPU hits to the GPU tier. Without GPU room (every
	// block pinned) a block was still loaded for this request but stays in
	// the CPU tier.
	for _, b := range fromCPU {
		if !c.makeRoom() {
			if c.cpu.n >= c.cpuCap && c.cpu.head != nil {
				old := c.cpu.head
				c.cpu.remove(old)
				delete(c.blocks, old.hash)
			}
			c.cpu.pushBack(b)
			continue
		}
		b.tier = tierGPU
		c.gpuUsed++
		b.refs = 1
		res.pinned = append(res.pinned, b)
	}
	// 3. Insert the rest of the chain as freshly computed blocks.
	for _, h := range hashes[n:] {
		if b := c.blocks[h]; b != nil {
			// A block whose parent was evicted: unreachable until now.
			if b.tier == tierGPU {
				c.pin(b)
				res.pinned = append(res.pinned, b)
				continue
			}
			c.cpu.remove(b)
			delete(c.blocks, h)
		}
		if !c.makeRoom() {
			// Every GPU block is pinned by running requests: the rest of
			// this prompt cannot be kept.
			break
		}
		b := &block{hash: h, tier: tierGPU, refs: 1}
		c.blocks[h] = b
		c.gpuUsed++
		res.pinned = append(res.pinned, b)
	}
	return res
}

func (c *Cache) pin(b *block) {
	if b.refs == 0 {
		c.gpuFree.remove(b)
	}
	b.refs++
}

// makeRoom frees one GPU block if the tier is full, demoting the least
// recently used unpinned block to the CPU tier (or dropping it). It reports
// whether there is room for one more block.
func (c *Cache) makeRoom() bool {
	if c.gpuUsed < c.gpuCap {
		return true
	}
	victim := c.gpuFree.head
	if victim == nil {
		return false
	}
	c.gpuFree.remove(victim)
	c.gpuUsed--
	if c.cpuCap == 0 {
		delete(c.blocks, victim.hash)
		return true
	}
	if c.cpu.n >= c.cpuCap {
		old := c.cpu.head
		c.cpu.remove(old)
		delete(c.blocks, old.hash)
	}
	victim.tier = tierCPU
	c.cpu.pushBack(victim)
	return true
}

// Release unpins a request's blocks. As in vLLM they are freed tail first,
// so that under pressure a prefix loses its end before its start.
func (c *Cache) Release(l *Lookup) {
	if len(l.pinned) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(l.pinned) - 1; i >= 0; i-- {
		b := l.pinned[i]
		b.refs--
		if b.refs == 0 {
			c.gpuFree.pushBack(b)
		}
	}
	l.pinned = nil
}

// Reset drops every cached block of both tiers that no running request
// holds (vLLM's reset_prefix_cache); the blocks of requests still running
// stay until they are released. It returns the blocks dropped.
func (c *Cache) Reset() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for b := c.gpuFree.head; b != nil; b = c.gpuFree.head {
		c.gpuFree.remove(b)
		c.gpuUsed--
		delete(c.blocks, b.hash)
		n++
	}
	for b := c.cpu.head; b != nil; b = c.cpu.head {
		c.cpu.remove(b)
		delete(c.blocks, b.hash)
		n++
	}
	return n
}

// Usage is the share of GPU blocks held by running requests, in [0,1]. As
// in vLLM, cached blocks that no request uses count as free: they are
// evictable at any time.
func (c *Cache) Usage() float64 {
	if c.gpuCap == 0 {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return float64(c.gpuUsed-c.gpuFree.n) / float64(c.gpuCap)
}

// Resident reports the blocks held by each tier (for tests and /status).
func (c *Cache) Resident() (gpu, cpu int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gpuUsed, c.cpu.n
}

// Capacity is the tiers' sizes in tokens.
func (c *Cache) Capacity() (gpu, cpu int) { return c.gpuCap * c.blockSize, c.cpuCap * c.blockSize }

// BlockSize is the tokens per block.
func (c *Cache) BlockSize() int { return c.blockSize }

// FNV-1a, 64 bits, over little-endian uint64/uint32 words, inlined so
// hashing a long prompt allocates nothing.
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

func fnvAdd32(h uint64, v uint32) uint64 {
	for i := 0; i < 4; i++ {
		h ^= uint64(byte(v >> (8 * i)))
		h *= fnvPrime64
	}
	return h
}

func fnvAdd64(h uint64, v uint64) uint64 {
	for i := 0; i < 8; i++ {
		h ^= uint64(byte(v >> (8 * i)))
		h *= fnvPrime64
	}
	return h
}
