package workload

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
)

func init() {
	Register(Kind{Name: config.MultiRoundChat, New: newMultiRoundChat, Rebuildable: true,
		Estimate: estimateMultiRoundChat, WorkingSet: (*MultiRoundChat)(nil)})
}

// mrcRetry is how often a dispatch that waits for a busy session checks
// again.
const mrcRetry = 10 * time.Millisecond

// mrcUnderstood is the assistant's reply to the pre-filled history.
const mrcUnderstood = "Understood, I have read the context above."

// mrcExchange is one finished round of a session.
type mrcExchange struct{ Query, Answer string }

// mrcSession is one simulated user: a system prompt, an optional
// pre-filled history and the exchanges so far.
type mrcSession struct {
	ID        int
	System    string
	History   string
	Exchanges []mrcExchange
	busy      bool
}

// Messages is the chat sent for query: system, the history and its
// acknowledgement, every earlier exchange, then the query.
func (s *mrcSession) Messages(query string) []sender.Message {
	msgs := make([]sender.Message, 0, 4+2*len(s.Exchanges))
	msgs = append(msgs, sender.Message{Role: "system", Content: s.System})
	if s.History != "" {
		msgs = append(msgs,
			sender.Message{Role: "user", Content: s.History},
			sender.Message{Role: "assistant", Content: mrcUnderstood})
	}
	for _, e := range s.Exchanges {
		msgs = append(msgs,
			sender.Message{Role: "user", Content: e.Query},
			sender.Message{Role: "assistant", Content: e.Answer})
	}
	return append(msgs, sender.Message{Role: "user", Content: query})
}

// MultiRoundChatUsers is max(1, int(volume * tokens_per_gb / (shared + history))).
func MultiRoundChatUsers(volumeGB float64, tokensPerGB, shared, history int) int {
	return atLeast1(volumeGB * float64(tokensPerGB) / float64(shared+history))
}

// MultiRoundChatSystem is `Session i. You are a helpful assistant. ` then
// max(0, P-7) words "help" (the header counts 7 words).
func MultiRoundChatSystem(i, shared int) string {
	return fmt.Sprintf("Session %d. You are a helpful assistant. ", i) + repeatWord(wordHelp, max(0, shared-7))
}

// MultiRoundChatHistory is `[Session i history] ` then max(0, H-3) words
// "hi", or "" when H is 0 (no history messages).
func MultiRoundChatHistory(i, history int) string {
	if history <= 0 {
		return ""
	}
	return fmt.Sprintf("[Session %d history] ", i) + repeatWord(wordHi, max(0, history-3))
}

// MultiRoundChatQuery is user-input-length words "tell".
func MultiRoundChatQuery(n int) string { return repeatWord(wordTell, n) }

// MultiRoundChat simulates concurrent chat users whose history grows:
// every request should reuse its session's system prompt and history
// (warmed up beforehand) and, from its second round on, the earlier
// exchanges too.
type MultiRoundChat struct {
	p                          Params
	shared, history, input     int
	output                     int
	qps, duration              float64
	arrival                    string
	load                       load.Settings
	users                      int
	sessions                   []*mrcSession
	pause                      func(ctx context.Context, d time.Duration) bool
	mu                         sync.Mutex
	warm, measured             tally
	firstRound, laterRounds    tally
	byRound                    []*tally
	dispatched, waited, unsent int
	maxWaitMs                  float64
	rounds                     map[int]int // measured requests seen per session
	// The expectation's receipts: requests sent once their session was
	// in the cache and while the sessions fit it.
	hits           judge
	cold, overflow int // not judged: no warmup (round 1), sessions over the cache
	prefilled      map[int]bool
	sessTokens     map[int]int // each session's tokens in the cache: its last prompt and answer
	setTokens      int         // the sum of sessTokens, kept as they change
	maxSet         int         // the most tokens the sessions held
	query          string      // every measured request's query
}

