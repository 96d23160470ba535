package sender

import "time"

// Endpoint selects the OpenAI route a request goes to.
type Endpoint string

const (
	// Chat is /v1/chat/completions with a messages array.
	Chat Endpoint = "chat"
	// Completions is /v1/completions with a prompt (string or token ids).
	Completions Endpoint = "completions"
)

// Phases a request can belong to (spec/record.md).
const (
	PhaseWarmup     = "warmup"
	PhaseMeasured   = "measured"
	PhaseFirst      = "first"
	PhaseRepeated   = "repeated"
	PhaseConcurrent = "concurrent"
	PhaseReference  = "reference"
)

// DecodeOneRead is Result.DecodeUnmeasured for output that arrived in a
// single read.
const DecodeOneRead = "one_read"

// Cache states of a receipt.
const (
	StateCold       = "cold"
	StateReused     = "reused"
	StateUnverified = "unverified"
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is one request a workload wants sent.
type Request struct {
	ID       string
	Phase    string
	Endpoint Endpoint // empty: the client's default endpoint

	Messages  []Message // chat
	Prompt    string    // completions, text prompt
	PromptIDs []uint32  // completions, token-id prompt (wins over Prompt)

	MaxTokens   int
	Temperature float64        // 0 is greedy
	Seed        *int64         // sent as "seed" when set
	ExtraBody   map[string]any // merged over the client's extra body for this request only

	// Scheduled is when the workload meant to send the request (QPS
	// schedules); zero means "as soon as possible" and no dispatch lag.
	Scheduled time.Time
	// HeldBack marks a request the workload itself delayed past its
	// scheduled time (multi-round-chat waiting for a busy session): its
	// dispatch lag is recorded but is not the client's overload.
	HeldBack bool
	// Verbatim marks a prompt the user supplied word for word: the
	// runner never salts it (spec/load.md, Cache isolation).
	Verbatim bool
	// KeepText asks for the reply's content in Result.Text.
	KeepText bool
	// KeepGaps asks for the chunk gaps in Result.RoundGapsMs (pooled ITL).
	KeepGaps bool
	// Documents are the pool documents the request carries
	// (kv-tier-pressure), recorded on its line.
	Documents []int
	// Expect is trace replay's prediction for this request, recorded on
	// its line (nil for other workloads).
	Expect *TraceExpectation
}

// TraceExpectation is the cache hit a trace predicts for one request
// (spec/trace.md): the workload's own keys of its requests.jsonl line.
type TraceExpectation struct {
	// ExpectedCachedTokens is the bound with an unbounded cache.
	ExpectedCachedTokens int `json:"expected_cached_tokens"`
	// ExpectedCachedTokensLRU is the bound with an LRU cache of the KV
	// budget; nil when no budget is known.
	ExpectedCachedTokensLRU *int `json:"expected_cached_tokens_lru"`
	// InputTokens is the trace's input_length (not recorded: the line's
	// prompt_tokens is the engine's count).
	InputTokens int `json:"-"`
}

// Result is everything measured about one request. The JSON form is one
// line of requests.jsonl (spec/record.md); nil pointers are JSON null.
type Result struct {
	RequestID        string   `json:"request_id"`
	Phase            string   `json:"phase"`
	Successful       bool     `json:"successful"`
	Error            *string  `json:"error"`
	ErrorDetail      *string  `json:"error_detail"`
	ScheduledTime    *float64 `json:"scheduled_time"`
	SubmitTime       float64  `json:"submit_time"`
	FirstTokenTime   *float64 `json:"first_token_time"`
	FinishTime       float64  `json:"finish_time"`
	TTFT             *float64 `json:"ttft_s"`
	RequestLatency   float64  `json:"request_latency_s"`
	DispatchLagMs    *float64 `json:"dispatch_lag_ms"`
	PromptTokens     *int     `json:"prompt_tokens"`
	CachedTokens     *int     `json:"cached_tokens"`
	CompletionTokens *int     `json:"completion_tokens"`
	CacheN           *int     `json:"cache_n"`
	CacheState       string   `json:"cache_state"`
	UnverifiedReason *string  `json:"unverified_reason"`
	Complete         bool     `json:"complete"`
	FinishReason     *string  `json:"finish_reason"`
	Chunks           int      `json:"chunks"`
	DecodeSpeed      *float64 `json:"decode_speed"`
	ITLMeanMs        *float64 `json:"itl_mean_ms"`
	ITLP50Ms         *float64 `json:"itl_p50_ms"`
	ITLP95Ms         *float64 `json:"itl_p95_ms"`
	RoundGapP50Ms    *float64 `json:"round_gap_p50_ms"`
	RoundGapP95Ms    *float64 `json:"round_gap_p95_ms"`
	TokensPerChunk   *float64 `json:"tokens_per_chunk"`
	PrefillTPS       *float64 `json:"prefill_tps"`
	OutputSHA256     *string  `json:"output_sha256"`
	TokenSHA         *string  `json:"token_sha"`
	// Retries is 1 when the request was sent a second time on a fresh
	// connection after its reused connection failed before any response
	// byte (spec/record.md, Connections), else 0.
	Retries int `json:"retries"`
	// SLOMet is whether the request met the run's --slo (null without one);
	// the runner judges it before the line is written.
	SLOMet *bool `json:"slo_met"`
	// DecodeUnmeasured is DecodeOneRead when the request succeeded with
	// two output tokens or more that all arrived in one read: decode
	// speed, ITL, TPOT and round gaps are null then, since no decode
	// interval was seen (spec/record.md). Absent from the line otherwise.
	DecodeUnmeasured *string `json:"decode_unmeasured,omitempty"`
	// The workload's own keys, after the common ones; a nil pointer
	// leaves them out of the line.
	*TraceExpectation
	// Documents are the pool documents the request carried, in order
	// (kv-tier-pressure's own key; absent for other workloads).
	Documents []int `json:"documents,omitempty"`
	// Shard is the index of the shard that sent the request, on the lines
	// of a sharded run only; it stays the last key (spec/record.md).
	Shard *int `json:"shard,omitempty"`

	// Not part of the record.

	// Text is the reply's content when Request.KeepText was set.
	Text string `json:"-"`
	// RoundGapsMs are the gaps between consecutive content chunks (ms),
	// kept when Request.KeepGaps was set and the ITL figures are defined.
	// Pooled ITL adds tokens-chunks zeros to these.
	RoundGapsMs []float64 `json:"-"`
	// RoundGapHist holds the same gaps instead of RoundGapsMs (nil then)
	// for a stream of more chunks than a stream keeps arrival times for
	// (16384): memory per request stays bounded whatever the engine sends.
	RoundGapHist *GapHistogram `json:"-"`
	// HTTPStatus is the response status (0 when no response arrived).
	HTTPStatus int `json:"-"`
	// ReasoningField names the reasoning field seen ("reasoning_content",
	// "reasoning" or "").
	ReasoningField string `json:"-"`
	// Submit, FirstToken and Finish are monotonic-clock instants.
	Submit, FirstToken, Finish time.Time `json:"-"`
	// FirstContent is the first content chunk's arrival, after any
	// reasoning (zero when no content came): time to first output token.
	FirstContent time.Time `json:"-"`
}

// Measured reports whether the result counts in the `results` block:
// every phase except warmup and reference.
func (r *Result) Measured() bool {
	return r.Phase != PhaseWarmup && r.Phase != PhaseReference
}
