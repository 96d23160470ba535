package workload

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/pyrandom"
)

func init() {
	Register(Kind{Name: config.LongDocPermutator, New: newLongDocPermutator, Estimate: estimateLongDocPermutator})
}

// LDPVocabSize is the fixed size of the pseudo-word pool.
const LDPVocabSize = 8000

// ldpListMax is the most permutations listed in the workload block.
const ldpListMax = 1000

// ldpSystemWords are the words of the optional system prompt.
var ldpSystemWords = [...]string{
	"the", "system", "will", "process", "your", "request", "and",
	"provide", "an", "answer", "based", "on", "context",
}

// LongDocPermutatorPool is LMCache's pool of size pseudo-words, drawn
// from random.Random(seed): each word is randint(3, 7) letters chosen
// alternately from consonants and vowels, then the number of words made
// so far ("boko42"), so every word is distinct; the pool is returned
// sorted, as LMCache sorts it.
func LongDocPermutatorPool(size int, seed int64) []string {
	const vowels, consonants = "aeiou", "bcdfghjklmnpqrstvwxyz"
	rng := pyrandom.New(seed)
	pool := make([]string, size)
	var b []byte
	for i := range pool {
		n := int(rng.Randint(3, 7))
		b = b[:0]
		for j := 0; j < n; j++ {
			if j%2 == 0 {
				b = append(b, consonants[rng.Choice(len(consonants))])
			} else {
				b = append(b, vowels[rng.Choice(len(vowels))])
			}
		}
		b = strconv.AppendInt(b, int64(i), 10)
		pool[i] = string(b)
	}
	slices.Sort(pool)
	return pool
}

// LDPBuiltinTokensPerWord is what a context word (a pool pseudo-word
// such as "boko42", and its space) costs in tokens on the built-in
// engine's tokenizer: 12,840 to 12,884 tokens per 5,000-word context
// over seeds 1, 7 and 42 (TestLDPTokensPerWord measures it). BPE
// tokenizers of real models give about 2 to 3; MeasureLDPTokensPerWord
// asks the engine itself.
const LDPBuiltinTokensPerWord = 2.58

// LDPContextTokens estimates the tokens of a context of words pool words.
func LDPContextTokens(words int, perWord float64) int {
	return int(math.Round(float64(words) * perWord))
}

// ldpSampleWords is the length of the context MeasureLDPTokensPerWord
// tokenizes: enough for a stable mean, small enough for one quick call.
const ldpSampleWords = 2000

// MeasureLDPTokensPerWord tokenizes a context built as the run builds
// them (seeded pool, seed+1) with the engine's /tokenize and returns its
// tokens per word.
func MeasureLDPTokensPerWord(ctx context.Context, e *Engine, seed int64) (float64, error) {
	pool := LongDocPermutatorPool(LDPVocabSize, seed)
	ids, err := newTokenizer(e).tokenize(ctx, LongDocPermutatorContext(pool, 0, ldpSampleWords, seed))
	if err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, errors.New("POST /tokenize: no tokens for a non-empty text")
	}
	return float64(len(ids)) / ldpSampleWords, nil
}

// LongDocPermutatorContext is context i: length words of the pool drawn
// with random.Random(seed+1+i).choices, so contexts diverge from their
// first word and do not depend on how many there are.
func LongDocPermutatorContext(pool []string, i, length int, seed int64) string {
	return strings.Join(pyrandom.ChoicesOf(pyrandom.NewSum(seed, 1+int64(i)), pool, length), " ")
}

// LongDocPermutatorSystem is the shared system prompt: length words drawn
// from a few common words with random.Random(seed).choices, "" when
// length is 0.
func LongDocPermutatorSystem(length int, seed int64) string {
	if length <= 0 {
		return ""
	}
	return strings.Join(pyrandom.ChoicesOf(pyrandom.New(seed), ldpSystemWords[:], length), " ")
}

// factorialCapped is n!, or math.MaxInt when it does not fit.
func factorialCapped(n int) int {
	f := 1
	for k := 2; k <= n; k++ {
		if f > math.MaxInt/k {
			return math.MaxInt
		}
		f *= k
	}
	return f
}