func newMultiRoundChat(ctx context.Context, p Params) (Workload, error) {
	c := p.Config
	o := config.DecodeAs[mrcOptions](c)
	w := &MultiRoundChat{
		p:        p,
		shared:   o.SharedPromptLength,
		history:  o.ChatHistoryLength,
		input:    o.UserInputLength,
		output:   o.OutputLength,
		qps:      o.QPS,
		duration: o.Duration,
		arrival:  o.Arrival,
		pause:    sleepCtx,
	}
	if p.TokensPerGB <= 0 {
		return nil, fmt.Errorf("--tokens-per-gb-kvcache must be > 0 for %s (or give --lmcache-url)", config.MultiRoundChat)
	}
	ls, err := load.FromConfig(c)
	if err != nil {
		return nil, err
	}
	// --request-rate is --mrc-qps; --arrival/--burstiness shape its gaps.
	w.load, w.qps = ls, ls.Rate
	if g := p.Settings.Load; g.ArrivalGiven || g.BurstinessGiven {
		w.arrival = ls.Arrival
	}
	if w.shared+w.history <= 0 {
		return nil, fmt.Errorf("--mrc-shared-prompt-length plus --mrc-chat-history-length must be > 0 (got %d and %d)", w.shared, w.history)
	}
	if !(w.qps > 0) || !(w.duration > 0) {
		return nil, fmt.Errorf("--mrc-qps and --mrc-duration must be > 0 (got %v and %v)", w.qps, w.duration)
	}
	w.users = MultiRoundChatUsers(p.Settings.KVCacheGB, p.TokensPerGB, w.shared, w.history)
	sh := p.shard()
	if w.users < sh.Count {
		return nil, fmt.Errorf("--shard %s: %s has %d session(s), fewer than the %d shards; use fewer shards or a larger --kv-cache-volume", sh, config.MultiRoundChat, w.users, sh.Count)
	}
	// A shard owns whole sessions: every Nth, from its index.
	for i := 0; i < w.users; i++ {
		if sh.Owns(i) {
			w.sessions = append(w.sessions, &mrcSession{ID: i, System: MultiRoundChatSystem(i, w.shared), History: MultiRoundChatHistory(i, w.history)})
		}
	}
	w.rounds = make(map[int]int)
	w.prefilled, w.sessTokens = map[int]bool{}, map[int]int{}
	w.query = MultiRoundChatQuery(w.input)
	return w, nil
}

// sleepCtx waits d or until ctx is done; it reports whether d elapsed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (w *MultiRoundChat) Name() string { return config.MultiRoundChat }

func (w *MultiRoundChat) Describe() []string {
	lines := []string{
		fmt.Sprintf("multi-round-chat: %d sessions (system %d + history %d tokens), queries of %d tokens, answers up to %d tokens",
			w.users, w.shared, w.history, w.input, w.output),
		fmt.Sprintf("multi-round-chat: %s arrivals at %g requests/s for %gs, strict round robin (a busy session is waited for)",
			w.load.Arrival, w.qps, w.duration),
	}
	if sh := w.p.shard(); sh.Sharded() {
		lines = append(lines, fmt.Sprintf("shard %s: the sessions s with s mod %d = %d (%d of %d), at %g requests/s",
			sh, sh.Count, sh.Index, len(w.sessions), w.users, sh.Rate(w.qps)))
	}
	return lines
}

func (w *MultiRoundChat) Run(ctx context.Context, env Env) error {
	warm := make([]*sender.Request, len(w.sessions))
	for i, s := range w.sessions {
		warm[i] = &sender.Request{
			ID: fmt.Sprintf("warmup_s%d", s.ID), Phase: sender.PhaseWarmup, Endpoint: w.p.Endpoint,
			Messages: s.Messages("Hello"), MaxTokens: 1,
		}
		setPrompt(warm[i])
	}
	if w.p.Warmup() {
		env.Phase("warmup", len(warm), 0)
		runSequential(ctx, env, warm, func(r sender.Result) { w.Observe(&r) })
	}
	if ctx.Err() != nil {
		return nil
	}

	length := time.Duration(w.duration * float64(time.Second))
	env.Phase("measuring", -1, length)
	start := env.Now()
	deadline := start.Add(length)
	sh := w.p.shard()
	ls := w.load
	ls.Shard = sh
	arrivals := load.NewSchedule(ls)
	query := w.query
	var wg sync.WaitGroup
dispatch:
	for g := 0; ; g++ {
		due := start.Add(arrivals.Next())
		if !due.Before(deadline) {
			break
		}
		if !w.pause(ctx, due.Sub(env.Now())) {
			break
		}
		s := w.sessions[g%len(w.sessions)]
		waited := false
		for w.isBusy(s) {
			if !env.Now().Before(deadline) || !w.pause(ctx, mrcRetry) {
				break dispatch
			}
			waited = true
		}
		now := env.Now()
		if !now.Before(deadline) || ctx.Err() != nil {
			break
		}
		w.mu.Lock()
		s.busy = true
		msgs := s.Messages(query)
		w.dispatched++
		if waited {
			w.waited++
			if ms := float64(now.Sub(due)) / float64(time.Millisecond); ms > w.maxWaitMs {
				w.maxWaitMs = ms
			}
		}
		w.mu.Unlock()
		// The id is the whole run's: arrival g of this shard is arrival
		// g*N+I of the run (the same session when N divides the users).
		req := &sender.Request{
			ID: fmt.Sprintf("s%d_r%d", s.ID, g*sh.Count+sh.Index), Phase: sender.PhaseMeasured, Endpoint: w.p.Endpoint,
			Messages: msgs, MaxTokens: w.output, Scheduled: due, KeepText: true, HeldBack: waited,
		}
		setPrompt(req)
		if !env.release(ctx, req) { // --max-concurrency
			w.finish(s, false, nil)
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, ok := env.Send(ctx, req)
			w.finish(s, ok, &res)
		}()
	}
	wg.Wait()
	return nil
}

