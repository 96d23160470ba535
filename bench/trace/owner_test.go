package trace

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// bailianChains writes lines of conversations that interleave, as a
// Bailian trace does: chat ids 1.., each conversation of up to turns
// turns, its first turn a root; a few parents were never written (a
// trace cut before them, or an id missing from it).
func bailianChains(rng *rand.Rand, convs, turns int) []Request {
	var out []Request
	last := make([]int, convs) // each conversation's last chat id, 0 before its first turn
	left := make([]int, convs)
	for i := range left {
		left[i] = 1 + rng.IntN(turns)
	}
	active := convs
	id := 0
	for active > 0 {
		c := rng.IntN(convs)
		if left[c] == 0 {
			continue
		}
		id++
		parent := "-1"
		switch {
		case last[c] > 0:
			parent = fmt.Sprint(last[c])
		case rng.IntN(20) == 0:
			parent = fmt.Sprint(1_000_000_000 + c) // never read
		}
		out = append(out, Request{Line: len(out), ChatID: fmt.Sprint(id), ParentChatID: parent})
		last[c] = id
		if left[c]--; left[c] == 0 {
			active--
		}
	}
	return out
}

// Each line goes to exactly one shard, the one its chain's root hashes
// to: the first chat_id of the chain, or the parent id the chain hangs
// from when that parent was never read.
func TestShardsSplitChainsExactlyOnce(t *testing.T) {
	reqs := bailianChains(rand.New(rand.NewPCG(3, 4)), 3000, 8)
	root := map[string]string{}
	for _, q := range reqs {
		r, ok := root[q.ParentChatID]
		switch {
		case isRoot(q.ParentChatID):
			r = q.ChatID
		case !ok:
			r = q.ParentChatID
		}
		root[q.ChatID] = r
	}
	for _, count := range []int{2, 3, 7} {
		owners := make([]*Owner, count)
		for i := range owners {
			owners[i] = NewOwner(i, count)
		}
		for _, q := range reqs {
			by := -1
			for i, o := range owners {
				if o.Owns(&q) {
					if by >= 0 {
						t.Fatalf("%d shards: line %d sent by shards %d and %d", count, q.Line, by, i)
					}
					by = i
				}
			}
			if want := owners[0].shardOf(root[q.ChatID]); by != want {
				t.Fatalf("%d shards: line %d (chat %s, root %s) sent by shard %d, want %d", count, q.Line, q.ChatID, root[q.ChatID], by, want)
			}
		}
	}
}

// A shard remembers its own chains' ids and the few of the others' that
// hash to it, 8 bytes each, never every chat id: with 4 shards about
// 40% of the lines, and the heap grows by a few bytes per line read.
func TestShardedOwnerHoldsItsShareOfIDs(t *testing.T) {
	const n = 200_000
	reqs := bailianChains(rand.New(rand.NewPCG(5, 6)), n/5, 9)
	var o *Owner
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	o = NewOwner(1, 4)
	for i := range reqs {
		o.Owns(&reqs[i])
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(reqs)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	perLine := float64(grown) / float64(len(reqs))
	t.Logf("%d lines: %d ids held (%.0f%%), heap +%.1f MB (%.1f bytes per line)", len(reqs), o.Held(), 100*float64(o.Held())/float64(len(reqs)), float64(grown)/(1<<20), perLine)
	if o.Held() > len(reqs)/2 {
		t.Errorf("%d of %d ids held by one of 4 shards", o.Held(), len(reqs))
	}
	// Keeping every chat id with its root's, as the replay did, took 53
	// bytes per line here (the strings shared with these lines); a Go map
	// of 128-bit keys 17, of 8-byte keys 12; the idSet 8.
	if perLine > 11 {
		t.Errorf("%.1f bytes per line read", perLine)
	}
	runtime.KeepAlive(o)
}

// An unsharded replay remembers nothing.
func TestUnshardedOwnerHoldsNothing(t *testing.T) {
	o := NewOwner(0, 1)
	for _, q := range bailianChains(rand.New(rand.NewPCG(1, 1)), 100, 4) {
		if !o.Owns(&q) {
			t.Fatal("an unsharded replay skipped a line")
		}
	}
	if o.Held() != 0 {
		t.Errorf("%d ids held", o.Held())
	}
}

// The id set against a map: adds, removes (backward shifts through
// probe runs that wrap) and lookups, key 0 included, in a small key
// space so that runs are long.
func TestIDSetMatchesAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	var s idSet
	ref := map[uint64]bool{}
	for i := 0; i < 200_000; i++ {
		k := uint64(rng.IntN(3000))
		if rng.IntN(7) == 0 {
			k = 1<<63 | k // the hashed half
		}
		switch rng.IntN(3) {
		case 0:
			s.add(k)
			ref[k] = true
		case 1:
			s.remove(k)
			delete(ref, k)
		}
		if s.has(k) != ref[k] || s.n != len(ref) {
			t.Fatalf("step %d key %d: has %v (want %v), %d keys (want %d)", i, k, s.has(k), ref[k], s.n, len(ref))
		}
	}
	for k := uint64(0); k < 3000; k++ {
		if s.has(k) != ref[k] || s.has(1<<63|k) != ref[1<<63|k] {
			t.Fatalf("key %d", k)
		}
	}
}

func TestDecimalIDsAreExact(t *testing.T) {
	o := NewOwner(0, 2)
	for id, want := range map[string]uint64{"0": 0, "7": 7, "9223372036854775807": 1<<63 - 1} {
		if got := o.key(id); got != want {
			t.Errorf("key(%s) = %d", id, got)
		}
	}
	// Not plain integers in [0, 2^63): hashed, top bit set.
	for _, id := range []string{"9223372036854775808", "01", "-1", `"7"`, "1e3", "1.0", "", "99999999999999999999"} {
		if o.key(id)>>63 != 1 {
			t.Errorf("key(%q) = %d, not a hash", id, o.key(id))
		}
	}
}
