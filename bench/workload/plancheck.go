package workload

import (
	"context"
	"fmt"
	"strings"
)

// Before the first request each workload checks the plan it was given
// and says when it cannot show what it is for (spec/workloads.md,
// "Verdicts count failures, sizes are checked up front"): a working set
// that does not fit the cache once the chat template and the salt are
// counted, a run too short to reach what it measures, prompts longer
// than the engine's context.

// Chat template overhead, as counted by the plan checks: what a chat
// template adds per message (ChatML's `<|im_start|>role\n ... <|im_end|>\n`
// and Llama 3's header and end-of-turn tokens are 4 to 5) and per
// request (the generation prompt). An estimate: the engine's own
// template is not visible through the OpenAI API.
const (
	templatePerMessage = 5
	templatePerRequest = 3
)

// PlanCheck is what a workload may learn before its first request.
type PlanCheck struct {
	// ContextLength is the engine's context in tokens (/v1/models
	// max_model_len, llama.cpp's /props n_ctx), 0 when it reports none.
	ContextLength int
	// Tokens counts text's tokens with the engine's tokenizer; ok is
	// false when the engine has none (the check then counts a word as
	// a token, as the workloads size their prompts).
	Tokens func(ctx context.Context, text string) (n int, ok bool)
	// SaltTokens is what the run's salt line adds to each prompt.
	SaltTokens int
}

// count is text's tokens by the engine when it can tell, else by words.
func (pc PlanCheck) count(ctx context.Context, text string) int {
	if pc.Tokens != nil {
		if n, ok := pc.Tokens(ctx, text); ok {
			return n
		}
	}
	return len(strings.Fields(text))
}

// PlanChecker is a workload that checks its plan before its first
// request; the warnings are logged as warnings and kept in the summary.
type PlanChecker interface {
	PlanWarnings(ctx context.Context, pc PlanCheck) []string
}

// EngineTokens counts tokens with the engine's /tokenize; ok false when
// it has none (or e is nil).
func EngineTokens(e *Engine) func(ctx context.Context, text string) (int, bool) {
	if e == nil {
		return nil
	}
	t := newTokenizer(e)
	return func(ctx context.Context, text string) (int, bool) {
		ids, err := t.tokenize(ctx, text)
		if err != nil {
			return 0, false
		}
		return len(ids), true
	}
}

// ContextLength is the engine's context length in tokens, 0 when it
// reports none.
func ContextLength(ctx context.Context, e *Engine) int {
	if e == nil {
		return 0
	}
	return maxModelLen(ctx, e)
}

// contextWarning is the warning for prompts of up to longest tokens on
// an engine whose context is ctxLen tokens ("" when they fit or the
// context is unknown).
func contextWarning(workload string, longest int, what string, ctxLen int) string {
	if ctxLen <= 0 || longest <= ctxLen {
		return ""
	}
	return fmt.Sprintf("%s: %s reach about %s, longer than the engine's context of %s: the engine will refuse them (HTTP 400)",
		workload, what, tokens(longest), tokens(ctxLen))
}
