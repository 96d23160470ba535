package workload

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/trace"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/textclean"
)

func init() {
	Register(Kind{Name: config.TraceReplay, New: newTraceReplay, Rebuildable: true})
}

// Prompt modes and their exactness (spec/trace.md).
const (
	modeTokens = "tokens"
	modeText   = "text"

	exact     = "exact"
	verified  = "verified"
	estimated = "estimated"
)

// TraceReplay replays a production trace open loop, with prompts whose
// shared prefixes are exactly the trace's, and records per request the
// hit the trace predicts next to the one the engine reported.
type TraceReplay struct {
	opts trOptions
	p    Params

	file        string
	format      trace.Format
	block       int
	engineBlock int
	speedup     float64
	start       int
	limit       int
	maxInput    int  // 0: none
	fromEngine  bool // maxInput is the engine's context, less each request's output
	ignoreEOS   bool
	salt        string
	lruTokens   int
	shaped      bool // the load flags time the releases, not the trace

	mode      string
	exactness string
	poolIDs   []uint32 // token ids (tokens mode) or the words' ids (text mode)
	words     []string // text mode

	// From the validation pass.
	owned          lineSet // the lines this shard sends; nil unsharded: all
	invalid        lineSet // the lines skipped as invalid
	replayable     int     // lines to send (after skips)
	skippedInvalid int
	skippedTooLong int
	// latencySum and owned0 give the mean expected latency of the lines
	// this process sends, for the planned streams.
	latencySum  time.Duration
	owned0      int
	traceSpan   time.Duration
	meanLatency time.Duration // expectedLatency over the replayable lines

	mu  sync.Mutex
	agg traceAgg
}

// traceAgg accumulates the expected and observed hits of the requests
// whose receipts are valid.
type traceAgg struct {
	sent, valid             int
	failed, noReceipt       int // requests not judged: failed, or no valid counts
	input, prompt, cached   int
	expected, expectedLRU   int
	below                   int
	deviation               []int
	firstSubmit, lastSubmit float64
}