// LongDocPermutatorPermutations enumerates the permutations of n contexts
// sent for requested: all n! in lexicographic order when requested >= n!;
// when n! > 10 x requested, requested distinct seeded random permutations,
// sorted; otherwise the first requested in lexicographic order.
func LongDocPermutatorPermutations(n, requested int, seed int64) [][]int {
	total := factorialCapped(n)
	q, r := total/10, total%10
	sample := q > requested || (q == requested && r > 0) // n! > 10 x requested, without overflow
	if requested >= total || !sample {
		k := min(requested, total)
		out := make([][]int, 0, k)
		p := make([]int, n)
		for i := range p {
			p[i] = i
		}
		for len(out) < k {
			out = append(out, slices.Clone(p))
			if !nextPermutation(p) {
				break
			}
		}
		return out
	}
	// LMCache draws random.Random(seed).sample(range(n), n) until it has
	// requested distinct ones, then sorts them.
	rng := pyrandom.New(seed)
	seen := make(map[string]bool, requested)
	out := make([][]int, 0, requested)
	for len(out) < requested {
		p := rng.Sample(n, n)
		key := fmt.Sprint(p)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, p)
	}
	slices.SortFunc(out, slices.Compare[[]int])
	return out
}

// nextPermutation advances p to its lexicographic successor, reporting
// false when p was the last one.
func nextPermutation(p []int) bool {
	i := len(p) - 2
	for i >= 0 && p[i] >= p[i+1] {
		i--
	}
	if i < 0 {
		return false
	}
	j := len(p) - 1
	for p[j] <= p[i] {
		j--
	}
	p[i], p[j] = p[j], p[i]
	slices.Reverse(p[i+1:])
	return true
}

// ldpSharedLead is, for each permutation in order, how many of its
// leading contexts an earlier permutation starts with: what a plain
// prefix cache can serve beyond the system prompt. The list is in
// lexicographic order, so the longest shared lead is with the predecessor.
func ldpSharedLead(perms [][]int) []int {
	out := make([]int, len(perms))
	for i := 1; i < len(perms); i++ {
		p, q := perms[i], perms[i-1]
		k := 0
		for k < len(p) && p[k] == q[k] {
			k++
		}
		out[i] = k
	}
	return out
}

// LongDocPermutator sends the same contexts in different orders: a prefix
// cache serves only the system prompt and the leading contexts an earlier
// request shared; blended (non-prefix) reuse can serve the rest.
type LongDocPermutator struct {
	p                Params
	numContexts      int
	contextLen       int
	systemLen        int
	requested        int
	inflight         int
	maxOut           int
	perms            [][]int
	lead             []int
	warm             tally
	measured         tally
	firstReq, others tally
	seen             []ldpSeen // measured requests, for the expectation
}

// ldpSeen is what the expectation needs of one measured request.
type ldpSeen struct {
	perm int
	res  sender.Result
}

func newLongDocPermutator(ctx context.Context, p Params) (Workload, error) {
	c := p.Config
	o := config.DecodeAs[ldpOptions](c)
	w := &LongDocPermutator{
		p:           p,
		numContexts: o.NumContexts,
		contextLen:  o.ContextLength,
		systemLen:   o.SystemPromptLength,
		requested:   o.NumPermutations,
		inflight:    o.NumInflightRequests,
		maxOut:      o.MaxOutputLength,
	}
	if w.numContexts < 1 || w.contextLen < 1 || w.requested < 1 {
		return nil, fmt.Errorf("--ldp-num-contexts, --ldp-context-length and --ldp-num-permutations must be >= 1")
	}
	w.perms = LongDocPermutatorPermutations(w.numContexts, w.requested, p.Seed)
	w.lead = ldpSharedLead(w.perms)
	return w, nil
}

func (w *LongDocPermutator) Name() string { return config.LongDocPermutator }

func (w *LongDocPermutator) Describe() []string {
	sys := "no system prompt"
	if w.systemLen > 0 {
		sys = fmt.Sprintf("a %d-word system prompt", w.systemLen)
	}
	return []string{
		fmt.Sprintf("long-doc-permutator: %d contexts of %d pool words (about %s tokens each at %.2f tokens per word, the built-in engine's tokenizer), %d permutations (of %s), %s, %d in flight",
			w.numContexts, w.contextLen, group(LDPContextTokens(w.contextLen, LDPBuiltinTokensPerWord)), LDPBuiltinTokensPerWord,
			len(w.perms), factorialString(w.numContexts), sys, w.inflight),
	}
}

// factorialString is n! in decimal, or "n!" when it does not fit an int.
func factorialString(n int) string {
	if f := factorialCapped(n); f != math.MaxInt {
		return strconv.Itoa(f)
	}
	return strconv.Itoa(n) + "!"
}

// LongDocPermutatorMessages is one request: the optional system message,
// then the contexts in permutation order separated by blank lines.
func LongDocPermutatorMessages(system string, contexts []string, perm []int) []sender.Message {
	parts := make([]string, len(perm))
	for k, i := range perm {
		parts[k] = contexts[i]
	}
	var msgs []sender.Message
	if system != "" {
		msgs = append(msgs, sender.Message{Role: "system", Content: system})
	}
	return append(msgs, sender.Message{Role: "user", Content: strings.Join(parts, "\n\n")})
}

