package workload

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
)

func TestKVTierPoolSize(t *testing.T) {
	// The spec's example: F 2, L1 100 GB, 1000 tokens/GB, context 2500 -> 80.
	if n, err := KVTierPoolSize(0, 2, 100, 1000, 2500); err != nil || n != 80 {
		t.Errorf("derived pool %d, %v; want 80", n, err)
	}
	// Ceiling, not truncation: 2 x 1 x 1000 / 2500 = 0.8 -> 1; 2 x 3 x 1000 / 2500 = 2.4 -> 3.
	if n, _ := KVTierPoolSize(0, 2, 1, 1000, 2500); n != 1 {
		t.Errorf("pool %d, want 1", n)
	}
	if n, _ := KVTierPoolSize(0, 2, 3, 1000, 2500); n != 3 {
		t.Errorf("pool %d, want 3", n)
	}
	if n, err := KVTierPoolSize(7, 2, 0, 0, 2500); err != nil || n != 7 {
		t.Errorf("explicit pool %d, %v; want 7", n, err)
	}
	_, err := KVTierPoolSize(0, 2, 0, 1000, 2500)
	if err == nil || !strings.Contains(err.Error(), "--ktp-pool-size") || !strings.Contains(err.Error(), "--lmcache-url") {
		t.Errorf("no size and no capacity: %v; want both ways named", err)
	}
}

func TestKVTierWarmupGroups(t *testing.T) {
	got := KVTierWarmupGroups(10, 4)
	want := [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 0, 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("groups %v, want %v", got, want)
	}
	if got := KVTierWarmupGroups(8, 4); len(got) != 2 || got[1][3] != 7 {
		t.Errorf("exact fit %v", got)
	}
	if got := KVTierWarmupGroups(3, 3); !reflect.DeepEqual(got, [][]int{{0, 1, 2}}) {
		t.Errorf("one group %v", got)
	}
}

func TestKVTierAccess(t *testing.T) {
	for _, skew := range []float64{0, 1.2} {
		a := newKVTierAccess(50, skew, 42)
		b := newKVTierAccess(50, skew, 42)
		counts := make([]int, 50)
		for r := 0; r < 4000; r++ {
			d := a.draw(8)
			if e := b.draw(8); !reflect.DeepEqual(d, e) {
				t.Fatalf("skew %g: the same seed drew %v and %v", skew, d, e)
			}
			seen := map[int]bool{}
			for _, x := range d {
				if x < 0 || x >= 50 || seen[x] {
					t.Fatalf("skew %g: draw %v is not 8 distinct documents of the pool", skew, d)
				}
				seen[x] = true
				counts[x]++
			}
		}
		if skew == 0 {
			// Uniform: every document near 4000 x 8 / 50 = 640.
			for i, c := range counts {
				if math.Abs(float64(c)-640) > 120 {
					t.Errorf("uniform: document %d drawn %d times, want about 640", i, c)
				}
			}
		} else if !(counts[0] > counts[10] && counts[10] > counts[49]) {
			t.Errorf("skew %g: counts 0/10/49 = %d/%d/%d; want document 0 hottest", skew, counts[0], counts[10], counts[49])
		}
	}
	// LMCache's draws (sample_requests, printed by CPython): uniform and
	// weighted from one random.Random(seed).
	for _, c := range []struct {
		pool, per int
		skew      float64
		seed      int64
		want      [][]int
	}{
		{10, 3, 0, 42, [][]int{{1, 0, 4}, {3, 9, 2}, {1, 8, 9}, {9, 6, 0}}},
		{10, 3, 1.2, 42, [][]int{{2, 0, 1}, {0, 5, 4}, {6, 0, 2}, {0, 1, 4}}},
		{50, 4, 0.5, 7, [][]int{{7, 2, 24, 0}, {16, 8, 0, 18}}},
	} {
		a := newKVTierAccess(c.pool, c.skew, c.seed)
		for r, want := range c.want {
			if got := a.draw(c.per); !reflect.DeepEqual(got, want) {
				t.Errorf("pool %d, skew %g, seed %d: request %d drew %v, want LMCache's %v", c.pool, c.skew, c.seed, r, got, want)
			}
		}
	}
	// Weighted without replacement: with a strong skew the first draw is
	// almost always document 0, the second document 1.
	a := newKVTierAccess(20, 8, 1)
	first := 0
	for r := 0; r < 200; r++ {
		if d := a.draw(2); d[0] == 0 {
			first++
		}
	}
	if first < 190 {
		t.Errorf("skew 8: document 0 drawn first %d of 200 times", first)
	}
}

