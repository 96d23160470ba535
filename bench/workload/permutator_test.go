package workload

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
)

func TestLongDocPermutatorPermutationCounts(t *testing.T) {
	all3 := LongDocPermutatorPermutations(3, 100, 42)
	want3 := [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	if !slices.EqualFunc(all3, want3, slices.Equal[[]int]) {
		t.Fatalf("3 contexts, 100 asked: %v, want all 6 in lexicographic order", all3)
	}
	if got := LongDocPermutatorPermutations(3, 6, 42); len(got) != 6 {
		t.Fatalf("3 contexts, 6 asked: %d", len(got))
	}
	// 5! = 120 > 10 x 4: four distinct sampled permutations, sorted.
	s := LongDocPermutatorPermutations(5, 4, 42)
	if len(s) != 4 {
		t.Fatalf("5 contexts, 4 asked: %d permutations", len(s))
	}
	if !slices.IsSortedFunc(s, slices.Compare[[]int]) {
		t.Fatalf("sampled permutations must be sorted: %v", s)
	}
	seen := map[string]bool{}
	for _, p := range s {
		seen[fmt.Sprint(p)] = true
		q := slices.Clone(p)
		slices.Sort(q)
		if !slices.Equal(q, []int{0, 1, 2, 3, 4}) {
			t.Fatalf("not a permutation: %v", p)
		}
	}
	if len(seen) != 4 {
		t.Fatalf("sampled permutations must be distinct: %v", s)
	}
	// LMCache's: random.Random(42).sample(range(5), 5) until 4 distinct, sorted.
	if want := [][]int{{0, 4, 2, 1, 3}, {1, 4, 2, 0, 3}, {4, 3, 0, 1, 2}, {4, 3, 0, 2, 1}}; !slices.EqualFunc(s, want, slices.Equal[[]int]) {
		t.Fatalf("5 contexts, 4 asked, seed 42: %v, want LMCache's %v", s, want)
	}
	if again := LongDocPermutatorPermutations(5, 4, 42); !slices.EqualFunc(s, again, slices.Equal[[]int]) {
		t.Fatal("sampling must depend on the seed only")
	}
	one := LongDocPermutatorPermutations(1, 10, 42)
	if len(one) != 1 || !slices.Equal(one[0], []int{0}) {
		t.Fatalf("1 context: %v, want [(0)]", one)
	}
	// 4! = 24 <= 10 x 3: the first 3 in lexicographic order.
	first := LongDocPermutatorPermutations(4, 3, 42)
	wantFirst := [][]int{{0, 1, 2, 3}, {0, 1, 3, 2}, {0, 2, 1, 3}}
	if !slices.EqualFunc(first, wantFirst, slices.Equal[[]int]) {
		t.Fatalf("4 contexts, 3 asked: %v", first)
	}
	// 24 > 10 x 2: sampled.
	if got := LongDocPermutatorPermutations(4, 2, 1); !slices.EqualFunc(got, [][]int{{0, 1, 2, 3}, {1, 2, 0, 3}}, slices.Equal[[]int]) {
		t.Fatalf("4 contexts, 2 asked: %v", got)
	}
	// 30 contexts: 30! does not fit an int; sampling still works.
	if got := LongDocPermutatorPermutations(30, 5, 1); len(got) != 5 || len(got[0]) != 30 {
		t.Fatalf("30 contexts: %d", len(got))
	}
}

func TestLongDocPermutatorPool(t *testing.T) {
	pool := LongDocPermutatorPool(LDPVocabSize, 42)
	if len(pool) != 8000 {
		t.Fatalf("pool size %d", len(pool))
	}
	// LMCache's words for seed 42: sorted, each numbered in the order it
	// was made.
	if want := []string{"bab3097", "babazuz7151", "babe4920"}; !slices.Equal(pool[:3], want) {
		t.Fatalf("first words %q, want %q", pool[:3], want)
	}
	if !slices.IsSorted(pool) {
		t.Fatal("the pool must be sorted")
	}
	re := regexp.MustCompile(`^([a-z]{3,7})([0-9]+)$`)
	numbers := map[string]bool{}
	for _, w := range pool {
		m := re.FindStringSubmatch(w)
		if m == nil {
			t.Fatalf("word %q: want 3-7 letters then a number", w)
		}
		for j, c := range m[1] {
			vowel := strings.ContainsRune("aeiou", c)
			if vowel != (j%2 == 1) {
				t.Fatalf("word %q does not alternate consonant/vowel", w)
			}
		}
		numbers[m[2]] = true
	}
	for i := 0; i < 8000; i++ {
		if !numbers[fmt.Sprint(i)] {
			t.Fatalf("no word numbered %d: the words must be numbered 0..7999, each once", i)
		}
	}
	if other := LongDocPermutatorPool(10, 43); slices.Equal(other, LongDocPermutatorPool(10, 42)) {
		t.Fatal("the pool must depend on the seed")
	}
	if again := LongDocPermutatorPool(8000, 42); !slices.Equal(again, pool) {
		t.Fatal("the pool must be reproducible")
	}
}

func TestLongDocPermutatorContexts(t *testing.T) {
	pool := LongDocPermutatorPool(LDPVocabSize, 42)
	c0 := LongDocPermutatorContext(pool, 0, 50, 42)
	c1 := LongDocPermutatorContext(pool, 1, 50, 42)
	if n := len(strings.Fields(c0)); n != 50 {
		t.Fatalf("context has %d words, want 50", n)
	}
	// LMCache's: random.Random(43).choices(pool, k=50).
	if !strings.HasPrefix(c0, "bum5879 seyopub722 duzik7300 ") {
		t.Fatalf("context 0 of seed 42 starts %q, want LMCache's bum5879 seyopub722 duzik7300", c0[:30])
	}
	if strings.Fields(c0)[0] == strings.Fields(c1)[0] && strings.Fields(c0)[1] == strings.Fields(c1)[1] {
		t.Fatal("contexts must diverge from their first words")
	}
	// Context i is seeded with seed+1+i alone: context 1 of seed 42 is
	// context 0 of seed 43.
	if LongDocPermutatorContext(pool, 0, 50, 43) != c1 {
		t.Fatal("context i must be seeded with seed+1+i")
	}
	if s := LongDocPermutatorSystem(0, 42); s != "" {
		t.Fatalf("system length 0 gives %q", s)
	}
	if n := len(strings.Fields(LongDocPermutatorSystem(30, 42))); n != 30 {
		t.Fatalf("system prompt of %d words, want 30", n)
	}
	if s := LongDocPermutatorSystem(6, 42); s != "an the process will answer an" {
		t.Fatalf("system prompt %q, want LMCache's random.Random(42).choices", s)
	}
	msgs := LongDocPermutatorMessages("SYS", []string{"A", "B", "C"}, []int{2, 0, 1})
	if len(msgs) != 2 || msgs[0].Role != "system" || msgs[1].Content != "C\n\nA\n\nB" {
		t.Fatalf("messages %+v", msgs)
	}
	if msgs := LongDocPermutatorMessages("", []string{"A"}, []int{0}); len(msgs) != 1 || msgs[0].Role != "user" {
		t.Fatalf("no system prompt: %+v", msgs)
	}
}

func TestLongDocPermutatorSharedLead(t *testing.T) {
	got := ldpSharedLead([][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}})
	if !slices.Equal(got, []int{0, 1, 0, 1}) {
		t.Fatalf("shared leads %v", got)
	}
}

