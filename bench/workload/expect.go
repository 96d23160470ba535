package workload

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
)

// Each workload judges its own expectation at the end of the run
// (Outcome): what it expected of the engine's cache, sized to this run
// (does the working set fit the cache?), against what the receipts of
// its requests show. The rules per workload are in docs/workloads.md
// ("Expectations"). Two thresholds are shared:
//   - a request "reuses" a part of its prompt when its cached tokens are
//     at least half of that part's tokens (block rounding, a chat
//     template and a salt line move the exact count; half tells a hit
//     from a miss on every engine);
//   - a request is "cold" when its cached tokens are under a tenth of
//     its prompt (a real engine's chat template opening may be shared by
//     every prompt without any content being reused).

// KVBudget is the KV cache an expectation counts on: whether a
// workload's working set fits decides whether its requests should hit.
type KVBudget struct {
	// Tokens is the first tier's size in tokens, 0 when unknown.
	Tokens int
	// What names it in the summary ("the built-in engine's GPU cache"),
	// Size says how big it was said to be ("8 GB", "--kv-cache-volume
	// 100 GB").
	What, Size string
	// LowerTokens is the next tier's size in tokens when known (the
	// built-in engine's CPU tier), 0 otherwise.
	LowerTokens int
	// Lower says there is a next tier (an LMCache server, or the built-in
	// engine's CPU tier), so what the first tier evicts may still hit.
	Lower bool
	// Engine is true when Tokens is the engine's own cache, known
	// exactly (the built-in engine); false when it is what the user said
	// (--kv-cache-volume).
	Engine bool
}

// BudgetFromConfig is the budget the workloads size themselves to:
// --kv-cache-volume x tokens per GB, with a lower tier when an LMCache
// server is named. Zero tokens when tokens per GB is unknown.
func BudgetFromConfig(c *config.Config, tokensPerGB int) KVBudget {
	set := c.Settings()
	b := KVBudget{Lower: set.LMCacheURL != ""}
	if gb := set.KVCacheGB; tokensPerGB > 0 && gb > 0 {
		b.Tokens = int(gb * float64(tokensPerGB))
		b.What, b.Size = "the KV budget", fmt.Sprintf("--kv-cache-volume %s GB", strconv.FormatFloat(gb, 'f', -1, 64))
	}
	return b
}

// judge counts the requests an expectation is judged on.
type judge struct {
	yes, no   int // receipts that show the expectation, that contradict it
	noReceipt int // successful requests whose receipt cannot tell (unverified)
	failed    int // failed requests: they tested nothing
}

// add judges one request; ok reads its valid prompt and cached counts.
func (j *judge) add(r *sender.Result, ok func(prompt, cached int) bool) {
	switch {
	case !r.Successful:
		j.failed++
	case r.CacheState == sender.StateUnverified || r.PromptTokens == nil || r.CachedTokens == nil:
		j.noReceipt++
	case ok(*r.PromptTokens, *r.CachedTokens):
		j.yes++
	default:
		j.no++
	}
}

// judged is the number of successful requests judged.
func (j judge) judged() int { return j.yes + j.no + j.noReceipt }

// verdict: a receipt that contradicts the expectation makes it not met;
// it is met only when every judged request has a receipt that shows it;
// otherwise (no request judged, receipts missing) it is unknown.
func (j judge) verdict() string {
	switch {
	case j.no > 0:
		return record.VerdictNotMet
	case j.yes == 0 || j.noReceipt > 0:
		return record.VerdictUnknown
	}
	return record.VerdictMet
}

// someMiss is the verdict of an expectation that some requests miss
// (the working set overflows the cache): met by one miss, not met when
// every judged request hit and all had receipts.
func (j judge) someMiss() string {
	switch {
	case j.no > 0:
		return record.VerdictMet
	case j.yes > 0 && j.noReceipt == 0:
		return record.VerdictNotMet
	}
	return record.VerdictUnknown
}

// count is "yes/judged what", its detail, then the requests without a
// receipt and the failed ones.
func (j judge) count(what string, detail ...string) string {
	return fmt.Sprintf("%d/%d %s", j.yes, j.judged(), what) + strings.Join(detail, "") + j.notes()
}

// notes names the requests that could not be judged.
func (j judge) notes() string {
	var s string
	if j.noReceipt > 0 {
		s += fmt.Sprintf("; %d without a verified receipt", j.noReceipt)
	}
	if j.failed > 0 {
		s += fmt.Sprintf("; %d failed (not judged)", j.failed)
	}
	return s
}

// reuses: cached tokens cover at least half of part.
func reuses(part int) func(prompt, cached int) bool {
	return func(_, cached int) bool { return 2*cached >= part }
}

// cold: cached tokens are under a tenth of the prompt.
func cold(prompt, cached int) bool { return 10*cached < prompt }

// missesPart: cached tokens cover less than half of part.
func missesPart(part int) func(prompt, cached int) bool {
	return func(_, cached int) bool { return 2*cached < part }
}

// expect builds an expectation.
func expect(expected, verdict, reason string) *record.Expectation {
	return &record.Expectation{Expected: expected, Verdict: verdict, Reason: reason}
}

// tokens is n tokens with thousands separators ("80,000 tokens").
func tokens(n int) string { return group(n) + " tokens" }

// group writes n with thousands separators.
func group(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// text names a budget with its size: "the built-in engine's GPU cache
// (8 GB, 80,000 tokens)".
func (b KVBudget) text() string {
	if b.Size == "" {
		return fmt.Sprintf("%s (%s)", b.What, tokens(b.Tokens))
	}
	return fmt.Sprintf("%s (%s, %s)", b.What, b.Size, tokens(b.Tokens))
}

// interrupted is the note added when the run did not send everything.
func interrupted(sent, planned int) string {
	if planned <= 0 || sent >= planned {
		return ""
	}
	return fmt.Sprintf(" (the run stopped after %d of %d measured requests)", sent, planned)
}

// owned is how many of items 0..n-1 this process sends (all of them
// unless sharded).
func (p Params) owned(n int) int {
	sh, k := p.shard(), 0
	for i := 0; i < n; i++ {
		if sh.Owns(i) {
			k++
		}
	}
	return k
}