// fakeTokenize counts words of up to three letters as one token, longer
// ones as two, and adds one id (a BOS) to every text.
func fakeTokenize(_ context.Context, text string) ([]uint32, error) {
	ids := []uint32{1}
	for _, w := range strings.Fields(text) {
		ids = append(ids, 7)
		if len(w) > 3 {
			ids = append(ids, 8)
		}
	}
	return ids, nil
}

func TestLearnVocab(t *testing.T) {
	pool, err := LearnVocab(context.Background(), fakeTokenize, 1000, 42)
	if err != nil {
		t.Fatal(err)
	}
	words := pool.Words
	if len(words) != 1000 || !pool.LeadingSpace {
		t.Fatalf("%d words, leading space %v; want 1000 words after a space each", len(words), pool.LeadingSpace)
	}
	seen := map[string]bool{}
	for _, w := range words {
		if len(w) > 3 || seen[w] {
			t.Fatalf("word %q is not a distinct one-token word", w)
		}
		seen[w] = true
	}
	again, _ := LearnVocab(context.Background(), fakeTokenize, 1000, 42)
	if !reflect.DeepEqual(pool, again) {
		t.Error("the same seed learned a different vocabulary")
	}
	other, _ := LearnVocab(context.Background(), fakeTokenize, 1000, 43)
	if reflect.DeepEqual(words, other.Words) {
		t.Error("another seed learned the same vocabulary")
	}
	if got := pool.Join([]string{"ba", "kot"}); got != " ba kot" {
		t.Errorf("Join = %q, want LMCache's leading space", got)
	}
	if got := pool.Join(nil); got != "" {
		t.Errorf("Join of no words = %q", got)
	}
	// A tokenizer that charges for a leading space (a token of its own)
	// gets words only separated by spaces.
	charged := func(ctx context.Context, text string) ([]uint32, error) {
		ids, _ := fakeTokenize(ctx, text)
		if strings.HasPrefix(text, " ") {
			ids = append(ids, 9)
		}
		return ids, nil
	}
	sep, err := LearnVocab(context.Background(), charged, 500, 42)
	if err != nil || len(sep.Words) != 500 || sep.LeadingSpace {
		t.Fatalf("leading space charged: %d words, leading space %v, %v", len(sep.Words), sep.LeadingSpace, err)
	}
	if got := sep.Join([]string{"ba", "kot"}); got != "ba kot" {
		t.Errorf("Join = %q, want the words separated only", got)
	}
	// An engine whose every word is two tokens cannot give text of exact length.
	_, err = LearnVocab(context.Background(), func(_ context.Context, text string) ([]uint32, error) {
		return make([]uint32, 2*len(strings.Fields(text))), nil
	}, 100, 1)
	var unavailable *UnavailableError
	if !errors.As(err, &unavailable) {
		t.Errorf("no one-token word: %v, want an UnavailableError", err)
	}
	// A tokenizer that takes every word: candidates run out before a
	// vocabulary larger than their number, without looping for ever.
	all, err := LearnVocab(context.Background(), func(_ context.Context, text string) ([]uint32, error) {
		return make([]uint32, len(strings.Fields(text))), nil
	}, 20000, 1)
	if err != nil || len(all.Words) != vocabCandidateSpace {
		t.Errorf("every word one token, 20000 asked: %d words, %v; want all %d candidates", len(all.Words), err, vocabCandidateSpace)
	}
}

