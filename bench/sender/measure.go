package sender

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kvbench/kvbench/internal/textclean"
)

// Reasons a receipt is unverified.
const (
	ReasonError          = "error"
	ReasonIncomplete     = "incomplete"
	ReasonUsageMissing   = "usage_missing"
	ReasonDetailsAbsent  = "details_absent"
	ReasonInvalidCount   = "invalid_count"
	ReasonCachedGtPrompt = "cached_gt_prompt"
)

// Measure parses an SSE body and measures it as Client.Do would for a
// response that arrived with status 200: submit is when the request was
// sent, now is the clock read after every read of body (time.Now when
// nil), maxLine the SSE line limit (DefaultMaxLineBytes when <= 0). A read
// error other than io.EOF ends the stream as `incomplete`.
func Measure(body io.Reader, req *Request, submit time.Time, now func() time.Time, maxLine int) Result {
	if req == nil {
		req = &Request{}
	}
	s := getStream(submit, now, maxLine, req.KeepText)
	defer putStream(s)
	s.reserve(req.MaxTokens)
	if err := s.consume(body); err != nil {
		s.fail(ErrIncomplete, "read: "+err.Error(), s.now())
	}
	return s.result(req, 0)
}

// vals holds every value a Result points to, so that filling a Result
// costs one allocation rather than one per field.
type vals struct {
	f [16]float64
	i [4]int
	s [6]string
}

// result derives every figure of the record from the parsed stream.
func (s *stream) result(req *Request, status int) Result {
	var r Result
	s.fill(&r, req, status)
	return r
}

