package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/sim/kvcache"
)

// handleGenerate serves both generation endpoints: validate, draw the
// request's faults, queue, look the prompt up in the cache, wait out the
// prefill, then stream (or return) the reply at the decode pace.
func (s *Server) handleGenerate(w http.ResponseWriter, r *http.Request, kind endpoint) {
	var req generateRequest
	if !s.decode(w, r, &req) || !s.checkModel(w, req.Model) {
		return
	}
	j, err := s.parseJob(kind, &req)
	if err != nil {
		writeError(w, http.StatusBadRequest, "BadRequestError", err.Error())
		return
	}
	d := s.dice.next()
	if d.HTTP500 {
		writeError(w, http.StatusInternalServerError, "InternalServerError", "simulated internal server error (--fault-http-500)")
		return
	}
	rep := j.plan(d)

	arrival := s.clock.Now()
	if _, real := s.clock.(realClock); real && s.cfg.fixedMode() {
		// Measuring mode: from when the request's bytes came in, not from
		// when this server got round to them (rxstamp_linux.go).
		if at, ok := kernelArrival(r.Context(), arrival); ok {
			arrival = at
		}
	}
	t := s.sched.join()
	if t == nil {
		writeError(w, http.StatusTooManyRequests, "RateLimitError",
			fmt.Sprintf("the waiting queue is full (--max-waiting %d); retry later", s.cfg.MaxWaiting))
		return
	}
	ctx := r.Context()
	out := newEventWriter(w, s, kind)
	if j.stream {
		out.startStream()
	}
	if err := s.sched.wait(ctx, t); err != nil {
		return
	}
	run := &running{s: s, lookup: s.cache.Acquire(j.ids)}
	defer run.finish()
	admitted := s.clock.Now()

	lk := run.lookup
	m := s.metrics
	m.queries.Add(float64(lk.PromptTokens))
	m.hits.Add(float64(lk.Cached()))
	m.promptTokens.Add(float64(lk.PromptTokens))
	m.cachedTokens.Add(float64(lk.Cached()))
	m.cpuHits.Add(float64(lk.CPUTokens))
	if _, cpuCap := s.cache.Capacity(); cpuCap > 0 {
		// The second tier is asked for what the first one missed, as
		// LMCache's connector is; it can only continue the GPU tier's
		// chain, so its hits are a prefix too.
		m.mpRequested.Add(float64(lk.PromptTokens - lk.GPUTokens))
		m.mpHits.Add(float64(lk.CPUTokens))
	}

	firstAt := s.firstTokenAt(arrival, admitted, lk)
	if err := s.clock.SleepUntil(ctx, firstAt); err != nil {
		return
	}
	ttft := s.clock.Now().Sub(arrival)
	m.ttft.Observe(ttft.Seconds())
	if s.trace != nil {
		s.trace(requestTrace{
			PromptTokens: lk.PromptTokens, GPUTokens: lk.GPUTokens, CPUTokens: lk.CPUTokens,
			QueueWait: admitted.Sub(arrival), TTFT: ttft,
		})
	}

	usage := s.usage(lk, rep)
	if j.stream {
		s.stream(ctx, out, run, j, rep, d, usage)
	} else {
		s.respond(ctx, w, out, run, j, rep, d, usage)
	}
}

// running is an admitted request's hold on a sequence slot and its pinned
// cache blocks; finish gives both back once.
type running struct {
	s      *Server
	lookup kvcache.Lookup
	done   bool
}

func (r *running) finish() {
	if r.done {
		return
	}
	r.done = true
	r.s.cache.Release(&r.lookup)
	r.s.sched.leave()
}

