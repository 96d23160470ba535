package trace

import "hash/fnv"

// Owner decides which lines a shard of a sharded replay sends
// (spec/scale-out.md): whole conversations where the format has them
// (Bailian: the chain of parent_chat_id up to its root), else every Nth
// line. Feed it every line in file order.
type Owner struct {
	index, count int
	roots        map[string]string // chat_id -> its root's chat_id
}

// NewOwner returns the owner of shard index of count (count <= 1: all).
func NewOwner(index, count int) *Owner {
	return &Owner{index: index, count: count, roots: map[string]string{}}
}

// Owns reports whether this shard sends q.
func (o *Owner) Owns(q *Request) bool {
	if o.count <= 1 {
		return true
	}
	if q.ChatID == "" {
		return q.Line%o.count == o.index
	}
	root, ok := o.roots[q.ParentChatID]
	if !ok {
		root = q.ChatID // a root, or a parent outside the replayed lines
	}
	o.roots[q.ChatID] = root
	h := fnv.New32a()
	h.Write([]byte(root))
	return int(h.Sum32()%uint32(o.count)) == o.index
}