// TestLongDocPermutatorRun checks ids, the warmup, the in-flight bound and
// the requests' shape.
func TestLongDocPermutatorRun(t *testing.T) {
	p := mkParams(t, config.LongDocPermutator, 0, map[string]any{
		"ldp_num_contexts": 3, "ldp_context_length": 20, "ldp_system_prompt_length": 5,
		"ldp_num_permutations": 6, "ldp_num_inflight_requests": 2, "ldp_max_output_length": 7,
	})
	wl, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var ids []string
	inflight, peak := 0, 0
	gate, entered := make(chan struct{}), make(chan struct{})
	env := Env{
		Send: func(ctx context.Context, req *sender.Request) (sender.Result, bool) {
			mu.Lock()
			ids = append(ids, req.ID)
			if req.Phase == sender.PhaseWarmup {
				mu.Unlock()
				if req.ID != "warmup_0" || req.MaxTokens != 1 || strings.Count(req.Messages[1].Content, "warmup") != 500 {
					t.Errorf("warmup %s %+v", req.ID, req.MaxTokens)
				}
				return sender.Result{RequestID: req.ID, Phase: req.Phase, Successful: true}, true
			}
			if req.MaxTokens != 7 || len(req.Messages) != 2 || req.Messages[0].Role != "system" {
				t.Errorf("request %s: max_tokens %d, %d messages", req.ID, req.MaxTokens, len(req.Messages))
			}
			if n := len(strings.Split(req.Messages[1].Content, "\n\n")); n != 3 {
				t.Errorf("request %s has %d contexts", req.ID, n)
			}
			inflight++
			peak = max(peak, inflight)
			mu.Unlock()
			entered <- struct{}{}
			<-gate
			mu.Lock()
			inflight--
			mu.Unlock()
			return sender.Result{RequestID: req.ID, Phase: req.Phase, Successful: true}, true
		},
		Phase: func(string, int, time.Duration) {},
		Logf:  func(string, ...any) {},
		Now:   time.Now,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		wl.Run(context.Background(), env)
	}()
	// Two enter; from then on each release lets exactly one more in.
	<-entered
	<-entered
	for i := 2; i < 6; i++ {
		gate <- struct{}{}
		<-entered
	}
	gate <- struct{}{}
	gate <- struct{}{}
	<-done
	if peak != 2 {
		t.Fatalf("peak in flight %d, want 2", peak)
	}
	slices.Sort(ids[1:]) // requests in flight together arrive in any order
	want := []string{"warmup_0", "perm0_req0", "perm1_req1", "perm2_req2", "perm3_req3", "perm4_req4", "perm5_req5"}
	if !slices.Equal(ids, want) {
		t.Fatalf("ids %v, want %v", ids, want)
	}
	o := wl.Outcome()
	if o.Failed || len(o.Sections) != 1 {
		t.Fatalf("outcome %+v", o)
	}
}