// firstTokenAt is when the first token is due. The model: TTFT = queue
// wait + prefill-lane wait + uncached/prefill-tps + cpu-tier
// tokens/cpu-load-tps + base latency, all divided by --speed.
func (s *Server) firstTokenAt(arrival, admitted time.Time, lk kvcache.Lookup) time.Time {
	c := s.cfg
	switch {
	case c.ZeroLatency:
		return admitted
	case c.fixedMode():
		return arrival.Add(c.FixedTTFT)
	}
	uncached := lk.PromptTokens - lk.Cached()
	work := float64(uncached)/c.PrefillTPS + float64(lk.CPUTokens)/c.CPULoadTPS
	end := s.sched.reservePrefill(admitted, s.scale(work))
	return end.Add(s.scale(c.BaseLatency.Seconds()))
}

// chunkGap is the pause before a chunk of k tokens. Decode model: one
// sequence alone makes --decode-tps tokens per second; with n running, each
// token takes (1 + (n-1)/max-num-seqs) / decode-tps, so a full batch
// decodes each sequence at half speed.
func (s *Server) chunkGap(k int) time.Duration {
	c := s.cfg
	switch {
	case c.ZeroLatency:
		return 0
	case c.fixedMode():
		return c.FixedITL
	}
	n := s.sched.numRunning()
	slowdown := 1 + float64(max(n-1, 0))/float64(c.MaxNumSeqs)
	return s.scale(float64(k) * slowdown / c.DecodeTPS)
}

// scale turns modelled seconds into wall time under --speed.
func (s *Server) scale(seconds float64) time.Duration {
	return time.Duration(seconds / s.cfg.Speed * float64(time.Second))
}

type wireUsage struct {
	PromptTokens        int            `json:"prompt_tokens"`
	TotalTokens         int            `json:"total_tokens"`
	CompletionTokens    int            `json:"completion_tokens"`
	PromptTokensDetails *promptDetails `json:"prompt_tokens_details,omitempty"`
}

type promptDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

func (s *Server) usage(lk kvcache.Lookup, rep reply) wireUsage {
	u := wireUsage{
		PromptTokens:     lk.PromptTokens,
		CompletionTokens: rep.Tokens(),
		TotalTokens:      lk.PromptTokens + rep.Tokens(),
	}
	if cached := lk.Cached(); cached > 0 || !s.cfg.OmitZeroCached {
		u.PromptTokensDetails = &promptDetails{CachedTokens: cached}
	}
	return u
}

// piece is one streamed chunk's worth of tokens.
type piece struct {
	reasoning bool
	text      string
	tokens    int
}

// pieces cuts the reply into chunks of --tokens-per-chunk tokens, reasoning
// first; a chunk never mixes reasoning and content.
func (s *Server) pieces(rep reply, yield func(piece) bool) {
	k := s.cfg.TokensPerChunk
	var b strings.Builder
	emit := func(n int, reasoning bool, word func(int) string) bool {
		for start := 0; start < n; start += k {
			b.Reset()
			end := min(start+k, n)
			for i := start; i < end; i++ {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(word(i))
			}
			if !yield(piece{reasoning: reasoning, text: b.String(), tokens: end - start}) {
				return false
			}
		}
		return true
	}
	if emit(rep.reasoning, true, rep.reasoningWord) {
		emit(rep.content, false, rep.word)
	}
}