// TestKVTierRun: the warmup sweep covers the pool in back-filled groups,
// the measured requests carry their drawn documents, each document is
// exactly context-length words, and a prefix-chained LMCache server stops
// the run before its measured phase.
func TestKVTierRun(t *testing.T) {
	mk := func(lookups LookupSource) (*KVTierPressure, Env, func() []*sender.Request) {
		p := mkParams(t, config.KVTierPressure, 1000, map[string]any{
			"ktp_pool_size": 10, "ktp_docs_per_request": 4, "ktp_context_length": 20,
			"ktp_system_prompt_length": 5, "ktp_num_requests": 6, "ktp_num_inflight_requests": 2,
		})
		p.Tokenize = fakeTokenize
		p.Lookups = lookups
		wl, err := New(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		env, sent := sendAll()
		return wl.(*KVTierPressure), env, sent
	}
	w, env, sent := mk(nil)
	if err := w.Run(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	reqs := sent()
	if len(reqs) != 3+6 {
		t.Fatalf("%d requests, want 3 warmups + 6 samples", len(reqs))
	}
	byID := map[string]*sender.Request{}
	for _, r := range reqs {
		byID[r.ID] = r
	}
	if g := byID["warm2"]; g == nil || !reflect.DeepEqual(g.Documents, []int{8, 9, 0, 1}) || g.MaxTokens != 1 || g.Phase != sender.PhaseWarmup {
		t.Fatalf("warm2 = %+v, want documents 8 9 0 1, max_tokens 1", g)
	}
	s := byID["sample3"]
	if s == nil || len(s.Documents) != 4 || s.Phase != sender.PhaseMeasured {
		t.Fatalf("sample3 = %+v", s)
	}
	if len(s.Messages) != 2 || s.Messages[0].Role != "system" || len(strings.Fields(s.Messages[0].Content)) != 5 {
		t.Fatalf("sample3 messages %+v: want a 5-word system message then the user message", s.Messages)
	}
	docs := strings.Split(s.Messages[1].Content, "\n\n")
	if len(docs) != 4 {
		t.Fatalf("%d documents in the user message, want 4", len(docs))
	}
	for k, d := range docs {
		if len(strings.Fields(d)) != 20 {
			t.Fatalf("document %d has %d words, want 20", k, len(strings.Fields(d)))
		}
		// The same document is the same text in every request that carries it.
		if want := strings.Split(byID["warm0"].Messages[1].Content, "\n\n"); s.Documents[k] < 4 && d != want[s.Documents[k]] {
			t.Fatalf("document %d differs between requests", s.Documents[k])
		}
	}
	block := w.Outcome().Block.(map[string]any)
	if block["pool_size"] != 10 || block["working_set_tokens"] != 200 || block["warmup_sweep_requests"] != 3 {
		t.Errorf("block %v", block)
	}

	// A server whose prefix-chained lookups moved during the sweep stops the run.
	calls := 0
	w, env, sent = mk(func(context.Context) (LookupTotals, error) {
		calls++
		if calls == 1 {
			return LookupTotals{}, nil
		}
		return LookupTotals{MPHit: 10, MPRequested: 500}, nil
	})
	err := w.Run(context.Background(), env)
	if err == nil || !strings.Contains(err.Error(), "not blending") || !strings.Contains(err.Error(), "--ktp-docs-per-request 1") {
		t.Fatalf("prefix-chained server: %v", err)
	}
	for _, r := range sent() {
		if r.Phase == sender.PhaseMeasured {
			t.Fatalf("%s was sent after the blend check failed", r.ID)
		}
	}
	if o := w.Outcome(); !o.Failed || len(o.Reasons) != 1 {
		t.Errorf("outcome %+v, want failed with the reason", o)
	}
}
