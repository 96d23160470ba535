package trace

import (
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const mooncakeFixture = "testdata/mooncake_synthetic_head300.jsonl"
const bailianFixture = "testdata/bailian_chat.jsonl"

func readAll(t *testing.T, path string, f Format, block int) []Request {
	t.Helper()
	r, err := Open(path, f, block)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []Request
	for {
		q, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, q)
	}
}

func TestDetect(t *testing.T) {
	for path, want := range map[string]Format{mooncakeFixture: Mooncake, bailianFixture: Bailian} {
		got, err := Detect(path)
		if err != nil || got != want {
			t.Errorf("Detect(%s) = %q, %v; want %q", path, got, err, want)
		}
	}
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	os.WriteFile(empty, []byte("\n\n"), 0o644)
	if _, err := Detect(empty); err == nil || !strings.Contains(err.Error(), "no lines") {
		t.Errorf("empty trace: %v", err)
	}
}

func TestMooncakeFixture(t *testing.T) {
	reqs := readAll(t, mooncakeFixture, Mooncake, 512)
	if len(reqs) != 300 {
		t.Fatalf("%d requests, want 300", len(reqs))
	}
	total, longest := 0, 0
	for i, q := range reqs {
		if q.Line != i {
			t.Fatalf("request %d has line %d", i, q.Line)
		}
		if len(q.HashIDs) != (q.InputLength+511)/512 {
			t.Fatalf("line %d: %d ids for %d tokens", i, len(q.HashIDs), q.InputLength)
		}
		total += q.InputLength
		longest = max(longest, q.InputLength)
	}
	// The figures of fixtures/README.md.
	if total != 3853165 || longest != 134773 {
		t.Errorf("total %d longest %d; want 3853165 and 134773", total, longest)
	}
	if last := reqs[299].Timestamp; last != 86790*time.Millisecond {
		t.Errorf("last timestamp %v", last)
	}
	if reqs[0].InputLength != 40160 || reqs[0].OutputLength != 6 || reqs[2].Timestamp != 40*time.Millisecond {
		t.Errorf("first lines: %+v %+v", reqs[0], reqs[2])
	}
}

func TestBailianLinesAndSeconds(t *testing.T) {
	reqs := readAll(t, bailianFixture, Bailian, 16)
	if len(reqs) != 6 {
		t.Fatalf("%d requests, want 6 (the blank line is skipped)", len(reqs))
	}
	if reqs[3].Line != 4 || reqs[3].Timestamp != 2*time.Second || reqs[1].Timestamp != 250*time.Millisecond {
		t.Errorf("line numbers or seconds: %+v %+v", reqs[3], reqs[1])
	}
	if reqs[2].ChatID != "3" || reqs[2].ParentChatID != "1" || reqs[0].ParentChatID != "-1" {
		t.Errorf("chat links: %+v", reqs[2])
	}
	if got := reqs[5].HashIDs; len(got) != 1 || got[0] != 100 {
		t.Errorf("the last line's ids: %v", got)
	}
}