// fill is result writing into r: Do fills its caller's Result in place,
// so no Result-sized temporaries deepen the stack of each of thousands of
// request goroutines.
func (s *stream) fill(r *Result, req *Request, status int) {
	v := new(vals)
	fi := 0
	f := func(x float64) *float64 {
		p := &v.f[fi]
		fi++
		*p = x
		return p
	}
	*r = Result{
		RequestID:      req.ID,
		Phase:          req.Phase,
		Documents:      req.Documents,
		HTTPStatus:     status,
		Submit:         s.submit,
		Finish:         s.finish,
		Complete:       s.complete,
		Chunks:         s.chunks,
		ReasoningField: s.reasonFld,
	}
	if r.Finish.IsZero() {
		r.Finish = s.submit
	}
	submitUnix := UnixSeconds(s.submit)
	abs := func(t time.Time) float64 { return submitUnix + t.Sub(s.submit).Seconds() }
	r.SubmitTime = submitUnix
	r.FinishTime = abs(r.Finish)
	r.RequestLatency = r.Finish.Sub(s.submit).Seconds()
	if !req.Scheduled.IsZero() {
		lag := s.submit.Sub(req.Scheduled)
		r.ScheduledTime = f(submitUnix - lag.Seconds())
		r.DispatchLagMs = f(ms(lag))
	}
	if s.errCode != "" {
		v.s[0], v.s[1] = s.errCode, s.errDetail
		r.Error, r.ErrorDetail = &v.s[0], &v.s[1]
	}
	if s.hasFirst {
		r.FirstToken = s.first
		r.FirstContent = s.firstContent
		r.FirstTokenTime = f(abs(s.first))
		r.TTFT = f(s.first.Sub(s.submit).Seconds())
	}
	if s.hasUsage {
		r.PromptTokens = s.usage.prompt.ptr(&v.i[0])
		r.CachedTokens = s.usage.cached.ptr(&v.i[1])
		r.CompletionTokens = s.usage.completion.ptr(&v.i[2])
	}
	r.CacheN = s.cacheN.ptr(&v.i[3])
	if s.hasFinish {
		v.s[2] = textclean.Line(string(s.finishWhy))
		r.FinishReason = &v.s[2]
	}
	clean := s.complete && s.errCode == ""
	completion := s.usage.completion
	if !s.hasUsage {
		completion = count{}
	}
	r.Successful = clean && (s.hasFirst || (completion.valid() && completion.v > 0))

	state, reason := s.receipt()
	r.CacheState = state
	if reason != "" {
		v.s[3] = reason
		r.UnverifiedReason = &v.s[3]
	}

	// decode speed (LMCache): output tokens over finish - first token,
	// defined only from two output tokens on (one token has no decode
	// span: its "speed" would be the [DONE] latency), and only when the
	// output arrived over more than one read: tokens that came together
	// say how fast the client read, not how fast the engine decoded.
	out := s.chunks
	if completion.valid() && completion.v > 0 {
		out = completion.v
	}
	oneRead := r.Successful && s.hasFirst && out >= 2 && s.lastArr == s.firstArr
	if oneRead {
		v.s[5] = DecodeOneRead
		r.DecodeUnmeasured = &v.s[5]
	}
	if r.Successful && s.hasFirst && !oneRead {
		if span := s.finish.Sub(s.first); span > 0 && out >= 2 {
			r.DecodeSpeed = f(float64(out) / span.Seconds())
		}
	}
	if clean && completion.valid() && s.chunks > 0 {
		r.TokensPerChunk = f(float64(completion.v) / float64(s.chunks))
	}
	// ITL and round gaps: a chunk of k tokens is k tokens arriving
	// together, so of tokens-1 samples, chunks-1 are the chunk gaps and
	// tokens-chunks are zeros.
	if clean && !oneRead && completion.valid() && s.chunks >= 2 && completion.v >= s.chunks {
		tokens, n := completion.v, s.chunks
		span := s.lastArr - s.firstArr
		var gaps []time.Duration
		if !s.spilled {
			// The gaps overwrite the arrivals in place (gap k needs only
			// arrivals k and k+1, neither overwritten yet): no scratch
			// slice per pooled stream.
			gaps = s.arrivals[:n-1]
			for k := range gaps {
				gaps[k] = s.arrivals[k+1] - s.arrivals[k]
			}
			if req.KeepGaps {
				r.RoundGapsMs = make([]float64, len(gaps))
				for k, g := range gaps {
					r.RoundGapsMs[k] = ms(g)
				}
			}
			slices.Sort(gaps)
		}
		zeros := tokens - n
		itl := func(p int) float64 {
			k := nearestRank(tokens-1, p)
			if k <= zeros {
				return 0
			}
			return ms(s.gapRank(gaps, k-zeros))
		}
		r.ITLMeanMs = f(ms(span) / float64(tokens-1))
		r.ITLP50Ms = f(itl(50))
		r.ITLP95Ms = f(itl(95))
		r.RoundGapP50Ms = f(ms(s.gapRank(gaps, nearestRank(n-1, 50))))
		r.RoundGapP95Ms = f(ms(s.gapRank(gaps, nearestRank(n-1, 95))))
		if s.spilled && req.KeepGaps {
			// The histogram leaves with the result; the pooled stream
			// makes itself another when it needs one.
			r.RoundGapHist, s.hist = s.hist, nil
		}
	}
	if state == StateCold && s.hasFirst {
		if ttft := s.first.Sub(s.submit).Seconds(); ttft > 0 {
			r.PrefillTPS = f(float64(s.usage.prompt.v) / ttft)
		}
	}
	// Fingerprints: complete streams with some non-empty text only.
	if clean && s.hasOutput {
		d := s.contentH.Sum(s.digests[:0])
		d = s.reasonH.Sum(d)
		sum := sha256.Sum256(d)
		var hx [2 * sha256.Size]byte
		hex.Encode(hx[:], sum[:])
		v.s[4] = string(hx[:])
		r.OutputSHA256 = &v.s[4]
		if s.tokenSHALn > 0 {
			t := string(s.tokenSHA[:s.tokenSHALn])
			r.TokenSHA = &t
		}
	}
	if req.KeepText {
		// An engine may echo the key into its reply; the text can end
		// up in a file (rag-qa-quality's answers), so it is redacted
		// too (not cleaned: that is for whoever prints it).
		r.Text = s.red.redact(string(s.text))
	}
}

// gapRank is the k-th smallest chunk gap (1-based): from the sorted
// exact gaps, or the histogram once the stream spilled.
func (s *stream) gapRank(sorted []time.Duration, k int) time.Duration {
	if s.spilled {
		return s.hist.Rank(uint64(k))
	}
	return sorted[k-1]
}

