package workload

import (
	"context"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/bench/sender"
)

// Words that are one token on common BPE tokenizers.
const (
	wordHi   = "hi"
	wordTell = "tell"
	wordHelp = "help"
)

// repeatWord returns n copies of w joined by single spaces.
func repeatWord(w string, n int) string {
	if n <= 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(n * (len(w) + 1))
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return b.String()
}

// atLeast1 is LMCache's sizing rule: truncation toward zero, floor 1.
func atLeast1(x float64) int {
	n := int(math.Trunc(x))
	if n < 1 {
		return 1
	}
	return n
}

// runBounded sends reqs in order with at most n in flight and calls
// onDone (serialised) for each finished request. Each request is
// released (env.Release) in order once a slot is free; one that had to
// wait for a slot is marked HeldBack. It stops dispatching when ctx is
// done and returns once every sent request has finished.
func runBounded(ctx context.Context, env Env, reqs []*sender.Request, n int, onDone func(sender.Result)) {
	runStream(ctx, env, slices.Values(reqs), n, onDone)
}

// runStream is runBounded over the requests next yields, taken one at a
// time as each is dispatched: nothing past the look-ahead of next is
// built before its turn. The requests go out from at most n workers,
// started as the concurrency first needs them and kept until the end, so
// a request does not pay for a new goroutine growing its stack through
// the whole send path, as one goroutine per request did.
func runStream(ctx context.Context, env Env, next iter.Seq[*sender.Request], n int, onDone func(sender.Result)) {
	if n < 1 {
		n = 1
	}
	// idle holds the hand-off channel of each worker waiting for work; a
	// worker that finds it full (a burst of more than maxIdle ending
	// together) ends instead.
	const maxIdle = 4096
	idle := make(chan chan *sender.Request, min(n, maxIdle))
	var workers []chan *sender.Request
	var live atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	work := func(in chan *sender.Request) {
		defer wg.Done()
		defer live.Add(-1)
		for req := range in {
			res, ok := env.Send(ctx, req)
			if ok && onDone != nil {
				mu.Lock()
				onDone(res)
				mu.Unlock()
			}
			select {
			case idle <- in:
			default:
				return
			}
		}
	}
	for req := range next {
		var w chan *sender.Request
		select {
		case w = <-idle:
		default:
			if live.Load() < int64(n) {
				w = make(chan *sender.Request, 1)
				workers = append(workers, w)
				live.Add(1)
				wg.Add(1)
				go work(w)
				break
			}
			req.HeldBack = true
			select {
			case w = <-idle:
			case <-ctx.Done():
			}
		}
		if w == nil || ctx.Err() != nil || !env.release(ctx, req) {
			break
		}
		w <- req
	}
	for _, w := range workers {
		close(w)
	}
	wg.Wait()
}

// lookAhead is how many requests ahead builds before the one dispatched.
const lookAhead = 64

// ahead yields build(0) .. build(count-1) in order, built by a goroutine
// of their own at most lookAhead before the one taken, so building a
// request overlaps the wait for its release and never counts as its
// dispatch lag. build returns nil for an index it skips. The builder
// stops when the consumer stops taking or ctx ends.
func ahead(ctx context.Context, count int, build func(i int) *sender.Request) iter.Seq[*sender.Request] {
	return func(yield func(*sender.Request) bool) {
		out := make(chan *sender.Request, lookAhead)
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer close(out)
			for i := 0; i < count; i++ {
				r := build(i)
				if r == nil {
					continue
				}
				select {
				case out <- r:
				case <-stop:
					return
				case <-ctx.Done():
					return
				}
			}
		}()
		defer func() { close(stop); <-done }()
		for r := range out {
			if !yield(r) {
				return
			}
		}
	}
}

// runSequential sends reqs one after another.
func runSequential(ctx context.Context, env Env, reqs []*sender.Request, onDone func(sender.Result)) {
	runBounded(ctx, env, reqs, 1, onDone)
}

// tally counts what the receipts of a set of requests observed.
type tally struct {
	Requests     int      `json:"requests"`
	Failed       int      `json:"failed"`
	Cold         int      `json:"cold"`
	Reused       int      `json:"reused"`
	Unverified   int      `json:"unverified"`
	PromptTokens int      `json:"prompt_tokens"`
	CachedTokens int      `json:"cached_tokens"`
	HitRatio     *float64 `json:"hit_ratio"`
	MeanTTFTms   *float64 `json:"mean_ttft_ms"`

	ttftSum float64
	ttftN   int
	valid   int
}

func (t *tally) add(r *sender.Result) {
	t.Requests++
	if !r.Successful {
		t.Failed++
	}
	switch r.CacheState {
	case sender.StateCold:
		t.Cold++
	case sender.StateReused:
		t.Reused++
	default:
		t.Unverified++
	}
	if r.CacheState != sender.StateUnverified && r.PromptTokens != nil && r.CachedTokens != nil {
		t.PromptTokens += *r.PromptTokens
		t.CachedTokens += *r.CachedTokens
		t.valid++
		h := float64(t.CachedTokens) / math.Max(1, float64(t.PromptTokens))
		t.HitRatio = &h
	}
	if r.Successful && r.TTFT != nil {
		t.ttftSum += *r.TTFT * 1000
		t.ttftN++
		m := t.ttftSum / float64(t.ttftN)
		t.MeanTTFTms = &m
	}
}

// rows renders a tally as summary rows with a label prefix.
func (t *tally) rows(prefix string) []report.Row {
	rows := []report.Row{
		{Label: prefix + "requests", Value: report.Int(t.Requests)},
		{Label: prefix + "cold / reused / unverified", Value: fmt.Sprintf("%d / %d / %d", t.Cold, t.Reused, t.Unverified)},
		{Label: prefix + "hit ratio (%)", Value: report.Percent(t.HitRatio)},
		{Label: prefix + "mean TTFT (ms)", Value: report.OptFloat(t.MeanTTFTms)},
	}
	return rows
}

// meanPrompt is the observed mean prompt length of a tally.
func (t *tally) meanPrompt() *float64 {
	if t.valid == 0 {
		return nil
	}
	m := float64(t.PromptTokens) / float64(t.valid)
	return &m
}

// setPrompt fills the completions prompt from the messages, so every
// workload also runs with --endpoint completions.
func setPrompt(r *sender.Request) {
	if r.Endpoint != sender.Completions || r.Prompt != "" || len(r.PromptIDs) > 0 {
		return
	}
	// One copy of each message, however long the history: += would copy
	// the prompt so far once per message.
	n := 0
	for _, m := range r.Messages {
		n += len(m.Content) + 2
	}
	var b strings.Builder
	b.Grow(n)
	for i, m := range r.Messages {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(m.Content)
	}
	r.Prompt = b.String()
}