// stream sends the reply as server-sent events. The faults of the draw
// strike after the chunk that reaches their point in the reply.
func (s *Server) stream(ctx context.Context, out *eventWriter, run *running, j *job, rep reply, d draw, usage wireUsage) {
	total := rep.Tokens()
	midAt := faultPoint(d.MidstreamAt, total)
	truncAt := faultPoint(d.TruncateAt, total)
	malAt := faultPoint(d.MalformedAt, total)
	stallAt := faultPoint(d.StallAt, total)
	malSent, stalled := false, false

	if j.kind == endpointChat {
		out.roleChunk()
	}
	sent := 0
	next := s.clock.Now()
	first := true
	ok := true
	s.pieces(rep, func(p piece) bool {
		if !first {
			next = next.Add(s.chunkGap(p.tokens))
			if s.clock.SleepUntil(ctx, next) != nil {
				ok = false
				return false
			}
		}
		first = false
		s.metrics.genTokens.Add(float64(p.tokens))
		out.textChunk(p)
		sent += p.tokens
		switch {
		case d.Midstream && sent >= midAt:
			out.errorEvent("simulated mid-stream engine failure (--fault-midstream-error)")
			ok = false
		case d.Truncate && sent >= truncAt:
			ok = false
		}
		if !ok || out.err != nil {
			ok = false
			return false
		}
		if d.Malformed && !malSent && sent >= malAt {
			malSent = true
			out.malformedChunk()
		}
		if d.Stall && !stalled && sent >= stallAt && sent < total {
			stalled = true
			next = s.clock.Now().Add(s.cfg.FaultStall)
			if s.clock.SleepUntil(ctx, next) != nil {
				ok = false
				return false
			}
		}
		return true
	})
	if !ok || out.err != nil {
		return
	}
	if d.Stall && !stalled {
		// The whole reply fitted before the stall point (one chunk): stall
		// before the final chunk instead.
		if s.clock.SleepUntil(ctx, s.clock.Now().Add(s.cfg.FaultStall)) != nil {
			return
		}
	}
	run.finish()
	s.metrics.requestSuccess.WithLabelValues(rep.finish).Inc()
	out.finishChunk(rep.finish)
	if j.includeUsage && !d.DropUsage {
		out.usageChunk(usage)
	}
	out.done()
}

// respond sends a non-streaming reply after the whole decode time. Faults
// map to what a non-streaming client sees: a mid-stream error becomes a
// 500, truncation a connection cut inside the body, a malformed chunk an
// invalid JSON body, a stall a late answer, a dropped usage no usage field.
func (s *Server) respond(ctx context.Context, w http.ResponseWriter, out *eventWriter, run *running, j *job, rep reply, d draw, usage wireUsage) {
	var content, reasoning strings.Builder
	next := s.clock.Now()
	first := true
	s.pieces(rep, func(p piece) bool {
		if !first {
			next = next.Add(s.chunkGap(p.tokens))
		}
		first = false
		b := &content
		if p.reasoning {
			b = &reasoning
		}
		b.WriteString(p.text)
		return true
	})
	if d.Stall {
		next = next.Add(s.cfg.FaultStall)
	}
	if s.clock.SleepUntil(ctx, next) != nil {
		return
	}
	s.metrics.genTokens.Add(float64(rep.Tokens()))
	run.finish()
	if d.Midstream {
		writeError(w, http.StatusInternalServerError, "InternalServerError", "simulated engine failure (--fault-midstream-error)")
		return
	}
	s.metrics.requestSuccess.WithLabelValues(rep.finish).Inc()

	id := out.id
	created := time.Now().Unix()
	var body map[string]any
	switch j.kind {
	case endpointChat:
		msg := map[string]any{"role": "assistant", "content": content.String()}
		if reasoning.Len() > 0 {
			msg["reasoning_content"] = reasoning.String()
		}
		body = map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": s.cfg.Model,
			"choices": []map[string]any{{"index": 0, "message": msg, "logprobs": nil, "finish_reason": rep.finish}},
		}
	case endpointCompletions:
		body = map[string]any{
			"id": id, "object": "text_completion", "created": created, "model": s.cfg.Model,
			"choices": []map[string]any{{"index": 0, "text": content.String(), "logprobs": nil, "finish_reason": rep.finish}},
		}
	}
	if !d.DropUsage {
		body["usage"] = usage
	}
	raw, _ := json.Marshal(body)
	switch {
	case d.Truncate:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(raw)))
		w.WriteHeader(http.StatusOK)
		w.Write(raw[:len(raw)/2])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		panic(http.ErrAbortHandler)
	case d.Malformed:
		raw = raw[:len(raw)/2]
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(raw)))
	w.WriteHeader(http.StatusOK)
	w.Write(raw)
}