// receipt decides the observed cache state. Precedence of the
// unverified reasons, first match wins: error (any error but
// `incomplete`), incomplete, usage_missing, details_absent, invalid_count,
// cached_gt_prompt. details_absent covers an absent or null
// prompt_tokens_details and an absent or null cached_tokens inside it.
func (s *stream) receipt() (state, reason string) {
	u := s.usage
	switch {
	case s.errCode != "" && s.errCode != ErrIncomplete:
		return StateUnverified, ReasonError
	case !s.complete:
		return StateUnverified, ReasonIncomplete
	case !s.hasUsage:
		return StateUnverified, ReasonUsageMissing
	case u.cached.st == countAbsent || u.cached.st == countNull:
		return StateUnverified, ReasonDetailsAbsent
	case !u.prompt.valid() || !u.cached.valid():
		return StateUnverified, ReasonInvalidCount
	case u.cached.v > u.prompt.v:
		return StateUnverified, ReasonCachedGtPrompt
	case u.cached.v == 0:
		return StateCold, ""
	default:
		return StateReused, ""
	}
}

// nearestRank is the 1-based nearest rank of percentile p among n sorted
// samples: ceil(p*n/100), at least 1, in integers (no float rounding at
// exact ranks, no overflow for absurd token counts).
func nearestRank(n, p int) int {
	k := n/100*p + (n%100*p+99)/100
	return max(1, min(k, n))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// The record's absolute times are one wall-clock reading plus monotonic
// offsets from it, so the interval between any two of them is what the
// monotonic clock measured. time.Now reads the two clocks one after the
// other; a thread descheduled between the reads (a loaded machine, a VM's
// stolen time) gives that one reading's wall time tens of microseconds of
// its own, and a stepped wall clock would move half a run.
var (
	wallAnchor     = time.Now()
	wallAnchorUnix = float64(wallAnchor.Unix()) + float64(wallAnchor.Nanosecond())/1e9
)

// UnixSeconds is t in seconds since the Unix epoch on the record's clock:
// the process's one wall-clock reading plus t's monotonic offset from it.
func UnixSeconds(t time.Time) float64 {
	return wallAnchorUnix + t.Sub(wallAnchor).Seconds()
}

// CompareFingerprint compares two results' fingerprints: token_sha when
// tokens is true, else output_sha256. It returns nil (unverified) when
// either side is missing, failed, incomplete or has no hash: a missing
// hash is never a pass.
func CompareFingerprint(a, b *Result, tokens bool) *bool {
	pick := func(r *Result) *string {
		if r == nil || !r.Successful || !r.Complete || r.Error != nil {
			return nil
		}
		if tokens {
			return r.TokenSHA
		}
		return r.OutputSHA256
	}
	ha, hb := pick(a), pick(b)
	if ha == nil || hb == nil {
		return nil
	}
	eq := *ha == *hb
	return &eq
}

// errorDetail turns an OpenAI-style error body into one line, "message
// (type: T, code: C)", or the body itself when it says nothing useful;
// what names the source when the body is empty. The text is left whole
// for the redactor (stream.fail), which cleans and truncates it.
func errorDetail(body []byte, what string) string {
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err == nil {
		src := doc
		if e, ok := doc["error"].(map[string]any); ok {
			src = e
		} else if e, ok := doc["error"].(string); ok {
			return e
		}
		msg := scalar(src["message"])
		if msg == "" {
			msg = scalar(doc["detail"])
		}
		if msg == "" {
			if d, ok := doc["detail"]; ok && d != nil {
				b, _ := json.Marshal(d)
				msg = string(b)
			}
		}
		var extra []string
		if t := scalar(src["type"]); t != "" {
			extra = append(extra, "type: "+t)
		}
		if c := scalar(src["code"]); c != "" {
			extra = append(extra, "code: "+c)
		}
		out := msg
		if len(extra) > 0 {
			if out != "" {
				out += " "
			}
			out += "(" + strings.Join(extra, ", ") + ")"
		}
		if out != "" {
			return out
		}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return what
	}
	return string(body)
}

func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return fmt.Sprint(x)
	case bool:
		return fmt.Sprint(x)
	}
	return ""
}