func TestInvalidLinesNameFileAndLine(t *testing.T) {
	cases := []struct{ line, want string }{
		{`{"timestamp": 0, "input_length": 10, "output_length": 1}`, `line 2: missing field "hash_ids"`},
		{`{"timestamp": 0, "input_length": 600, "output_length": 1, "hash_ids": [1]}`, "line 2: hash_ids has 1 ids, fewer than the 2 that input_length 600 needs in 512-token blocks"},
		{`{"timestamp": 0, "input_length": 1.5, "output_length": 1, "hash_ids": [1]}`, "line 2: input_length must be an integer >= 1 (got 1.5)"},
		{`{"timestamp": 0, "input_length": 0, "output_length": 1, "hash_ids": [1]}`, "input_length must be an integer >= 1"},
		{`{"timestamp": -1, "input_length": 5, "output_length": 1, "hash_ids": [1]}`, "timestamp must be a number >= 0"},
		{`{"timestamp": 0, "input_length": 5, "output_length": -2, "hash_ids": [1]}`, "output_length must be an integer >= 0"},
		{`{"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": ["a"]}`, "line 2: not a valid mooncake line"},
		{`{"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": [1.5]}`, "hash_ids[0] must be an integer"},
		{`{"timestamp": 0, "input_length": 5,`, "line 2: not a valid mooncake line: invalid JSON"},
		{`[1, 2]`, "line 2: not a JSON object"},
	}
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), "t.jsonl")
		good := `{"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": [7]}`
		os.WriteFile(path, []byte(good+"\n"+c.line+"\n"+good+"\n"), 0o644)
		r, _ := Open(path, Mooncake, 512)
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		_, err := r.Next()
		var le *LineError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: got %v, want %q naming %s", c.line, err, c.want, path)
		}
		// Reading goes on after a bad line (--tr-skip-invalid).
		if q, err := r.Next(); err != nil || q.Line != 2 {
			t.Errorf("after the bad line: %+v %v", q, err)
		}
		r.Close()
	}
	// Bailian lines need their own fields.
	path := filepath.Join(t.TempDir(), "b.jsonl")
	os.WriteFile(path, []byte(`{"chat_id": 1, "parent_chat_id": -1, "timestamp": 0, "input_length": 5, "output_length": 1, "turn": 1, "hash_ids": [1]}`+"\n"), 0o644)
	r, _ := Open(path, Bailian, 16)
	defer r.Close()
	if _, err := r.Next(); err == nil || !strings.Contains(err.Error(), `line 1: missing field "type" (bailian format)`) {
		t.Errorf("bailian without type: %v", err)
	}
}

func TestBlocksAreExactDeterministicAndSalted(t *testing.T) {
	a := NewBlocks(512, 300, 42, "salt-a", 0)
	b := NewBlocks(512, 300, 42, "salt-a", 1024) // a tiny cache regenerates
	c := NewBlocks(512, 300, 42, "salt-b", 0)
	for _, h := range []int64{0, 1, 2, 99, 1 << 40, 0, 1} {
		x := append([]uint32(nil), a.Block(h)...)
		y := append([]uint32(nil), b.Block(h)...)
		z := c.Block(h)
		if len(x) != 512 || len(z) != 512 {
			t.Fatalf("block lengths %d %d", len(x), len(z))
		}
		for i := range x {
			if x[i] != y[i] || x[i] >= 300 {
				t.Fatalf("hash %d token %d: %d vs %d", h, i, x[i], y[i])
			}
		}
		if lcp(x, z) > 8 {
			t.Errorf("hash %d: another salt shares %d tokens", h, lcp(x, z))
		}
	}
	if lcp(a.Block(1), append([]uint32(nil), a.Block(2)...)) > 8 {
		t.Error("two hash ids share their start")
	}
	p := a.Prompt(nil, []int64{5, 6, 7}, 1100)
	if len(p) != 1100 || lcp(p[1024:], a.Block(7)) != 76 || lcp(p[512:1024], a.Block(6)) != 512 {
		t.Errorf("prompt of 1100 tokens: len %d", len(p))
	}
}

// bruteExpected is the definition of spec/trace.md: the longest common
// token prefix with any earlier prompt, capped at n-1, rounded down.
func bruteExpected(prompts [][]uint32, engine int) []int {
	out := make([]int, len(prompts))
	for i, p := range prompts {
		best := 0
		for _, q := range prompts[:i] {
			best = max(best, lcp(p, q))
		}
		out[i] = min(best, len(p)-1) / engine * engine
	}
	return out
}

