package trace

import "testing"

// BenchmarkReleaseConversationTurn is the dispatcher's work for one
// request of a conversation-like trace: a 12k-token prompt over 16-token
// blocks that extends an earlier one, built and predicted (unbounded and
// LRU).
func BenchmarkReleaseConversationTurn(b *testing.B) {
	const n = 12000
	blocks := NewBlocks(16, 500, 1, "x", 0)
	ex := NewExpector(blocks, 16, 100_000_000)
	hashes := make([]int64, n/16)
	for i := range hashes {
		hashes[i] = int64(i)
	}
	var scratch []uint32
	ids := make([]uint32, n)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		// Each turn adds a fresh last block to a shared history.
		hashes[len(hashes)-1] = int64(1_000_000 + i)
		scratch = blocks.Prompt(scratch[:0], hashes, n)
		for k, t := range scratch {
			ids[k] = t + 1000
		}
		ex.Expect(hashes, n, scratch, ids)
	}
}

// BenchmarkReadFixture reads the Mooncake fixture's 300 lines (3.9M
// prompt tokens): one allocation per line, its hash ids.
func BenchmarkReadFixture(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r, err := Open(mooncakeFixture, Mooncake, 512)
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
		r.Close()
	}
}
