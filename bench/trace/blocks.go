package trace

import (
	"container/list"
	"hash/fnv"
)

// Blocks generates the content of each hash id's block: exactly size
// tokens, each an index into a pool of pool tokens, drawn from a generator
// seeded by (seed, salt, hash id). The same hash id always yields the same
// block; another salt yields other contents of the same length. A bounded
// cache keeps recently used blocks so that a long trace's shared prefixes
// are not generated again for every request. Not safe for concurrent use.
type Blocks struct {
	size int
	pool int
	key  uint64

	capBlocks int
	lru       *list.List // of *blockEntry, front = most recent
	byHash    map[int64]*list.Element
}

type blockEntry struct {
	hash int64
	toks []uint32
}

// DefaultCacheTokens bounds the block cache: 4M tokens (16 MB).
const DefaultCacheTokens = 4 << 20

// NewBlocks returns a generator of size-token blocks over a pool of pool
// tokens. cacheTokens bounds the cache (0: DefaultCacheTokens).
func NewBlocks(size, pool int, seed int64, salt string, cacheTokens int) *Blocks {
	if cacheTokens <= 0 {
		cacheTokens = DefaultCacheTokens
	}
	h := fnv.New64a()
	h.Write([]byte(salt))
	key := mix(h.Sum64() ^ mix(uint64(seed)))
	return &Blocks{
		size: size, pool: pool, key: key,
		capBlocks: max(1, cacheTokens/size),
		lru:       list.New(),
		byHash:    make(map[int64]*list.Element),
	}
}

// Size is the tokens per block.
func (b *Blocks) Size() int { return b.size }

// Block returns hash id h's block (pool indices). The slice is shared:
// callers must not modify it, and it stays valid until the next call.
func (b *Blocks) Block(h int64) []uint32 {
	if e, ok := b.byHash[h]; ok {
		b.lru.MoveToFront(e)
		return e.Value.(*blockEntry).toks
	}
	var toks []uint32
	if b.lru.Len() >= b.capBlocks {
		// Reuse the evicted block's memory.
		old := b.lru.Back()
		ent := old.Value.(*blockEntry)
		delete(b.byHash, ent.hash)
		b.lru.Remove(old)
		toks = ent.toks
	} else {
		toks = make([]uint32, b.size)
	}
	b.fill(h, toks)
	b.byHash[h] = b.lru.PushFront(&blockEntry{hash: h, toks: toks})
	return toks
}

// fill writes h's block into toks.
func (b *Blocks) fill(h int64, toks []uint32) {
	s := b.key ^ mix(uint64(h)+0x9e3779b97f4a7c15)
	n := uint64(b.pool)
	for i := range toks {
		s += 0x9e3779b97f4a7c15
		toks[i] = uint32(mix(s) % n)
	}
}

// Prompt appends the prompt of a request to dst: its blocks in order, the
// last one cut so that the prompt has exactly n tokens.
func (b *Blocks) Prompt(dst []uint32, hashes []int64, n int) []uint32 {
	for i, h := range hashes {
		take := min(b.size, n-i*b.size)
		if take <= 0 {
			break
		}
		dst = append(dst, b.Block(h)[:take]...)
	}
	return dst
}

// mix is splitmix64's finaliser.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