func newTraceReplay(ctx context.Context, p Params) (Workload, error) {
	c := p.Config
	o := config.DecodeAs[trOptions](c)
	w := &TraceReplay{
		opts:        o,
		p:           p,
		file:        o.File,
		engineBlock: o.EngineBlockSize,
		speedup:     o.Speedup,
		start:       o.Start,
		limit:       o.Limit,
		maxInput:    o.MaxInputTokens,
		ignoreEOS:   o.Output == "trace",
	}
	if w.file == "" {
		return nil, errors.New("--tr-file is required for --workload trace-replay")
	}
	if w.file == "-" {
		return nil, errors.New("--tr-file - (stdin) is not accepted: the trace is read twice; give a file")
	}
	w.format = trace.Format(o.Format)
	if p.FromRecord {
		// The shards' workload blocks say what the file and the engine
		// said (AddShardBlock); the file itself may be anything by now.
		if w.format == trace.Auto {
			w.format = ""
		}
		return w, nil
	}
	if w.format == trace.Auto {
		f, err := trace.Detect(w.file)
		if err != nil {
			return nil, err
		}
		w.format = f
	}
	w.block = o.BlockSize
	if w.block == 0 {
		w.block = trace.DefaultBlockSize(w.format)
	}
	if p.TokensPerGB > 0 {
		w.lruTokens = int(min(p.Settings.KVCacheGB*float64(p.TokensPerGB), 1<<40))
	}
	ls, err := load.FromConfig(c)
	if err != nil {
		return nil, err
	}
	// --request-rate or --max-concurrency take the timing over (load.md).
	w.shaped = ls.Timed() || ls.MaxConcurrency > 0
	w.salt = traceSalt(c)

	// Everything the file can get wrong is found before the engine is
	// asked anything.
	sums, err := w.validate()
	if err != nil {
		return nil, err
	}
	if !w.shaped && w.traceSpan.Seconds()/w.speedup > config.MaxDurationSeconds {
		return nil, fmt.Errorf("--tr-speedup %g stretches the trace's %.0f s to %.0f s, longer than a run may last (%d s); raise --tr-speedup",
			w.speedup, w.traceSpan.Seconds(), w.traceSpan.Seconds()/w.speedup, config.MaxDurationSeconds)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if w.maxInput == 0 && p.Engine != nil {
		if n := maxModelLen(ctx, p.Engine); n > 0 {
			w.maxInput, w.fromEngine = n, true
			for _, sum := range sums {
				if int(sum) > n {
					w.skippedTooLong++
				}
			}
		}
	}
	w.replayable -= w.skippedTooLong
	// The planned streams' estimate: the mean expected latency of the
	// lines this process owns (too long ones included: an estimate).
	if w.owned0 > 0 {
		w.meanLatency = w.latencySum / time.Duration(w.owned0)
	}
	if err := w.choosePromptMode(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

// traceSalt is what the blocks' contents are drawn with: --prompt-salt's
// text, nothing for `none`, and a run-unique nonce for `auto` (the
// default), so that a rerun shares nothing with the run before it.
// Every shard of a run draws the same blocks: an auto salt then derives
// from what the shards share.
func traceSalt(c *config.Config) string {
	switch s := c.Settings().PromptSalt; s {
	case "none":
		return ""
	case "auto", "":
		if c.Shard().Sharded() {
			sum := sha256.Sum256([]byte("kvbench trace salt|" + c.RunKey()))
			return "auto-" + hex.EncodeToString(sum[:8])
		}
		b := make([]byte, 8)
		rand.Read(b)
		return "auto-" + hex.EncodeToString(b)
	default:
		return "text-" + s
	}
}

// maxTokens is what a request asks for: the trace's output length (at
// least 1: engines refuse 0).
func maxTokens(out int) int { return max(out, 1) }

func (w *TraceReplay) tooLong(in, out int) bool {
	if w.maxInput <= 0 {
		return false
	}
	if w.fromEngine {
		return in+maxTokens(out) > w.maxInput
	}
	return in > w.maxInput
}

// validate reads the trace once: every line in range must parse (or is
// counted with --tr-skip-invalid). It counts the lines this shard sends
// (replayable) and, sharded, keeps which lines those are (the Owner's
// chat ids die with this pass). With --tr-max-input-tokens it counts the
// too long ones too; without, it returns each such line's input plus
// max_tokens, for the engine's context once it is known, in 4 bytes.
func (w *TraceReplay) validate() ([]int32, error) {
	r, err := trace.Open(w.file, w.format, w.block)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if err := r.Skip(w.start); err != nil {
		return nil, err
	}
	skip := w.opts.SkipInvalid
	sh := w.p.shard()
	owner := trace.NewOwner(sh.Index, sh.Count)
	if sh.Count > 1 {
		w.owned = lineSet{}
	}
	var sums []int32
	lines := 0
	var first, last time.Duration
	for n := 0; w.limit == 0 || n < w.limit; n++ {
		q, err := r.Next()
		if err == io.EOF {
			break
		}
		var le *trace.LineError
		if errors.As(err, &le) {
			if !skip {
				return nil, fmt.Errorf("%w (--tr-skip-invalid skips such lines)", err)
			}
			w.skippedInvalid++
			w.invalid.add(le.Line)
			continue
		}
		if err != nil {
			return nil, err
		}
		if lines == 0 {
			first = q.Timestamp
		}
		lines++
		last = q.Timestamp
		if !owner.Owns(&q) {
			continue
		}
		w.replayable++
		w.owned0++
		w.latencySum += expectedLatency(q.InputLength, maxTokens(q.OutputLength))
		if sh.Count > 1 {
			w.owned.add(q.Line)
		}
		switch {
		case w.maxInput > 0:
			if w.tooLong(q.InputLength, q.OutputLength) {
				w.skippedTooLong++
			}
		default:
			// Both lengths are bounded by the reader: the sum is under 2^31.
			sums = append(sums, int32(q.InputLength+maxTokens(q.OutputLength)))
		}
	}
	if lines == 0 {
		return nil, fmt.Errorf("--tr-file %s: no request to replay (%d lines skipped as invalid)", w.file, w.skippedInvalid)
	}
	w.traceSpan = last - first
	return sums, nil
}

// choosePromptMode learns what the engine can take and settles the mode
// (spec/trace.md): exit 3 when the chosen mode cannot be made exact.
func (w *TraceReplay) choosePromptMode(ctx context.Context) error {
	want := w.opts.PromptMode
	if w.p.Engine == nil {
		return &UnavailableError{errors.New("trace replay needs the engine's /tokenize, and no engine is known")}
	}
	tk := newTokenizer(w.p.Engine)
	pool, perr := learnPool(ctx, tk)
	hasTokenize := perr == nil
	if hasTokenize && len(pool) < 16 {
		return &UnavailableError{fmt.Errorf("trace replay: /tokenize gave only %d distinct ordinary tokens for a page of English; cannot build exact prompts", len(pool))}
	}
	if want == modeTokens || want == "auto" {
		if !hasTokenize {
			return &UnavailableError{fmt.Errorf("--tr-prompt-mode %s: the engine's /tokenize is needed to learn ordinary token ids (%v); --tr-prompt-mode text runs with estimated lengths", want, perr)}
		}
		err := w.probeTokenIDs(ctx, pool)
		if err == nil {
			w.mode, w.exactness, w.poolIDs = modeTokens, exact, pool
			return nil
		}
		if want == modeTokens {
			return &UnavailableError{fmt.Errorf("--tr-prompt-mode tokens: the engine refuses a token-id prompt on /v1/completions (%v); try --tr-prompt-mode text", err)}
		}
	}
	// text
	if !hasTokenize {
		if want == "auto" {
			return &UnavailableError{fmt.Errorf("--tr-prompt-mode auto: no /tokenize (%v), so neither token-id nor text prompts can be made exact; --tr-prompt-mode text runs with estimated lengths", perr)}
		}
		w.mode, w.exactness, w.words = modeText, estimated, estimatedWords
		w.poolIDs = make([]uint32, len(w.words))
		for i := range w.poolIDs {
			w.poolIDs[i] = uint32(i)
		}
		return nil
	}
	words, ids, err := oneTokenWords(ctx, tk)
	if err != nil {
		return &UnavailableError{fmt.Errorf("--tr-prompt-mode text: learning one-token words through /tokenize: %v", err)}
	}
	if len(words) < 16 {
		return &UnavailableError{fmt.Errorf("--tr-prompt-mode text: only %d words are one token on this engine; cannot build exact text prompts", len(words))}
	}
	w.mode, w.words, w.poolIDs = modeText, words, ids
	if err := w.verifyText(ctx, tk); err != nil {
		return &UnavailableError{err}
	}
	w.exactness = verified
	return nil
}

// probeTokenIDs is the doctor's completions check: a token-id prompt
// must stream to the end.
func (w *TraceReplay) probeTokenIDs(ctx context.Context, pool []uint32) error {
	c := sender.New(sender.Options{
		BaseURL: w.p.Engine.BaseURL, Model: w.p.Engine.Model, APIKey: w.p.Engine.APIKey,
		Endpoint: sender.Completions, RequestTimeout: time.Minute, IdleTimeout: 30 * time.Second,
	})
	defer c.Close()
	r := c.Do(ctx, &sender.Request{ID: "trace_probe", Endpoint: sender.Completions, PromptIDs: pool[:16], MaxTokens: 1})
	if r.Successful {
		return nil
	}
	if r.Error != nil {
		msg := *r.Error
		if r.ErrorDetail != nil {
			msg += ": " + *r.ErrorDetail
		}
		return errors.New(msg)
	}
	return errors.New("the stream carried no token")
}

// verifyText tokenizes a sample of whole prompts (the first three
// replayable requests) and checks their lengths.
func (w *TraceReplay) verifyText(ctx context.Context, tk *tokenizer) error {
	r, err := trace.Open(w.file, w.format, w.block)
	if err != nil {
		return err
	}
	defer r.Close()
	r.Skip(w.start)
	r.PassOver(w.invalid.has)
	blocks := trace.NewBlocks(w.block, len(w.poolIDs), int64(w.p.Settings.Seed), w.salt, 0)
	checked := 0
	for n := 0; checked < 3 && (w.limit == 0 || n < w.limit); n++ {
		q, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil || w.tooLong(q.InputLength, q.OutputLength) {
			continue
		}
		text := w.text(blocks.Prompt(nil, q.HashIDs, q.InputLength))
		ids, err := tk.tokenize(ctx, text)
		if err != nil {
			return fmt.Errorf("--tr-prompt-mode text: tokenizing the prompt of line %d: %v", q.Line+1, err)
		}
		if len(ids) != q.InputLength {
			return fmt.Errorf("--tr-prompt-mode text: the prompt of line %d is %d tokens on this engine, not its input_length %d; use --tr-prompt-mode tokens", q.Line+1, len(ids), q.InputLength)
		}
		checked++
	}
	return nil
}

// text renders pool indices as words joined by single spaces.
func (w *TraceReplay) text(idx []uint32) string {
	var b strings.Builder
	b.Grow(len(idx) * 5)
	for i, k := range idx {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.words[k])
	}
	return b.String()
}

func (w *TraceReplay) Name() string { return config.TraceReplay }

func (w *TraceReplay) Describe() []string {
	limit := "none"
	if w.maxInput > 0 {
		limit = fmt.Sprint(w.maxInput)
		if w.fromEngine {
			limit += " (the engine's context, less each request's output)"
		}
	}
	lru := "none (no KV budget)"
	if w.lruTokens > 0 {
		lru = fmt.Sprintf("%d tokens", w.lruTokens)
	}
	return []string{
		fmt.Sprintf("trace-replay: %s, %s format, %d-token blocks, %d requests to replay (%d invalid and %d too long skipped)",
			filepath.Base(w.file), w.format, w.block, w.replayable, w.skippedInvalid, w.skippedTooLong),
		fmt.Sprintf("trace-replay: prompts in %s mode (%s), a pool of %d tokens; speedup %gx over a %.1f s trace; max input %s; LRU prediction %s",
			w.mode, w.exactness, len(w.poolIDs), w.speedup, w.traceSpan.Seconds(), limit, lru),
	}
}

func (w *TraceReplay) Run(ctx context.Context, env Env) error {
	r, err := trace.Open(w.file, w.format, w.block)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.Skip(w.start); err != nil {
		return err
	}
	r.PassOver(w.invalid.has)
	blocks := trace.NewBlocks(w.block, len(w.poolIDs), int64(w.p.Settings.Seed), w.salt, 0)
	ex := trace.NewExpector(blocks, w.engineBlock, w.lruTokens)
	env.Phase("measuring", w.replayable, w.scaled(w.traceSpan))

	// One goroutine builds the requests in file order (prompts and
	// expectations), up to prepareAhead ahead of the one due next; the
	// dispatcher only waits for each one's time and releases it, so
	// building a prompt is never schedule lag, even in a burst.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ready := make(chan preparedRequest, prepareAhead)
	var prepErr error
	go func() {
		defer close(ready)
		prepErr = w.prepare(ctx, r, blocks, ex, ready)
	}()
	defer func() {
		cancel()
		for range ready {
		}
	}()

	var wg sync.WaitGroup
	defer wg.Wait()
	for p := range ready {
		req := p.req
		if !w.shaped {
			if !sleepUntil(ctx, p.due) {
				return nil
			}
			req.Scheduled = p.due
		}
		if !env.release(ctx, req) {
			return nil
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, ok := env.Send(ctx, req)
			if ok {
				w.add(&res)
			}
		}()
	}
	return prepErr // set before ready was closed
}

// prepareAhead is how many built requests may wait for their time: a
// bound on the prompts in memory at once.
const prepareAhead = 32

// preparedRequest is a request built ahead of its time.
type preparedRequest struct {
	req *sender.Request
	due time.Time
}

// prepare reads the trace in file order and builds every request this
// shard sends, with its expectations, into ready. Lines other shards
// send still feed the expectations: they warm the engine's cache.
func (w *TraceReplay) prepare(ctx context.Context, r *trace.Reader, blocks *trace.Blocks, ex *trace.Expector, ready chan<- preparedRequest) error {
	var scratch, other []uint32
	var start time.Time
	var t0 time.Duration
	for n := 0; w.limit == 0 || n < w.limit; n++ {
		q, err := r.Next()
		if err == io.EOF {
			break
		}
		var le *trace.LineError
		if errors.As(err, &le) {
			continue // counted by the validation pass
		}
		if err != nil {
			return err
		}
		// The validation pass assigned the lines, conversations whole:
		// only its set of line numbers outlives it.
		mine := w.owned == nil || w.owned.has(q.Line)
		if w.tooLong(q.InputLength, q.OutputLength) {
			continue
		}
		if start.IsZero() {
			start, t0 = time.Now(), q.Timestamp
		}
		due := start.Add(w.scaled(q.Timestamp - t0))
		if !mine {
			scratch = blocks.Prompt(scratch[:0], q.HashIDs, q.InputLength)
			other = other[:0]
			for _, k := range scratch {
				other = append(other, w.poolIDs[k])
			}
			ex.Expect(q.HashIDs, q.InputLength, scratch, other)
			continue
		}
		req := &sender.Request{
			ID: fmt.Sprintf("trace_%d", q.Line), Phase: sender.PhaseMeasured, Endpoint: sender.Completions,
			MaxTokens: maxTokens(q.OutputLength),
			// The salt is in the blocks' contents: nothing is prepended.
			Verbatim: true,
		}
		// Only the block cache outlives the prompt. Expectations follow
		// release order: file order.
		scratch = blocks.Prompt(scratch[:0], q.HashIDs, q.InputLength)
		ids := make([]uint32, len(scratch))
		for i, k := range scratch {
			ids[i] = w.poolIDs[k]
		}
		expected, lru := ex.Expect(q.HashIDs, q.InputLength, scratch, ids)
		req.Expect = &sender.TraceExpectation{ExpectedCachedTokens: expected, ExpectedCachedTokensLRU: lru, InputTokens: q.InputLength}
		if w.mode == modeTokens {
			req.PromptIDs = ids
		} else {
			req.Prompt = w.text(scratch)
		}
		if w.ignoreEOS {
			req.ExtraBody = map[string]any{"ignore_eos": true}
		}
		select {
		case ready <- preparedRequest{req: req, due: due}:
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// lineSet is a set of line numbers, one bit each.
type lineSet []uint64

func (s *lineSet) add(n int) {
	for n/64 >= len(*s) {
		*s = append(*s, 0)
	}
	(*s)[n/64] |= 1 << (n % 64)
}

func (s lineSet) has(n int) bool { return n/64 < len(s) && s[n/64]&(1<<(n%64)) != 0 }

// scaled is a span of trace time on the replay's clock. Timestamps are
// bounded and never go back (the reader), and the speedup's range with
// the check in newTraceReplay keeps the result within a run's longest
// duration.
func (w *TraceReplay) scaled(d time.Duration) time.Duration {
	return time.Duration(min(float64(d)/w.speedup, float64(config.MaxDurationSeconds*time.Second)))
}

// sleepUntil waits for t; false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (w *TraceReplay) add(r *sender.Result) {
	w.mu.Lock()
	defer w.mu.Unlock()
	a := &w.agg
	a.sent++
	if a.firstSubmit == 0 || r.SubmitTime < a.firstSubmit {
		a.firstSubmit = r.SubmitTime
	}
	a.lastSubmit = max(a.lastSubmit, r.SubmitTime)
	e := r.TraceExpectation
	if e != nil && !r.Successful {
		a.failed++
	}
	if e == nil || r.CacheState == sender.StateUnverified || r.PromptTokens == nil || r.CachedTokens == nil {
		if e != nil && r.Successful {
			a.noReceipt++
		}
		return
	}
	a.valid++
	a.input += e.InputTokens
	a.prompt += *r.PromptTokens
	a.cached += *r.CachedTokens
	a.expected += e.ExpectedCachedTokens
	ref := e.ExpectedCachedTokens
	if e.ExpectedCachedTokensLRU != nil {
		a.expectedLRU += *e.ExpectedCachedTokensLRU
		ref = *e.ExpectedCachedTokensLRU
	}
	if *r.CachedTokens < ref-w.engineBlock {
		a.below++
	}
	a.deviation = append(a.deviation, *r.CachedTokens-ref)
}

// ShardOf: line l of the trace (trace_{l}) is sent by the shard l mod
// count, unless the format has conversations (bailian), which are split
// whole by their root's chat_id, which the id does not hold.
func (w *TraceReplay) ShardOf(id string, count int) (int, bool) {
	n, ok := idNumbers(id, "trace_")
	if !ok {
		return 0, false
	}
	if w.format != trace.Mooncake {
		return AnyShard, true
	}
	return n[0] % count, true
}

// Observe adds a request as its line records it (kvbench merge). A line
// does not hold the trace's input_length: its prompt_tokens stands for
// it where the prompt mode makes them equal (exact, verified); in the
// estimated mode it is unknown, and so are the expected hit ratios.
func (w *TraceReplay) Observe(r *sender.Result) {
	if r.Phase != sender.PhaseMeasured {
		return
	}
	if e := r.TraceExpectation; e != nil && e.InputTokens == 0 && r.PromptTokens != nil && w.exactness != estimated {
		x := *e
		x.InputTokens = *r.PromptTokens
		c := *r
		c.TraceExpectation = &x
		r = &c
	}
	w.add(r)
}

// AddShardBlock takes what the lines do not say from a shard's workload
// block: what its validation pass counted and learned of the file and
// the engine. The lines of the trace are the same in every shard, so its
// invalid lines and span are too; each shard skips its own too-long
// requests. A merge of shards that settled on different prompt modes
// keeps the least exact.
func (w *TraceReplay) AddShardBlock(block []byte) error {
	var b struct {
		SkippedInvalid *int     `json:"skipped_invalid"`
		SkippedTooLong *int     `json:"skipped_too_long"`
		Mode           string   `json:"prompt_mode"`
		Exactness      string   `json:"prompt_exactness"`
		TraceSpan      *float64 `json:"trace_span_s"`
		Format         string   `json:"format"`
		BlockSize      *int     `json:"block_size"`
		KVBudget       *int     `json:"kv_budget_tokens"`
		MaxInput       *int     `json:"max_input_tokens"`
	}
	if err := json.Unmarshal(block, &b); err != nil {
		return err
	}
	if b.Mode == "" || b.Exactness == "" || b.TraceSpan == nil || b.SkippedInvalid == nil || b.SkippedTooLong == nil {
		return errors.New("not a trace-replay block (no prompt_mode, prompt_exactness, trace_span_s or skipped counts)")
	}
	const most = 1 << 40 // lines or tokens: beyond any trace
	for _, n := range []*int{b.SkippedInvalid, b.SkippedTooLong, b.BlockSize, b.KVBudget, b.MaxInput} {
		if n != nil && (*n < 0 || *n > most) {
			return fmt.Errorf("a count of %d is out of range", *n)
		}
	}
	if *b.TraceSpan < 0 || *b.TraceSpan > 1e9 { // a Duration holds 292 years
		return fmt.Errorf("trace_span_s %g is out of range", *b.TraceSpan)
	}
	rank := map[string]int{"": 3, exact: 2, verified: 1, estimated: 0}
	r, known := rank[b.Exactness]
	if !known || b.Mode != modeTokens && b.Mode != modeText {
		return fmt.Errorf("prompt mode %q (%q) is none of kvbench's", textclean.Line(b.Mode), textclean.Line(b.Exactness))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if r < rank[w.exactness] {
		w.mode, w.exactness = b.Mode, b.Exactness
	}
	w.skippedInvalid = max(w.skippedInvalid, *b.SkippedInvalid)
	w.skippedTooLong += *b.SkippedTooLong
	w.traceSpan = max(w.traceSpan, time.Duration(*b.TraceSpan*float64(time.Second)))
	if f := trace.Format(b.Format); w.format == "" && (f == trace.Mooncake || f == trace.Bailian) {
		w.format = f
	}
	if b.BlockSize != nil && w.block == 0 {
		w.block = *b.BlockSize
	}
	// The run's own figures, null when it had none (no KV budget, no
	// input limit).
	w.lruTokens, w.maxInput = 0, 0
	if b.KVBudget != nil {
		w.lruTokens = *b.KVBudget
	}
	if b.MaxInput != nil {
		w.maxInput = *b.MaxInput
	}
	return nil
}

func tokenRatio(num, den int) *float64 {
	if den <= 0 {
		return nil
	}
	v := float64(num) / float64(den)
	return &v
}

// nearestRank is the p-th percentile of sorted xs (nil when empty).
func nearestRank(xs []int, p float64) *int {
	if len(xs) == 0 {
		return nil
	}
	k := int(float64(len(xs))*p/100+0.999999999) - 1
	v := xs[min(max(k, 0), len(xs)-1)]
	return &v
}

func (w *TraceReplay) Outcome() Outcome {
	w.mu.Lock()
	a := w.agg
	dev := slices.Clone(a.deviation)
	w.mu.Unlock()
	slices.Sort(dev)
	var expLRU *float64
	if w.lruTokens > 0 {
		expLRU = tokenRatio(a.expectedLRU, a.input)
	}
	var replaySpan *float64
	if a.sent > 0 {
		s := a.lastSubmit - a.firstSubmit
		replaySpan = &s
	}
	expected := tokenRatio(a.expected, a.input)
	observed := tokenRatio(a.cached, a.prompt)
	block := record.Ordered{
		{Key: "requests", Value: a.sent},
		{Key: "skipped_invalid", Value: w.skippedInvalid},
		{Key: "skipped_too_long", Value: w.skippedTooLong},
		{Key: "prompt_mode", Value: w.mode},
		{Key: "prompt_exactness", Value: w.exactness},
		{Key: "expected_hit_ratio", Value: expected},
		{Key: "expected_hit_ratio_lru", Value: expLRU},
		{Key: "observed_hit_ratio", Value: observed},
		{Key: "below_expected", Value: a.below},
		{Key: "deviation_tokens", Value: record.Ordered{{Key: "p50", Value: nearestRank(dev, 50)}, {Key: "p95", Value: nearestRank(dev, 95)}}},
		{Key: "trace_span_s", Value: w.traceSpan.Seconds()},
		{Key: "replay_span_s", Value: replaySpan},
		{Key: "format", Value: string(w.format)},
		{Key: "block_size", Value: w.block},
		{Key: "engine_block_size", Value: w.engineBlock},
		{Key: "speedup", Value: w.speedup},
		{Key: "kv_budget_tokens", Value: nullIfZero(w.lruTokens)},
		{Key: "max_input_tokens", Value: nullIfZero(w.maxInput)},
		{Key: "requests_with_receipts", Value: a.valid},
		{Key: "expectation", Value: w.expectation(a, expected, expLRU, observed)},
	}
	ref := "unbounded"
	if w.lruTokens > 0 {
		ref = "LRU"
	}
	rows := []report.Row{
		{Label: "Trace file", Value: filepath.Base(w.file)},
		{Label: "Format / block size", Value: fmt.Sprintf("%s / %d", w.format, w.block)},
		{Label: "Requests replayed", Value: report.Int(a.sent)},
		{Label: "Skipped invalid / too long", Value: fmt.Sprintf("%d / %d", w.skippedInvalid, w.skippedTooLong)},
		{Label: "Prompt mode", Value: w.mode + " (" + w.exactness + ")"},
		{Label: "Expected hit ratio (%)", Value: report.Percent(expected)},
		{Label: "Expected hit ratio, LRU (%)", Value: report.Percent(expLRU)},
		{Label: "Observed hit ratio (%)", Value: report.Percent(observed)},
		{Label: "Below expected (" + ref + ")", Value: report.Int(a.below)},
		{Label: "Deviation p50 / p95 (tokens)", Value: optInt(nearestRank(dev, 50)) + " / " + optInt(nearestRank(dev, 95))},
		{Label: "Trace / replay span (s)", Value: fmt.Sprintf("%.2f / %s", w.traceSpan.Seconds(), report.OptFloat(replaySpan))},
	}
	return Outcome{Block: block, Sections: []report.Section{{Title: "Trace Replay", Rows: rows}}}
}

// expectation: every request's cached tokens reach what the trace's
// prefix sharing predicts (with an LRU cache of the KV budget when one
// is known, else unbounded), within one engine block; more is fine (a
// larger cache, hits the prediction does not count).
func (w *TraceReplay) expectation(a traceAgg, expected, expLRU, observed *float64) *record.Expectation {
	ref, pred := "unbounded", expected
	if w.lruTokens > 0 {
		ref, pred = fmt.Sprintf("LRU of %s", tokens(w.lruTokens)), expLRU
	}
	j := judge{yes: a.valid - a.below, no: a.below, noReceipt: a.noReceipt, failed: a.failed}
	reason := fmt.Sprintf("requests: %d/%d at or above the prediction (within %d tokens)%s; hit ratio observed %s%%, predicted %s%%",
		j.yes, j.judged(), w.engineBlock, j.notes(), report.Percent(observed), report.Percent(pred))
	return expect(fmt.Sprintf("every request's cached tokens reach the trace's predicted prefix hits (%s)", ref), j.verdict(), reason)
}

func nullIfZero(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

func optInt(v *int) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprint(*v)
}

// PlanStreams: the trace's own arrivals (its lines over its span at
// --tr-speedup) by Little's law, unless the load flags time the releases.
func (w *TraceReplay) PlanStreams(ls load.Settings) StreamPlan {
	if w.shaped {
		return measuredStreams(ls, 0, "", w.meanLatency)
	}
	span := w.traceSpan.Seconds() / w.speedup
	if w.replayable < 2 || !(span > 0) {
		return StreamPlan{Streams: max(min(w.replayable, 1), 0)}
	}
	rate := float64(w.replayable) / span
	n := min(littleStreams(rate, w.meanLatency, 1), w.replayable)
	return StreamPlan{Streams: n, Flag: "--tr-speedup", Rate: rate, Latency: w.meanLatency}
}

// trOptions are its settings (its rows in config), decoded once.
type trOptions struct {
	File            string  `setting:"tr_file"`
	Format          string  `setting:"tr_format"`
	BlockSize       int     `setting:"tr_block_size"`
	SkipInvalid     bool    `setting:"tr_skip_invalid"`
	Speedup         float64 `setting:"tr_speedup"`
	Start           int     `setting:"tr_start"`
	Limit           int     `setting:"tr_limit"`
	MaxInputTokens  int     `setting:"tr_max_input_tokens"`
	Output          string  `setting:"tr_output"`
	PromptMode      string  `setting:"tr_prompt_mode"`
	EngineBlockSize int     `setting:"tr_engine_block_size"`
}
