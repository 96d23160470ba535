package workload

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/pyrandom"
)

func TestPrefixSuffixSizing(t *testing.T) {
	prefix, suffix, err := PrefixSuffixSplit(8000, 0.8)
	if err != nil || prefix != 6400 || suffix != 1568 {
		t.Fatalf("8000 x 0.8: prefix %d suffix %d err %v; want 6400, 1568", prefix, suffix, err)
	}
	// LMCache's corrected sizing: the pool is counted in whole contexts.
	for _, c := range []struct {
		tpg, context int
		thrash       float64
		want         int
	}{{10000, 4000, 10, 26}, {50000, 8000, 20, 131}, {10000, 2000, 100, 525}} {
		if n := PrefixSuffixPrefixes(c.thrash, c.tpg, c.context); n != c.want {
			t.Errorf("thrash %g GB, %d tokens/GB, context %d: %d prefixes, want %d", c.thrash, c.tpg, c.context, n, c.want)
		}
	}
	prefix, suffix, err = PrefixSuffixSplit(200, 0.34)
	if err != nil || prefix != 68 || suffix != 100 {
		t.Fatalf("200 x 0.34: prefix %d suffix %d err %v; want 68, exactly 100", prefix, suffix, err)
	}
	_, _, err = PrefixSuffixSplit(200, 0.95)
	if err == nil || err.Error() != "suffix_tokens=-22 is below minimum 100; reduce prefix_ratio or increase context_length" {
		t.Fatalf("200 x 0.95: %v", err)
	}
	// Round half to even: 250 x 0.5 = 125 exactly; 5 x 0.5 = 2.5 -> 2.
	if p, _, _ := PrefixSuffixSplit(5, 0.5); p != 2 {
		t.Fatalf("round half even of 2.5 = %d", p)
	}
	if p, _, _ := PrefixSuffixSplit(7, 0.5); p != 4 {
		t.Fatalf("round half even of 3.5 = %d", p)
	}
	if p, _, _ := PrefixSuffixSplit(1000, 0.0001); p != 1 {
		t.Fatalf("prefix floor: %d", p)
	}
	if n := PrefixSuffixPrefixes(0.0001, 10, 6400); n != 1 {
		t.Fatalf("prefix count floor: %d", n)
	}
}

func TestPrefixSuffixFactoryError(t *testing.T) {
	p := mkParams(t, config.PrefixSuffixTuner, 50000, map[string]any{"psf_context_length": 200, "psf_prefix_ratio": 0.95})
	_, err := New(context.Background(), p)
	if err == nil || !strings.Contains(err.Error(), "suffix_tokens=-22 is below minimum 100") {
		t.Fatalf("factory error %v", err)
	}
}

func TestPrefixSuffixText(t *testing.T) {
	p := PrefixSuffixPrefix(42, 10)
	if p != "PREFIX_0000002a hi hi hi hi hi hi" {
		t.Fatalf("prefix %q", p)
	}
	// LMCache's breakers for seed 42: random.Random(44).randrange(2**32).
	rng := pyrandom.New(44)
	b1, b2 := PrefixSuffixBreaker(rng), PrefixSuffixBreaker(rng)
	if !strings.HasPrefix(b1, "BR_dcae6e9f hi") || !strings.HasPrefix(b2, "BR_2d39f5ab hi") {
		t.Fatalf("breakers %q / %q, want BR_dcae6e9f and BR_2d39f5ab", b1[:14], b2[:14])
	}
	re := regexp.MustCompile(`^BR_[0-9a-f]{8}( hi){28}$`)
	if !re.MatchString(b1) || !re.MatchString(b2) {
		t.Fatalf("breakers %q / %q", b1[:20], b2[:20])
	}
	if b1 == b2 {
		t.Fatal("breakers must differ")
	}
	if s := PrefixSuffixSuffix(4); s != "SUFFIX hi hi hi" {
		t.Fatalf("suffix %q", s)
	}
}

