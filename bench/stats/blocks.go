package stats

// Results is the `results` block of bench_summary.json: LMCache's
// FinalStats, field for field and in its order. The TTFT, decode-speed and
// latency figures are null when no request defines them (every request
// failed; no request produced two tokens), never a 0 that reads as a
// measurement.
type Results struct {
	TotalRequests        int      `json:"total_requests"`
	SuccessfulRequests   int      `json:"successful_requests"`
	FailedRequests       int      `json:"failed_requests"`
	ElapsedTime          float64  `json:"elapsed_time"`
	MeanTTFTms           *float64 `json:"mean_ttft_ms"`
	MeanDecodeSpeed      *float64 `json:"mean_decode_speed"`
	MeanRequestLatencyMs *float64 `json:"mean_request_latency_ms"`
	InputThroughput      float64  `json:"input_throughput"`
	OutputThroughput     float64  `json:"output_throughput"`
	TotalInputTokens     int      `json:"total_input_tokens"`
	TotalOutputTokens    int      `json:"total_output_tokens"`
	P50TTFTms            *float64 `json:"p50_ttft_ms"`
	P90TTFTms            *float64 `json:"p90_ttft_ms"`
	P99TTFTms            *float64 `json:"p99_ttft_ms"`
	P50DecodeSpeed       *float64 `json:"p50_decode_speed"`
	P90DecodeSpeed       *float64 `json:"p90_decode_speed"`
	P99DecodeSpeed       *float64 `json:"p99_decode_speed"`
	P50RequestLatencyMs  *float64 `json:"p50_request_latency_ms"`
	P90RequestLatencyMs  *float64 `json:"p90_request_latency_ms"`
	P99RequestLatencyMs  *float64 `json:"p99_request_latency_ms"`
}

// Cache is the `cache` block: the observed cache states (receipts).
type Cache struct {
	Cold              int            `json:"cold"`
	Reused            int            `json:"reused"`
	Unverified        int            `json:"unverified"`
	UnverifiedReasons map[string]int `json:"unverified_reasons"`
	PromptTokens      int            `json:"prompt_tokens"`
	CachedTokens      int            `json:"cached_tokens"`
	HitRatio          *float64       `json:"hit_ratio"`
}

// Spread is a mean with nearest-rank p50 and p95; null members when there
// were no samples.
type Spread struct {
	Mean *float64 `json:"mean"`
	P50  *float64 `json:"p50"`
	P95  *float64 `json:"p95"`
}

// MeanP50 is a mean with a nearest-rank p50; null members when there were
// no samples.
type MeanP50 struct {
	Mean *float64 `json:"mean"`
	P50  *float64 `json:"p50"`
}

// Latency is the `latency` block: the receipt latency figures.
type Latency struct {
	ITLms               Spread   `json:"itl_ms"`
	RoundGapMs          Spread   `json:"round_gap_ms"`
	TokensPerChunkMean  *float64 `json:"tokens_per_chunk_mean"`
	PrefillTPS          MeanP50  `json:"prefill_tps"`
	AggregatePrefillTPS *float64 `json:"aggregate_prefill_tps"`
	// DecodeUnmeasured counts the successful measured requests whose
	// output arrived in one read (decode_unmeasured "one_read"): their
	// decode speed, ITL and TPOT are null, left out of every decode figure.
	DecodeUnmeasured int `json:"decode_unmeasured"`
}

// Client is the `client` block: what the benchmark itself cost and how
// late it sent scheduled requests.
type Client struct {
	CPUSeconds       float64  `json:"cpu_seconds"`
	MaxDispatchLagMs *float64 `json:"max_dispatch_lag_ms"`
	P99DispatchLagMs *float64 `json:"p99_dispatch_lag_ms"`
	// Retries counts the requests of every phase that were sent a second
	// time on a fresh connection (spec/record.md, Connections).
	Retries int `json:"retries"`
	// The overload detector's figures (spec/record.md, Client overload),
	// over the measured phase: how late a timestamp could be (p99 and
	// max of the timing probe's lateness and the Go scheduler's latency),
	// the scheduler's p99 alone, the busiest one-second share of the
	// machine's CPU in percent (null where /proc/stat does not exist),
	// and whether the client could have read its sockets late, with a
	// reason each (an empty list when not). The runner fills them in
	// (bench/overload); Final leaves them null and the run not overloaded.
	TimingErrorP99Ms  *float64 `json:"timing_error_p99_ms"`
	TimingErrorMaxMs  *float64 `json:"timing_error_max_ms"`
	SchedLatencyP99Ms *float64 `json:"sched_latency_p99_ms"`
	MachineCPUBusyMax *float64 `json:"machine_cpu_busy_max"`
	Overloaded        bool     `json:"overloaded"`
	OverloadReasons   []string `json:"overload_reasons"`
}

// ClientInfo is what the runner knows about the client that the results
// do not carry.
type ClientInfo struct {
	// CPUSeconds is the process CPU time spent on the run, e.g.
	// (ProcessCPU() - cpuAtStart).Seconds().
	CPUSeconds float64
}

// Blocks are the summary blocks Final computes.
type Blocks struct {
	Results Results `json:"results"`
	Cache   Cache   `json:"cache"`
	Latency Latency `json:"latency"`
	Client  Client  `json:"client"`
	// The figures by cache state, vLLM's serving figures and the failed
	// measured requests by error code (spec/record.md, "The headline"),
	// which the summary carries as blocks of their own.
	ByCacheState ByCacheState   `json:"-"`
	Serving      Serving        `json:"-"`
	Errors       map[string]int `json:"-"`
	Speedup      Speedup        `json:"-"`
	// Series is the measured phase second by second, with the hit ratio
	// of each (the summary's `series`).
	Series []SecondPoint `json:"-"`
}