func (w *MultiRoundChat) isBusy(s *mrcSession) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return s.busy
}

// finish appends the streamed answer to its session and frees it.
func (w *MultiRoundChat) finish(s *mrcSession, ok bool, res *sender.Result) {
	w.mu.Lock()
	s.busy = false
	if !ok {
		w.unsent++
		w.mu.Unlock()
		return
	}
	s.Exchanges = append(s.Exchanges, mrcExchange{Query: w.query, Answer: res.Text})
	w.mu.Unlock()
	w.Observe(res)
}

// ShardOf: session s (warmup_s{s}) is sent by the shard s mod count,
// and so is its arrival r (s{s}_r{r}: arrival g of shard I is the run's
// g*count+I), so both numbers name the same shard.
func (w *MultiRoundChat) ShardOf(id string, count int) (int, bool) {
	n, ok := idNumbers(id, "warmup_s")
	if !ok {
		if n, ok = idNumbers(id, "s", "_r"); !ok || n[1]%count != n[0]%count {
			return 0, false
		}
	}
	if n[0] >= w.users {
		return 0, false
	}
	return n[0] % count, true
}

// Observe adds one finished request to the outcome. A session sends one
// request at a time, so its requests finish (and their lines, ordered by
// submit time, are read) in round order: the round is how many of the
// session's requests came before, counted from the session in the id
// (s{session}_r{arrival}).
func (w *MultiRoundChat) Observe(res *sender.Result) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if res.Phase == sender.PhaseWarmup {
		w.warm.add(res)
		if n, ok := idNumbers(res.RequestID, "warmup_s"); ok {
			w.cached(n[0], res)
		}
		return
	}
	sid := 0
	if n, ok := idNumbers(res.RequestID, "s", "_r"); ok {
		sid = n[0]
	}
	w.rounds[sid]++
	round := w.rounds[sid]
	w.measured.add(res)
	// A session's requests go one at a time, so an earlier one has
	// finished before this one was sent.
	set := w.workingSet() - w.sessTokens[sid]
	if res.PromptTokens != nil {
		set += *res.PromptTokens
	}
	b := w.p.budget()
	switch {
	case !w.prefilled[sid]:
		w.cold++
	case b.Tokens > 0 && set > b.Tokens:
		w.overflow++
	default:
		w.hits.add(res, reuses(w.shared+w.history))
	}
	w.cached(sid, res)
	if round == 1 {
		w.firstRound.add(res)
	} else {
		w.laterRounds.add(res)
	}
	for len(w.byRound) < round {
		w.byRound = append(w.byRound, &tally{})
	}
	w.byRound[round-1].add(res)
}

// cached notes what a successful request left of session sid in the
// cache: its prompt and its answer.
func (w *MultiRoundChat) cached(sid int, res *sender.Result) {
	if !res.Successful || res.PromptTokens == nil {
		return
	}
	w.prefilled[sid] = true
	n := *res.PromptTokens
	if res.CompletionTokens != nil {
		n += *res.CompletionTokens
	}
	w.setTokens += n - w.sessTokens[sid]
	w.sessTokens[sid] = n
	w.maxSet = max(w.maxSet, w.setTokens)
}

// workingSet is the sessions' tokens in the cache, by their last
// requests: a running sum, so a finished request costs O(1) whatever
// the number of sessions.
func (w *MultiRoundChat) workingSet() int { return w.setTokens }

