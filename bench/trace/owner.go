package trace

import "hash/maphash"

// Owner decides which lines a shard of a sharded replay sends
// (spec/scale-out.md): whole conversations where the format has them
// (Bailian: the chain of parent_chat_id up to its root, assigned by a
// hash of the root's chat_id), else every Nth line. Feed it every valid
// line in file order.
//
// A shard remembers only the chat ids of its own chains, and of the
// other shards' lines whose chat_id hashes to it: those tell a parent
// another shard holds from one never read (before --tr-start, or missing
// from the trace), whose chain is then assigned by a hash of that
// parent's chat_id. Every line is still sent by exactly one shard:
//   - a root (parent_chat_id -1) goes to hash(chat_id);
//   - a line whose parent was read goes where the parent went: that
//     shard holds the parent as its own; any other either holds it as
//     foreign (the parent's id hashes there) or is not hash(parent);
//   - a line whose parent was never read goes to hash(parent), the one
//     shard that, holding neither, owns it.
//
// Ids are kept in 8 bytes each (see key): about 2/N of the trace's
// lines for N shards, never every chat id.
type Owner struct {
	index, count int
	seed         maphash.Seed
	own          idSet // lines this shard sends
	foreign      idSet // lines others send whose chat_id hashes here
}

// NewOwner returns the owner of shard index of count (count <= 1: all).
func NewOwner(index, count int) *Owner {
	o := &Owner{index: index, count: count}
	if count > 1 {
		o.seed = maphash.MakeSeed()
	}
	return o
}

// Held is how many chat ids the owner remembers.
func (o *Owner) Held() int { return o.own.n + o.foreign.n }

// key is a chat id in 8 bytes: its value when it is a JSON integer in
// [0, 2^63) (Bailian's ids are), exactly; else a 63-bit hash of its text
// with the top bit set, which two ids share with a chance of 2^-63.
func (o *Owner) key(id string) uint64 {
	if v, ok := decimalID(id); ok {
		return v
	}
	return maphash.String(o.seed, id) | 1<<63
}

// decimalID is id's value when it is a JSON integer in [0, 2^63): digits
// without a leading zero, so that one value has one text.
func decimalID(id string) (uint64, bool) {
	if len(id) == 0 || len(id) > 19 || id[0] == '0' && len(id) > 1 {
		return 0, false
	}
	v := uint64(0)
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0') // 19 digits fit in 64 bits
	}
	return v, v < 1<<63
}

// shardOf is the shard a chain rooted at id goes to.
func (o *Owner) shardOf(id string) int {
	h := uint32(2166136261) // FNV-1a, 32 bits
	for i := 0; i < len(id); i++ {
		h ^= uint32(id[i])
		h *= 16777619
	}
	return int(h % uint32(o.count))
}

// isRoot reports a parent_chat_id that marks a conversation's first turn.
func isRoot(parent string) bool { return parent == "-1" || parent == `"-1"` }

// Owns reports whether this shard sends q.
func (o *Owner) Owns(q *Request) bool {
	if o.count <= 1 {
		return true
	}
	if q.ChatID == "" {
		return q.Line%o.count == o.index
	}
	var mine bool
	if isRoot(q.ParentChatID) {
		mine = o.shardOf(q.ChatID) == o.index
	} else {
		p := o.key(q.ParentChatID)
		mine = o.own.has(p) || !o.foreign.has(p) && o.shardOf(q.ParentChatID) == o.index
	}
	// A chat_id read again follows its latest line, in every shard alike.
	k := o.key(q.ChatID)
	switch {
	case mine:
		o.own.add(k)
		o.foreign.remove(k)
	default:
		o.own.remove(k)
		if o.shardOf(q.ChatID) == o.index {
			o.foreign.add(k)
		}
	}
	return mine
}

// idSet is a set of 8-byte keys, open addressing with linear probing in
// one slice at most 3/4 full: about 11 bytes a key where a Go map takes
// about 29. Slot value 0 is empty; key 0 is kept aside.
type idSet struct {
	slots   []uint64
	n       int // keys held, zero included
	hasZero bool
}

func (s *idSet) home(k uint64) int { return int(mix(k) & uint64(len(s.slots)-1)) }

// find returns k's slot, or the empty slot where it would go.
func (s *idSet) find(k uint64) int {
	i := s.home(k)
	for s.slots[i] != 0 && s.slots[i] != k {
		i = (i + 1) & (len(s.slots) - 1)
	}
	return i
}

func (s *idSet) has(k uint64) bool {
	if k == 0 {
		return s.hasZero
	}
	return len(s.slots) > 0 && s.slots[s.find(k)] == k
}

func (s *idSet) add(k uint64) {
	if k == 0 {
		if !s.hasZero {
			s.hasZero, s.n = true, s.n+1
		}
		return
	}
	if 4*(s.n+1) > 3*len(s.slots) {
		s.grow()
	}
	if i := s.find(k); s.slots[i] == 0 {
		s.slots[i] = k
		s.n++
	}
}

func (s *idSet) grow() {
	old := s.slots
	s.slots = make([]uint64, max(2*len(old), 1024))
	for _, k := range old {
		if k != 0 {
			s.slots[s.find(k)] = k
		}
	}
}

// remove deletes k, shifting back the keys after it that probed past
// its slot, so that no lookup needs a tombstone.
func (s *idSet) remove(k uint64) {
	if k == 0 {
		if s.hasZero {
			s.hasZero, s.n = false, s.n-1
		}
		return
	}
	if len(s.slots) == 0 {
		return
	}
	i := s.find(k)
	if s.slots[i] == 0 {
		return
	}
	s.n--
	mask := len(s.slots) - 1
	for j := (i + 1) & mask; s.slots[j] != 0; j = (j + 1) & mask {
		// The key at j may move to the hole at i when its home is not
		// in the cyclic range (i, j].
		if h := s.home(s.slots[j]); (j-h)&mask >= (j-i)&mask {
			s.slots[i] = s.slots[j]
			i = j
		}
	}
	s.slots[i] = 0
}
