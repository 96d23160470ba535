package workload

import (
	"context"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/config"
)

// The case: 1,000 history + 200 system tokens plan 66 sessions
// in 80,000 tokens, but a session in the cache holds its acknowledgement,
// a query, an answer and the template too; 5 s never reaches round 2.
func TestMultiRoundChatPlanWarnings(t *testing.T) {
	p := mkParams(t, config.MultiRoundChat, 10000, map[string]any{
		"kv_cache_volume": 8.0, "mrc_chat_history_length": 1000, "mrc_shared_prompt_length": 200, "mrc_duration": 5.0,
	})
	wl, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	w := wl.(*MultiRoundChat)
	if w.users != 66 {
		t.Fatalf("%d sessions planned, want 66", w.users)
	}
	// One token per word, as the workload sizes them.
	words := func(_ context.Context, s string) (int, bool) { return len(strings.Fields(s)), true }
	got := w.PlanWarnings(context.Background(), PlanCheck{Tokens: words, SaltTokens: 4})
	if len(got) != 2 {
		t.Fatalf("warnings %q, want the working set and the rounds", got)
	}
	if !strings.Contains(got[0], "66 sessions of about 1,") || !strings.Contains(got[0], "more than the KV budget") {
		t.Errorf("working-set warning %q", got[0])
	}
	if !strings.Contains(got[1], "0.1 round(s) per session") || !strings.Contains(got[1], "--mrc-duration") {
		t.Errorf("rounds warning %q", got[1])
	}

	// The defaults (2,000 + 10,000 tokens) in 80,000 tokens: 6 sessions
	// of about 12,300 fit and 60 s gives each 10 rounds, so nothing is
	// said; a short context is named.
	p = mkParams(t, config.MultiRoundChat, 10000, map[string]any{"kv_cache_volume": 8.0})
	wl, err = New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	w = wl.(*MultiRoundChat)
	if got := w.PlanWarnings(context.Background(), PlanCheck{Tokens: words}); len(got) > 0 {
		t.Errorf("a plan that fits warns %q", got)
	}
	got = w.PlanWarnings(context.Background(), PlanCheck{Tokens: words, ContextLength: 8192})
	if len(got) != 1 || !strings.Contains(got[0], "the prompts of round 10") || !strings.Contains(got[0], "longer than the engine's context of 8,192 tokens") {
		t.Errorf("context warnings %q", got)
	}
}

func TestPromptLongerThanContext(t *testing.T) {
	wl, err := New(context.Background(), mkParams(t, config.RandomPrefill, 10000, map[string]any{"rp_request_length": 4000}))
	if err != nil {
		t.Fatal(err)
	}
	pc := wl.(PlanChecker)
	if got := pc.PlanWarnings(context.Background(), PlanCheck{ContextLength: 8192}); len(got) != 0 {
		t.Errorf("4,000-token prompts in 8,192: %q", got)
	}
	if got := pc.PlanWarnings(context.Background(), PlanCheck{ContextLength: 2048}); len(got) != 1 || !strings.Contains(got[0], "HTTP 400") {
		t.Errorf("4,000-token prompts in 2,048: %q", got)
	}
}