// expectation: every request sent once its session was in the cache
// (warmed up, or an earlier round) reuses the session's system prompt
// and history while the sessions fit the cache; requests sent after the
// sessions' growing histories outgrew it are not judged (under LRU with
// strict round robin they miss), nor round 1 without a warmup.
func (w *MultiRoundChat) expectation() *record.Expectation {
	b := w.p.budget()
	part := w.shared + w.history
	expected := fmt.Sprintf("every request reuses its session's system prompt and history (%s tokens; warmed up beforehand), from round 2 also the earlier exchanges", group(part))
	if !w.p.Warmup() {
		expected = fmt.Sprintf("from its session's second request on, every request reuses the session's system prompt and history (%s tokens; no warmup: round 1 prefills them)", group(part))
	}
	if b.Tokens > 0 {
		expected += fmt.Sprintf(", while the %d sessions fit %s", w.users, b.text())
	}
	reason := "requests: " + w.hits.count("reused their session", fmt.Sprintf(" (a hit caches at least half of the %s tokens)", group(part)))
	reason += fmt.Sprintf("; hit ratio round 1 %s, rounds 2+ %s", report.PercentText(w.firstRound.HitRatio), report.PercentText(w.laterRounds.HitRatio))
	if w.maxSet > 0 {
		reason += fmt.Sprintf("; the sessions held %s at most", tokens(w.maxSet))
	}
	if w.cold > 0 {
		reason += fmt.Sprintf("; %d sent before their session was cached (not judged)", w.cold)
	}
	if w.overflow > 0 {
		reason += fmt.Sprintf("; %d sent once the sessions outgrew the cache (not judged)", w.overflow)
	}
	return expect(expected, w.hits.verdict(), reason)
}

// AddShardBlock adds a shard's dispatch counters, which the records do
// not carry, to a merged outcome.
func (w *MultiRoundChat) AddShardBlock(block []byte) error {
	var b struct {
		Dispatched int     `json:"dispatched"`
		Waited     int     `json:"waited_for_session"`
		MaxWaitMs  float64 `json:"max_session_wait_ms"`
	}
	if err := json.Unmarshal(block, &b); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dispatched += b.Dispatched
	w.waited += b.Waited
	w.maxWaitMs = max(w.maxWaitMs, b.MaxWaitMs)
	return nil
}

func (w *MultiRoundChat) Outcome() Outcome {
	w.mu.Lock()
	defer w.mu.Unlock()
	rounds := make([]map[string]any, len(w.byRound))
	for i, t := range w.byRound {
		rounds[i] = map[string]any{"round": i + 1, "observed": t}
	}
	firstTarget := w.shared + w.history + w.input
	block := map[string]any{
		"num_users":                          w.users,
		"shared_prompt_length":               w.shared,
		"chat_history_length":                w.history,
		"user_input_length":                  w.input,
		"output_length":                      w.output,
		"qps":                                w.qps,
		"duration_s":                         w.duration,
		"arrival":                            w.arrival,
		"dispatched":                         w.dispatched,
		"waited_for_session":                 w.waited,
		"max_session_wait_ms":                w.maxWaitMs,
		"expectation":                        w.expectation(),
		"observed":                           &w.measured,
		"first_round":                        &w.firstRound,
		"later_rounds":                       &w.laterRounds,
		"by_round":                           rounds,
		"warmup":                             &w.warm,
		"target_prompt_tokens":               firstTarget,
		"observed_first_round_prompt_tokens": w.firstRound.meanPrompt(),
	}
	rows := []report.Row{
		{Label: "Sessions", Value: report.Int(w.users)},
		{Label: "Dispatched / waited for session", Value: fmt.Sprintf("%d / %d", w.dispatched, w.waited)},
		{Label: "Round 1 target / observed prompt", Value: fmt.Sprintf("%d / %s", firstTarget, report.Tokens(w.firstRound.meanPrompt()))},
	}
	rows = append(rows, w.firstRound.rows("Round 1 ")...)
	rows = append(rows, w.laterRounds.rows("Rounds 2+ ")...)
	return Outcome{Block: block, Sections: []report.Section{{Title: "Multi Round Chat", Rows: rows}}}
}