func (w *LongDocPermutator) Run(ctx context.Context, env Env) error {
	warm := &sender.Request{
		ID: "warmup_0", Phase: sender.PhaseWarmup, Endpoint: w.p.Endpoint,
		Messages: []sender.Message{
			{Role: "system", Content: "You are a helpful assistant."},
			{Role: "user", Content: repeatWord("warmup", 500)},
		},
		MaxTokens: 1,
	}
	setPrompt(warm)
	if w.p.Warmup() {
		env.Phase("warmup", 1, 0)
		runSequential(ctx, env, []*sender.Request{warm}, func(r sender.Result) { w.warm.add(&r) })
	}
	if ctx.Err() != nil {
		return nil
	}

	pool := LongDocPermutatorPool(LDPVocabSize, w.p.Seed)
	contexts := make([]string, w.numContexts)
	for i := range contexts {
		contexts[i] = LongDocPermutatorContext(pool, i, w.contextLen, w.p.Seed)
	}
	system := LongDocPermutatorSystem(w.systemLen, w.p.Seed)
	reqs := make([]*sender.Request, len(w.perms))
	for r, perm := range w.perms {
		reqs[r] = &sender.Request{
			ID: fmt.Sprintf("perm%d_req%d", r, r), Phase: sender.PhaseMeasured, Endpoint: w.p.Endpoint,
			Messages: LongDocPermutatorMessages(system, contexts, perm), MaxTokens: w.maxOut,
		}
		setPrompt(reqs[r])
	}
	env.Phase("measuring", len(reqs), 0)
	runBounded(ctx, env, reqs, w.inflight, func(r sender.Result) {
		w.measured.add(&r)
		var p, k int
		if _, err := fmt.Sscanf(r.RequestID, "perm%d_req%d", &p, &k); err == nil {
			kept := r
			kept.Text, kept.RoundGapsMs = "", nil
			w.seen = append(w.seen, ldpSeen{perm: p, res: kept})
		}
		if r.RequestID == reqs[0].ID {
			w.firstReq.add(&r)
		} else {
			w.others.add(&r)
		}
	})
	return nil
}

// prefixBound is the share of the later requests' prompts (every request
// but the first) that a plain prefix cache can serve, counted in words:
// the system prompt plus the leading contexts an earlier request shared.
// Pool words are longer in tokens than the system prompt's words, so in
// tokens the bound is lower still: a hit ratio above it means reuse beyond
// the prefix.
func (w *LongDocPermutator) prefixBound() *float64 {
	if len(w.lead) < 2 {
		return nil
	}
	whole := float64(w.systemLen + w.numContexts*w.contextLen)
	sum := 0.0
	for _, k := range w.lead[1:] {
		sum += float64(w.systemLen+k*w.contextLen) / whole
	}
	b := sum / float64(len(w.lead)-1)
	return &b
}

func (w *LongDocPermutator) Outcome() Outcome {
	// The orders are listed when there are not too many of them.
	var perms []string
	var lead []int
	if len(w.perms) <= ldpListMax {
		perms = make([]string, len(w.perms))
		for i, p := range w.perms {
			perms[i] = strings.Trim(fmt.Sprint(p), "[]")
		}
		lead = w.lead
	}
	bound := w.prefixBound()
	verdict := "n/a"
	if hit := w.others.HitRatio; hit != nil && bound != nil {
		if *hit > *bound+0.05 {
			verdict = "above: blended reuse"
		} else {
			verdict = "not above: prefix reuse only"
		}
	}
	block := map[string]any{
		"num_contexts":           w.numContexts,
		"context_length_words":   w.contextLen,
		"system_prompt_words":    w.systemLen,
		"vocab_size":             LDPVocabSize,
		"num_permutations":       len(w.perms),
		"requested":              w.requested,
		"permutations":           perms,
		"shared_lead_contexts":   lead,
		"prefix_bound_words":     bound,
		"verdict":                verdict,
		"expectation":            w.expectation(bound, verdict),
		"observed":               &w.measured,
		"first_request":          &w.firstReq,
		"later_requests":         &w.others,
		"warmup":                 &w.warm,
		"observed_prompt_tokens": w.measured.meanPrompt(),
	}
	rows := []report.Row{
		{Label: "Contexts / permutations", Value: fmt.Sprintf("%d / %d", w.numContexts, len(w.perms))},
		{Label: "Words / observed prompt tokens", Value: fmt.Sprintf("%d / %s", w.systemLen+w.numContexts*w.contextLen, report.Tokens(w.measured.meanPrompt()))},
		{Label: "Prefix-cache bound, in words (%)", Value: report.Percent(bound)},
	}
	rows = append(rows, w.others.rows("Later ")...)
	rows = append(rows, report.Row{Label: "Later hit ratio vs bound", Value: verdict})
	rows = append(rows, w.firstReq.rows("First ")[2:]...)
	return Outcome{Block: block, Sections: []report.Section{{Title: "Long Doc Permutator", Rows: rows}}}
}