func TestExpectorMatchesTheDefinition(t *testing.T) {
	for _, tc := range []struct{ block, engine, pool int }{{16, 16, 5}, {512, 16, 300}, {20, 16, 3}, {64, 16, 2}} {
		rng := rand.New(rand.NewPCG(1, uint64(tc.block)))
		blocks := NewBlocks(tc.block, tc.pool, 1, "", 0)
		ex := NewExpector(NewBlocks(tc.block, tc.pool, 1, "", 0), tc.engine, 0)
		var prompts [][]uint32
		var got []int
		// Conversation-like: new requests extend earlier ones, cut at
		// random points, or start afresh.
		var convs [][]int64
		next := int64(0)
		for i := 0; i < 300; i++ {
			var hashes []int64
			if len(convs) > 0 && rng.IntN(4) > 0 {
				base := convs[rng.IntN(len(convs))]
				hashes = append(hashes, base[:rng.IntN(len(base)+1)]...)
			}
			for k := rng.IntN(4) + 1; k > 0; k-- {
				hashes = append(hashes, next%97) // reused ids off the path too
				next++
			}
			convs = append(convs, hashes)
			n := (len(hashes)-1)*tc.block + 1 + rng.IntN(tc.block)
			p := blocks.Prompt(nil, hashes, n)
			prompts = append(prompts, p)
			e, lru := ex.Expect(hashes, n, p, p)
			if lru != nil {
				t.Fatal("an LRU prediction without a budget")
			}
			got = append(got, e)
		}
		want := bruteExpected(prompts, tc.engine)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("block %d engine %d pool %d: request %d expected %d, want %d", tc.block, tc.engine, tc.pool, i, got[i], want[i])
			}
		}
	}
}

func TestExpectorBailianFixture(t *testing.T) {
	reqs := readAll(t, bailianFixture, Bailian, 16)
	blocks := NewBlocks(16, 1000, 42, "x", 0)
	ex := NewExpector(blocks, 16, 1<<20)
	var got, lru []int
	for _, q := range reqs {
		p := blocks.Prompt(nil, q.HashIDs, q.InputLength)
		e, l := ex.Expect(q.HashIDs, q.InputLength, p, p)
		got = append(got, e)
		lru = append(lru, *l)
	}
	// 0: fresh; 1: fresh; 3: blocks 100,101 shared; 4: 100..104 shared;
	// 5: 200 whole plus 4 tokens of 201 (cut before) -> one engine block;
	// 6: one block, but the last token is never cached.
	want := []int{0, 0, 32, 64, 16, 0}
	for i := range want {
		if got[i] != want[i] || lru[i] != want[i] {
			t.Errorf("request %d: expected %d lru %d, want %d", i, got[i], lru[i], want[i])
		}
	}
}

func TestExpectorLRUEvicts(t *testing.T) {
	blocks := NewBlocks(16, 1000, 1, "", 0)
	ex := NewExpector(blocks, 16, 64) // 4 engine blocks
	a := blocks.Prompt(nil, []int64{1, 2, 3}, 48)
	b := blocks.Prompt(nil, []int64{4, 5, 6}, 48)
	ex.Expect([]int64{1, 2, 3}, 48, a, a)
	ex.Expect([]int64{4, 5, 6}, 48, b, b)
	e, l := ex.Expect([]int64{1, 2, 3}, 48, a, a)
	// The simulator frees a prompt's blocks tail first: a keeps its head.
	if e != 32 || l == nil || *l != 16 {
		t.Errorf("after eviction: expected %d (want 32), lru %v (want 16)", e, *l)
	}
}

func TestOwnerKeepsConversationsWhole(t *testing.T) {
	reqs := readAll(t, bailianFixture, Bailian, 16)
	owners := []*Owner{NewOwner(0, 2), NewOwner(1, 2)}
	shardOf := map[string]int{}
	for _, q := range reqs {
		n := 0
		for i, o := range owners {
			if o.Owns(&q) {
				n++
				shardOf[q.ChatID] = i
			}
		}
		if n != 1 {
			t.Fatalf("line %d owned by %d shards", q.Line, n)
		}
	}
	// Chains 1 -> 3 -> 4 and 2 -> 5 stay on one shard each.
	if shardOf["3"] != shardOf["1"] || shardOf["4"] != shardOf["1"] || shardOf["5"] != shardOf["2"] {
		t.Errorf("a conversation was split: %v", shardOf)
	}
	moon := readAll(t, mooncakeFixture, Mooncake, 512)[:10]
	o := NewOwner(1, 3)
	for _, q := range moon {
		if o.Owns(&q) != (q.Line%3 == 1) {
			t.Errorf("mooncake line %d", q.Line)
		}
	}
}