// PlanWarnings checks the sessions against the cache they were sized for,
// the run's length against its rounds, and the longest prompt against
// the engine's context.
func (w *MultiRoundChat) PlanWarnings(ctx context.Context, pc PlanCheck) []string {
	if len(w.sessions) == 0 {
		return nil
	}
	var out []string
	s := w.sessions[0]
	// A session in the cache after its first measured round: its prompt
	// (system, history and acknowledgement, one query) and its answer.
	msgs := s.Messages(MultiRoundChatQuery(w.input))
	content := 0
	for _, m := range msgs {
		content += pc.count(ctx, m.Content)
	}
	perSession := content + len(msgs)*templatePerMessage + templatePerRequest + pc.SaltTokens + w.output
	planned := w.shared + w.history
	b := w.p.budget()
	// What overflows into a lower tier of unknown size may still hit.
	room := b.Tokens + b.LowerTokens
	if b.Lower && b.LowerTokens == 0 {
		room = 0
	}
	if set := perSession * w.users; room > 0 && set > room {
		fit := max(room/perSession, 1)
		out = append(out, fmt.Sprintf("multi-round-chat: %d sessions of about %s each (%s planned; the chat template, the acknowledgement, a query and its answer add the rest) hold %s, more than %s: sessions will evict each other and their requests will be cold; %d sessions fit (a smaller --kv-cache-volume, or shorter --mrc-chat-history-length)",
			w.users, tokens(perSession), group(planned), tokens(set), b.text(), fit))
	}
	// Strict round robin: each session gets qps x duration / users rounds.
	if rounds := w.qps * w.duration / float64(w.users); rounds < 2 {
		need := 2 * float64(w.users) / w.qps
		out = append(out, fmt.Sprintf("multi-round-chat: %g requests/s for %gs over %d sessions is %.1f round(s) per session: no session reaches its second round, where its earlier exchanges are reused; run at least %.0fs (--mrc-duration) or with fewer sessions",
			w.qps, w.duration, w.users, rounds, need))
	}
	rounds := max(int(w.qps*w.duration/float64(w.users)+0.999), 1)
	longest := perSession - w.output + (rounds-1)*(w.input+w.output+2*templatePerMessage)
	if msg := contextWarning("multi-round-chat", longest, fmt.Sprintf("the prompts of round %d", rounds), pc.ContextLength); msg != "" {
		out = append(out, msg)
	}
	return out
}

// PlanStreams: a session has one request in flight at a time, and the
// sessions' arrivals come at --mrc-qps (the warmup goes one at a time).
func (w *MultiRoundChat) PlanStreams(ls load.Settings) StreamPlan {
	p := measuredStreams(ls, len(w.sessions), "--kv-cache-volume", expectedLatency(w.shared+w.history+w.input, w.output))
	if p.Rate > 0 {
		p.Flag = "--mrc-qps"
	}
	return p
}

// SizeWorkingSet: sessions = size / (shared prompt + history)
// (--kv-cache-volume set to match); a round reuses its session's system
// prompt and history, and what earlier rounds added to it: only its own
// question is fresh.
func (*MultiRoundChat) SizeWorkingSet(c *config.Config, tokens float64, tokensPerGB int) (WorkingSet, error) {
	o := config.DecodeAs[mrcOptions](c)
	per := o.SharedPromptLength + o.ChatHistoryLength
	n, err := units(config.MultiRoundChat, tokens, per, "session")
	if err != nil {
		return WorkingSet{}, err
	}
	if tokensPerGB <= 0 {
		return WorkingSet{}, fmt.Errorf("--tokens-per-gb-kvcache must be > 0 for %s (or give --lmcache-url)", config.MultiRoundChat)
	}
	if err := c.SetKVCacheGB(volumeFor(n, per, tokensPerGB)); err != nil {
		return WorkingSet{}, err
	}
	fresh := o.UserInputLength + templatePerMessage + templatePerRequest
	return WorkingSet{Tokens: n * per, Count: n, Unit: per, What: "sessions", Fresh: fresh}, nil
}

// estimateMultiRoundChat sizes its plan from its settings.
func estimateMultiRoundChat(c *config.Config, tokensPerGB int) Plan {
	o := config.DecodeAs[mrcOptions](c)
	per := float64(o.SharedPromptLength) + float64(o.ChatHistoryLength)
	// The sessions are built ahead; what the run then sends is bounded
	// by time (--mrc-qps x --mrc-duration within their ranges).
	users := math.Max(1, math.Floor(budgetTokens(c, tokensPerGB)/math.Max(per, 1)))
	return Plan{Requests: users, Tokens: users * per,
		Flags: []string{"--kv-cache-volume", "--tokens-per-gb-kvcache", "--mrc-shared-prompt-length", "--mrc-chat-history-length"}}
}

// mrcOptions are its settings (its rows in config), decoded once.
type mrcOptions struct {
	SharedPromptLength int     `setting:"mrc_shared_prompt_length"`
	ChatHistoryLength  int     `setting:"mrc_chat_history_length"`
	UserInputLength    int     `setting:"mrc_user_input_length"`
	OutputLength       int     `setting:"mrc_output_length"`
	QPS                float64 `setting:"mrc_qps"`
	Duration           float64 `setting:"mrc_duration"`
	Arrival            string  `setting:"mrc_arrival"`
}