// expectation: every later request (every permutation but the first)
// sent once the request before it in the sorted order had finished
// reuses at least what it shares with it: the system prompt and the
// shared leading contexts, in tokens estimated from the observed prompt
// length (the system prompt's words are one token each; the rest is the
// contexts'). Blended reuse serves more; that is the bound's verdict,
// not the expectation's.
func (w *LongDocPermutator) expectation(bound *float64, above string) *record.Expectation {
	var prompt, n int
	done := map[int]float64{}
	for _, s := range w.seen {
		if s.res.Successful {
			done[s.perm] = s.res.FinishTime
			if s.res.PromptTokens != nil {
				prompt += *s.res.PromptTokens
				n++
			}
		}
	}
	if n > 0 {
		prompt /= n
	}
	ctxTokens := max(prompt-w.systemLen, 0) / w.numContexts
	var hits judge
	unjudged, nothing := 0, 0
	for _, s := range w.seen {
		if s.perm < 1 || s.perm >= len(w.lead) {
			continue
		}
		shared := w.systemLen + w.lead[s.perm]*ctxTokens
		t, ok := done[s.perm-1]
		switch {
		case shared == 0:
			nothing++
		case !ok || t > s.res.SubmitTime:
			unjudged++
		default:
			hits.add(&s.res, reuses(shared))
		}
	}
	expected := "every later request reuses at least the system prompt and the leading contexts it shares with the request before it (in the sorted order); blended reuse serves more"
	if len(w.perms) < 2 {
		return expect(expected, record.VerdictUnknown, "one permutation: no later request to judge")
	}
	reason := "later requests: " + hits.count("reused their shared prefix", " (a hit caches at least half of it)")
	if nothing > 0 {
		reason += fmt.Sprintf("; %d share nothing with the request before (not judged)", nothing)
	}
	if unjudged > 0 {
		reason += fmt.Sprintf("; %d sent before the request before them had finished (not judged)", unjudged)
	}
	reason += fmt.Sprintf("; hit ratio %s vs the prefix-cache bound %s in words (%s)", report.PercentText(w.others.HitRatio), report.PercentText(bound), above)
	reason += interrupted(len(w.seen), len(w.perms))
	if b := w.p.budget(); b.Tokens > 0 && prompt > b.Tokens {
		return expect(fmt.Sprintf("later requests miss what they share: one prompt (%s) is larger than %s", tokens(prompt), b.text()),
			hits.someMiss(), reason)
	}
	return expect(expected, hits.verdict(), reason)
}

// PlanStreams: the in-flight setting (the warmup goes one at a time).
func (w *LongDocPermutator) PlanStreams(ls load.Settings) StreamPlan {
	prompt := float64(w.numContexts)*float64(LDPContextTokens(w.contextLen, LDPBuiltinTokensPerWord)) + float64(w.systemLen)
	return measuredStreams(ls, min(w.inflight, len(w.perms)), "--ldp-num-inflight-requests", expectedLatency(int(min(prompt, config.MaxTokens)), w.maxOut))
}

// estimateLongDocPermutator sizes its plan from its settings.
func estimateLongDocPermutator(c *config.Config, tokensPerGB int) Plan {
	o := config.DecodeAs[ldpOptions](c)
	n := float64(o.NumContexts)
	perms := math.Min(float64(o.NumPermutations), math.Gamma(n+1))
	// Contexts count pool words, about LDPBuiltinTokensPerWord tokens
	// each; the system prompt's words are one token each.
	ctx := float64(o.ContextLength) * LDPBuiltinTokensPerWord
	per := n*ctx + float64(o.SystemPromptLength)
	return Plan{Requests: perms, Tokens: perms*per + n*ctx,
		Flags: []string{"--ldp-num-permutations", "--ldp-num-contexts", "--ldp-context-length"}}
}

// ldpOptions are its settings (its rows in config), decoded once.
type ldpOptions struct {
	NumContexts         int `setting:"ldp_num_contexts"`
	ContextLength       int `setting:"ldp_context_length"`
	SystemPromptLength  int `setting:"ldp_system_prompt_length"`
	NumPermutations     int `setting:"ldp_num_permutations"`
	NumInflightRequests int `setting:"ldp_num_inflight_requests"`
	MaxOutputLength     int `setting:"ldp_max_output_length"`
}