// TestPrefixSuffixRun: two passes, strictly one request at a time, the
// same prefix order, a fresh breaker per request, the identical suffix.
func TestPrefixSuffixRun(t *testing.T) {
	p := mkParams(t, config.PrefixSuffixTuner, 1000, map[string]any{
		"psf_context_length": 300, "psf_prefix_ratio": 0.5, "psf_thrash": 1.0,
	})
	wl, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	// prefix 150, suffix 118, int(1 x 1.05 x 1000 / 300) = 3 contexts.
	defer func(d time.Duration) { psfSettle = d }(psfSettle)
	psfSettle = time.Millisecond
	var mu sync.Mutex
	inflight := 0
	var reqs []*sender.Request
	var logs []string
	env := Env{
		Send: func(ctx context.Context, req *sender.Request) (sender.Result, bool) {
			mu.Lock()
			inflight++
			if inflight > 1 {
				t.Errorf("%s sent while another request was in flight", req.ID)
			}
			reqs = append(reqs, req)
			logs = append(logs, "send "+req.ID)
			mu.Unlock()
			defer func() { mu.Lock(); inflight--; mu.Unlock() }()
			return sender.Result{RequestID: req.ID, Phase: req.Phase, Successful: true, CacheState: sender.StateCold}, true
		},
		Phase: func(string, int, time.Duration) {},
		Logf: func(f string, a ...any) {
			mu.Lock()
			logs = append(logs, fmt.Sprintf(f, a...))
			mu.Unlock()
		},
		Now: time.Now,
	}
	if err := wl.Run(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 7 {
		t.Fatalf("%d requests, want 1 + 2 x 3", len(reqs))
	}
	// The throw-away request: LMCache's Hello, max_tokens 1, a warmup.
	if w := reqs[0]; w.ID != "engine_warmup" || w.Phase != sender.PhaseWarmup || w.MaxTokens != 1 || w.Messages[0].Content != "Hello" {
		t.Fatalf("first request %+v, want the engine warmup", w)
	}
	// The settle pause is logged between the two passes.
	if logs[3] != "send pass1_p2" || !strings.Contains(logs[4], "settle") || logs[5] != "send pass2_p0" {
		t.Fatalf("log order %q: want the settle line between pass 1 and pass 2", logs)
	}
	reqs = reqs[1:]
	breakers := map[string]bool{}
	var suffix string
	for k, r := range reqs {
		pass, i := k/3+1, k%3
		wantID := map[int]string{1: "pass1_p", 2: "pass2_p"}[pass] + string(rune('0'+i))
		wantPhase := map[int]string{1: sender.PhaseWarmup, 2: sender.PhaseMeasured}[pass]
		if r.ID != wantID || r.Phase != wantPhase || r.MaxTokens != 1 {
			t.Fatalf("request %d: %s %s max_tokens %d; want %s %s 1", k, r.ID, r.Phase, r.MaxTokens, wantID, wantPhase)
		}
		if len(r.Messages) != 1 || r.Messages[0].Role != "user" {
			t.Fatalf("request %d: %+v", k, r.Messages)
		}
		text := r.Messages[0].Content
		if !strings.HasPrefix(text, PrefixSuffixPrefix(i, 150)+" BR_") {
			t.Fatalf("request %d does not start with prefix %d then a breaker", k, i)
		}
		at := strings.Index(text, "BR_")
		breakers[text[at:at+11]] = true
		s := text[strings.Index(text, "SUFFIX"):]
		if suffix == "" {
			suffix = s
		} else if s != suffix {
			t.Fatal("the suffix must be identical in every request")
		}
		if n := len(strings.Fields(text)); n != 147+29+118 {
			t.Fatalf("request %d has %d words", k, n)
		}
	}
	if len(breakers) != 6 {
		t.Fatalf("%d distinct breakers for 6 requests", len(breakers))
	}
	o := wl.Outcome()
	if o.Failed || o.Block.(map[string]any)["num_prefixes"] != 3 {
		t.Fatalf("outcome %+v", o.Block)
	}
}
