// Package config owns kvbench's settings: one table of fields (Fields,
// this file) drives the command-line flags, the exported config JSON, the
// layering (resolve.go: defaults < config.yaml, read with viper <
// KVBENCH_* env < --config file < set flags), validation and the TUI
// form. What a setting needs beyond its type and range is an attribute of
// its Field (Exported, Derived, JSONObject, URL, RunLength, PoolWords,
// Hidden), so the code that exports, layers, validates and shows settings
// asks the field, never its name.
package config

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Kind is the value type of a field.
type Kind int

const (
	Int Kind = iota
	Float
	String
	Bool
	Duration
	IntList
	// StringList is a repeatable flag (--rag-template-kwargs a=1 --rag-template-kwargs b=2),
	// a JSON array of strings, or comma-separated text in the environment.
	StringList
)

// Workload names.
const (
	LongDocQA           = "long-doc-qa"
	MultiRoundChat      = "multi-round-chat"
	RandomPrefill       = "random-prefill"
	LongDocPermutator   = "long-doc-permutator"
	PrefixSuffixTuner   = "prefix-suffix-tuner"
	CacheProbe          = "cache-probe"
	ConcurrentExactness = "concurrent-exactness"
	TraceReplay         = "trace-replay"
	KVTierPressure      = "kv-tier-pressure"
	RAGQAQuality        = "rag-qa-quality"
)

// Workloads lists every workload in the order users see them.
var Workloads = []string{
	LongDocQA, MultiRoundChat, RandomPrefill, LongDocPermutator,
	PrefixSuffixTuner, CacheProbe, ConcurrentExactness, TraceReplay,
	KVTierPressure, RAGQAQuality,
}

// WorkloadInfo describes a workload in one line, for help and the TUI.
var WorkloadInfo = map[string]string{
	LongDocQA:           "repeated questions over long documents: does TTFT fall when a document is reused?",
	MultiRoundChat:      "concurrent chat users with growing history: is each session's history reused?",
	RandomPrefill:       "unique prompts sent at once: what does cold prefill cost?",
	LongDocPermutator:   "the same documents in different orders: is non-prefix (blended) reuse served?",
	PrefixSuffixTuner:   "a prefix pool just over a cache tier: does the tier thrash as designed?",
	CacheProbe:          "first, repeated and concurrent identical requests: proof of cold and reused prefixes",
	ConcurrentExactness: "distinct prompts on concurrent streams: are the answers the same as alone?",
	TraceReplay:         "a production trace (Mooncake, Bailian) replayed with exact prefix sharing: expected vs observed hits",
	KVTierPressure:      "a document pool larger than the first tier: does the second tier serve hits?",
	RAGQAQuality:        "passages prefilled alone, then stitched into questions: does reuse change the answers?",
}

// Prefix is each workload's flag prefix.
var Prefix = map[string]string{
	LongDocQA: "ldqa", MultiRoundChat: "mrc", RandomPrefill: "rp",
	LongDocPermutator: "ldp", PrefixSuffixTuner: "psf", CacheProbe: "cp",
	ConcurrentExactness: "ce", TraceReplay: "tr", KVTierPressure: "ktp", RAGQAQuality: "rag",
}

// NeedsTokensPerGB reports whether a workload sizes itself from the KV
// budget, i.e. the five LMCache workloads.
func NeedsTokensPerGB(workload string) bool {
	switch workload {
	case CacheProbe, ConcurrentExactness, TraceReplay, RAGQAQuality:
		return false
	}
	return true
}

// Field is one setting.
type Field struct {
	Key      string // JSON and viper key: "ldqa_document_length"
	Flag     string // flag name without dashes: "ldqa-document-length"
	Short    string // one-letter shorthand, rarely
	Workload string // "" for general settings
	Group    string // help group: "general", "engine", "output", or the workload
	Kind     Kind
	Default  any // int, float64, string, bool, time.Duration, []int or []string
	Help     string
	Choices  []string
	// Exported fields are part of the replayable config JSON.
	Exported bool
	// Hidden fields are flags left out of help and the form.
	Hidden bool
	// Derived settings are worked out by Prepare when the user gives none
	// (tokens per GB, from LMCache or the built-in engine): a null in a
	// config JSON leaves one unset, and an unset one is not range-checked.
	Derived bool
	// JSONObject settings are a JSON object kept as text (bodies merged
	// into requests): a config may give the object itself, and Validate
	// and the form refuse text that is not one.
	JSONObject bool
	// RunLength is the workload setting that fixes how long its schedule
	// dispatches, in seconds (the form shows the run's expected length).
	RunLength bool
	// PoolWords settings count pool words, as LMCache does, not tokens
	// (a pool word such as boko42 is several tokens): the form shows the
	// tokens they make beside them.
	PoolWords bool
	// URL settings may carry credentials (http://user:pass@host), split
	// off where the value enters the config (URLKeys, UserInfo).
	URL bool
	// Label settings are text shown back as it is given (a run's name, a
	// model id): cleaned for one line (textclean.Line) where a value
	// enters the config, from a flag, the environment, a file or Set.
	Label bool

	min, max         float64
	hasMin, hasMax   bool
	minOpen, maxOpen bool // strict bounds
}

func (f Field) withMin(v float64, open bool) Field {
	f.min, f.hasMin, f.minOpen = v, true, open
	return f
}

func (f Field) withMax(v float64, open bool) Field {
	f.max, f.hasMax, f.maxOpen = v, true, open
	return f
}

// Range describes the allowed values in words, for error messages.
func (f Field) Range() string {
	switch {
	case len(f.Choices) > 0:
		return "one of " + strings.Join(f.Choices, ", ")
	case f.hasMin && f.hasMax:
		lo, hi := "[", "]"
		if f.minOpen {
			lo = "("
		}
		if f.maxOpen {
			hi = ")"
		}
		return fmt.Sprintf("in %s%s, %s%s", lo, f.num(f.min), f.num(f.max), hi)
	case f.hasMin && f.minOpen:
		return "> " + f.num(f.min)
	case f.hasMin:
		return ">= " + f.num(f.min)
	case f.hasMax && f.maxOpen:
		return "< " + f.num(f.max)
	case f.hasMax:
		return "<= " + f.num(f.max)
	}
	return ""
}

// num writes a bound in the field's unit: durations as durations.
func (f Field) num(v float64) string {
	if f.Kind == Duration {
		return time.Duration(v * float64(time.Second)).String()
	}
	return num(v)
}

func num(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%g", v)
}

// Check validates one value of the field, returning an error that names
// the flag and the allowed range.
func (f Field) Check(v any) error {
	bad := func(got any) error {
		return fmt.Errorf("--%s must be %s (got %v)", f.Flag, f.Range(), got)
	}
	var x float64
	switch t := v.(type) {
	case int:
		// Integers beyond 2^53 are compared exactly, not as float64.
		if f.hasMax && f.max < 1<<62 && int64(t) > int64(f.max) || f.hasMin && f.min > -(1<<62) && int64(t) < int64(f.min) {
			return bad(v)
		}
		x = float64(t)
	case int64:
		x = float64(t)
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return bad(t)
		}
		x = t
	case time.Duration:
		x = t.Seconds()
	case string:
		if len(f.Choices) > 0 {
			for _, c := range f.Choices {
				if c == t {
					return nil
				}
			}
			return bad(fmt.Sprintf("%q", t))
		}
		return nil
	case []int:
		for _, e := range t {
			if err := f.Check(e); err != nil {
				return bad(t)
			}
		}
		return nil
	default:
		return nil
	}
	if f.hasMin && (x < f.min || (f.minOpen && x == f.min)) {
		return bad(v)
	}
	if f.hasMax && (x > f.max || (f.maxOpen && x == f.max)) {
		return bad(v)
	}
	return nil
}

func general(key, flag string, kind Kind, def any, help string) Field {
	return Field{Key: key, Flag: flag, Group: "general", Kind: kind, Default: def, Help: help}
}

func wl(workload, name string, kind Kind, def any, help string) Field {
	p := Prefix[workload]
	return Field{
		Key: p + "_" + strings.ReplaceAll(name, "-", "_"), Flag: p + "-" + name,
		Workload: workload, Group: workload, Kind: kind, Default: def, Help: help, Exported: true,
	}
}

func exported(f Field) Field { f.Exported = true; return f }

func derived(f Field) Field { f.Derived = true; return f }

func jsonObject(f Field) Field { f.JSONObject = true; return f }

func urlValued(f Field) Field { f.URL = true; return f }

func label(f Field) Field { f.Label = true; return f }

func runLength(f Field) Field { f.RunLength = true; return f }

func poolWords(f Field) Field { f.PoolWords = true; return f }

func group(g string, f Field) Field { f.Group = g; return f }

// Fields is every setting of `kvbench run`, general first, then each
// workload's in the order of spec/workloads.md.
var Fields = []Field{
	urlValued(group("engine", general("engine_url", "engine-url", String, "", "engine base `URL` (builtin starts the simulated engine in-process)"))),
	urlValued(group("engine", general("lmcache_url", "lmcache-url", String, "", "LMCache server URL: tokens-per-GB is read from its /status"))),
	exported(general("workload", "workload", String, "", "workload to run: "+strings.Join(Workloads, ", "))),
	label(exported(group("engine", general("model", "model", String, "", "model name (default: first id of GET /v1/models)")))),
	label(exported(group("engine", general("served_model_name", "served-model-name", String, "", "model `NAME` sent in requests when the engine serves an alias (default: --model)")))),
	exported(general("kv_cache_volume", "kv-cache-volume", Float, 100.0, "KV-cache budget in GB the workloads size themselves to (builtin: its GPU tier, 8)").withMin(0, true).withMax(MaxKVCacheGB, false)),
	derived(exported(general("tokens_per_gb_kvcache", "tokens-per-gb-kvcache", Int, 0, "tokens that fit in 1 GB of KV cache (or give --lmcache-url)").withMin(0, false).withMax(MaxTokensPerGB, false))),
	exported(general("seed", "seed", Int, 42, "seed of every random choice").withMin(-MaxSeed, false).withMax(MaxSeed, false)),
	exported(general("ignore_eos", "ignore-eos", Bool, false, "send ignore_eos so decoding runs to max_tokens")),
	exported(general("no_warmup", "no-warmup", Bool, false, "skip every workload's warmup phase (the measured phase still starts with clean stats)")),
	group("engine", general("api_key_env", "api-key-env", String, "", "environment variable holding the bearer key (no key is read otherwise)")),
	group("engine", Field{Key: "endpoint", Flag: "endpoint", Kind: String, Default: "chat", Choices: []string{"chat", "completions"}, Help: "chat: /v1/chat/completions; completions: /v1/completions"}),
	jsonObject(group("engine", general("extra_body", "extra-body", String, "", "JSON object merged into every request body"))),
	group("engine", general("request_timeout", "request-timeout", Duration, 10*time.Minute, "whole-request limit").withMin(0, true).withMax((24*time.Hour).Seconds(), false)),
	group("engine", general("idle_timeout", "idle-timeout", Duration, 60*time.Second, "longest gap between two stream bytes").withMin(0, true).withMax((24*time.Hour).Seconds(), false)),
	group("engine", general("max_response_bytes", "max-response-bytes", Int, 256<<20, "longest response body in `BYTES` (256 MiB); a stream past it (an engine that never sends [DONE]) fails as response_too_long").withMin(0, true).withMax(1<<40, false)),
	urlValued(group("engine", general("metrics_url", "metrics-url", String, "", "Prometheus endpoint of the engine to sample during the run"))),
	group("engine", general("no_preflight", "no-preflight", Bool, false, "skip the check before the first request (GET /v1/models answers and lists the model)")),
	general("prompt_salt", "prompt-salt", String, "auto", "`auto`: a run-unique first line in every prompt, so no earlier run's cache serves it; none: LMCache's prompts byte for byte; any other text: that fixed salt"),
	general("reset_cache", "reset-cache", Bool, false, "ask the engine to drop its prefix cache before the first request (vLLM, SGLang, llama.cpp with --slot-save-path, the simulator)"),
	{Key: "builtin_speed", Flag: "builtin-speed", Group: "engine", Kind: Float, Default: 1.0, Hidden: true,
		Help: "speed factor of the built-in engine's delays (with --engine-url builtin)", min: 0, hasMin: true, minOpen: true,
		max: 1e6, hasMax: true},
	general("shard", "shard", String, "", "run only shard `I/N` (0-based) of a run split over N processes (see kvbench merge)"),
	general("start_at", "start-at", String, "", "RFC 3339 `TIME` at which the measured phase starts; warmups run before it"),
	general("run_key", "run-key", String, "", "the `KEY` every shard of one sharded run shares and each rerun changes (salts its prompts; default: derived from the config and --start-at)"),
	group("output", general("output_dir", "output-dir", String, "", "where the run folder is created (default: the runs directory)")),
	group("output", general("no_csv", "no-csv", Bool, false, "skip bench_results.csv")),
	group("output", general("json", "json", Bool, false, "write the JSON summary (always written; kept for compatibility)")),
	group("output", Field{Key: "format", Flag: "format", Kind: String, Default: "text", Choices: []string{"text", "json"}, Help: "final summary on stdout"}),
	label(group("output", general("name", "name", String, "", "a label stored in the run record"))),
	group("output", general("repeat", "repeat", Int, 1, "run the config `N` times (2..100) into one series folder, each run with its own salt, and summarise the runs' figures with intervals (kvbench compare takes the series)").withMin(1, false).withMax(100, false)),
	group("output", general("percentiles", "percentiles", String, "50,90,99", "percentiles of the serving figures and the figures by cache state, a `LIST` of numbers in (0, 100] (vLLM's --metric-percentiles)")),
	group("output", Field{Key: "quiet", Flag: "quiet", Short: "q", Kind: Bool, Default: false, Help: "no live display (headless progress suppressed too)"}),
	group("output", general("no_interactive", "no-interactive", Bool, false, "never prompt; missing arguments are an error")),

	group("load", general("request_rate", "request-rate", String, "inf", "measured requests per `RATE` per second; inf keeps the workload's own schedule (multi-round-chat: same as --mrc-qps)")),
	group("load", Field{Key: "arrival", Flag: "arrival", Kind: String, Default: "poisson", Choices: []string{"constant", "poisson", "gamma"},
		Help: "inter-arrival gaps at --request-rate: constant (even spacing), poisson (exponential gaps) or gamma (shape --burstiness)"}),
	group("load", general("burstiness", "burstiness", Float, 1.0, "gamma shape B of the gaps (<1 burstier, >1 smoother, 1 is poisson); implies --arrival gamma").withMin(0, true).withMax(1000, false)),
	group("load", general("max_concurrency", "max-concurrency", Int, 0, "at most `N` measured requests in flight (0: no cap; a closed loop at --request-rate inf)").withMin(0, false).withMax(MaxStreams, false)),
	group("load", general("ramp_up", "ramp-up", Duration, time.Duration(0), "grow the rate (or the concurrency cap) linearly from near zero over this long").withMin(0, false).withMax(MaxDurationSeconds, false)),
	group("load", general("slo", "slo", String, "", "service-level objective, e.g. ttft=500ms,tpot=50ms,e2e=20s: per-request slo_met and the goodput block")),

	wl(LongDocQA, "document-length", Int, 10000, "tokens per document").withMin(0, true).withMax(MaxTokens, false),
	wl(LongDocQA, "query-per-document", Int, 2, "questions per document").withMin(1, false).withMax(MaxCount, false),
	func() Field {
		f := wl(LongDocQA, "shuffle-policy", String, "random", "order of the questions")
		f.Choices = []string{"random", "tile"}
		return f
	}(),
	wl(LongDocQA, "num-inflight-requests", Int, 3, "most requests in flight").withMin(1, false).withMax(MaxStreams, false),
	wl(LongDocQA, "max-output-length", Int, 128, "max_tokens of each answer").withMin(1, false).withMax(MaxTokens, false),

	wl(MultiRoundChat, "shared-prompt-length", Int, 2000, "system prompt tokens").withMin(0, false).withMax(MaxTokens, false),
	wl(MultiRoundChat, "chat-history-length", Int, 10000, "pre-filled history tokens").withMin(0, false).withMax(MaxTokens, false),
	wl(MultiRoundChat, "user-input-length", Int, 50, "tokens per user query").withMin(1, false).withMax(MaxTokens, false),
	wl(MultiRoundChat, "output-length", Int, 200, "max_tokens per answer").withMin(1, false).withMax(MaxTokens, false),
	wl(MultiRoundChat, "qps", Float, 1.0, "queries per second").withMin(0, true).withMax(MaxRate, false),
	runLength(wl(MultiRoundChat, "duration", Float, 60.0, "seconds of dispatch").withMin(0, true).withMax(MaxDurationSeconds, false)),
	func() Field {
		f := wl(MultiRoundChat, "arrival", String, "fixed", "arrival process: fixed spacing or seeded poisson")
		f.Choices = []string{"fixed", "poisson"}
		return f
	}(),

	wl(RandomPrefill, "request-length", Int, 10000, "tokens per request").withMin(0, true).withMax(MaxTokens, false),
	wl(RandomPrefill, "num-requests", Int, 50, "requests, all sent at once").withMin(1, false).withMax(MaxCount, false),

	wl(LongDocPermutator, "num-contexts", Int, 5, "context documents").withMin(1, false).withMax(1000, false),
	poolWords(wl(LongDocPermutator, "context-length", Int, 5000, "words per context, as LMCache counts it (not tokens: a pool word such as boko42 is several tokens)").withMin(0, true).withMax(MaxTokens, false)),
	wl(LongDocPermutator, "system-prompt-length", Int, 1000, "shared system prompt tokens (0 = none)").withMin(0, false).withMax(MaxTokens, false),
	wl(LongDocPermutator, "num-permutations", Int, 10, "distinct permutations (capped at N!)").withMin(1, false).withMax(MaxCount, false),
	wl(LongDocPermutator, "num-inflight-requests", Int, 1, "most requests in flight").withMin(1, false).withMax(MaxStreams, false),
	wl(LongDocPermutator, "max-output-length", Int, 128, "max_tokens of each answer").withMin(1, false).withMax(MaxTokens, false),

	wl(PrefixSuffixTuner, "context-length", Int, 8000, "tokens per request (prefix + breaker + suffix)").withMin(0, true).withMax(MaxTokens, false),
	wl(PrefixSuffixTuner, "prefix-ratio", Float, 0.8, "share of the context given to the prefix").withMin(0, true).withMax(1, true),
	wl(PrefixSuffixTuner, "thrash", Float, 20.0, "size in GB of the cache tier to overflow").withMin(0, true).withMax(MaxKVCacheGB, false),

	wl(CacheProbe, "tokens", Int, 64, "reply limit").withMin(1, false).withMax(MaxTokens, false),
	wl(CacheProbe, "repeats", Int, 2, "repeated requests").withMin(0, false).withMax(MaxCount, false),
	wl(CacheProbe, "streams", Int, 2, "concurrent requests").withMin(1, false).withMax(512, false),
	wl(CacheProbe, "prompt-file", String, "", "JSON array of token ids sent as the prompt to /v1/completions"),
	wl(CacheProbe, "expected-prompt-tokens", Int, 0, "every row's prompt_tokens must equal this (0 = unchecked)").withMin(0, false).withMax(MaxTokens, false),
	wl(CacheProbe, "require-cold", Bool, false, "the first request must be cold"),
	wl(CacheProbe, "require-reuse", Bool, false, "every repeated request must be reused"),

	wl(ConcurrentExactness, "levels", IntList, []int{1, 4, 8}, "concurrency levels").withMin(1, false).withMax(MaxStreams, false),
	wl(ConcurrentExactness, "prompts", String, "", "JSON list of {name, kind: chat|completion, prompt} (default: 16 built-in prompts)"),
	wl(ConcurrentExactness, "tokens", Int, 64, "reply limit").withMin(1, false).withMax(MaxTokens, false),
	wl(ConcurrentExactness, "reps", Int, 1, "repetitions of each cell").withMin(1, false).withMax(MaxCount, false),
	wl(ConcurrentExactness, "temperature", Float, 0.0, "sampling temperature").withMin(0, false).withMax(2, false),
	wl(ConcurrentExactness, "alone", Bool, false, "compare each request with its prompt sent alone"),
	jsonObject(wl(ConcurrentExactness, "reference-extra-body", String, "", "JSON merged into a second reference run (e.g. {\"draft\": false})")),

	wl(TraceReplay, "file", String, "", "the trace, JSON lines (required; read twice, so not stdin)"),
	choice(wl(TraceReplay, "format", String, "auto", "trace format (auto: bailian when lines have chat_id)"), "auto", "mooncake", "bailian"),
	wl(TraceReplay, "block-size", Int, 0, "tokens per hash id (0: the format's, mooncake 512, bailian 16)").withMin(0, false).withMax(MaxTokens, false),
	wl(TraceReplay, "skip-invalid", Bool, false, "count and skip invalid lines instead of stopping"),
	wl(TraceReplay, "speedup", Float, 1.0, "divide every timestamp by this").withMin(MinTraceSpeedup, false).withMax(MaxTraceSpeedup, false),
	wl(TraceReplay, "start", Int, 0, "skip the first lines of the file").withMin(0, false).withMax(1e12, false),
	wl(TraceReplay, "limit", Int, 0, "replay at most this many lines (0: all)").withMin(0, false).withMax(1e12, false),
	wl(TraceReplay, "max-input-tokens", Int, 0, "skip longer requests (0: what the engine's context allows)").withMin(0, false).withMax(MaxTokens, false),
	choice(wl(TraceReplay, "output", String, "trace", "trace: max_tokens = output_length with ignore_eos; free: without ignore_eos"), "trace", "free"),
	choice(wl(TraceReplay, "prompt-mode", String, "auto", "tokens: token-id prompts; text: one-token words; auto: tokens when the engine takes them"), "auto", "tokens", "text"),
	wl(TraceReplay, "engine-block-size", Int, 16, "the engine's KV block size: expectations are multiples of it").withMin(1, false).withMax(MaxTokens, false),

	wl(KVTierPressure, "pool-size", Int, 0, "documents in the pool (0 = derive from the LMCache server's L1 capacity x the overflow factor)").withMin(0, false).withMax(MaxCount, false),
	wl(KVTierPressure, "overflow-factor", Float, 2.0, "pool size as a multiple of the first tier, when derived").withMin(0, true).withMax(1000, false),
	wl(KVTierPressure, "docs-per-request", Int, 16, "documents each request carries (<= pool size)").withMin(1, false).withMax(MaxCount, false),
	wl(KVTierPressure, "context-length", Int, 2560, "exact tokens per document").withMin(0, true).withMax(MaxTokens, false),
	wl(KVTierPressure, "system-prompt-length", Int, 256, "system prompt tokens (0 = no system message)").withMin(0, false).withMax(MaxTokens, false),
	wl(KVTierPressure, "num-requests", Int, 200, "measured requests").withMin(1, false).withMax(MaxCount, false),
	wl(KVTierPressure, "access-skew", Float, 0.0, "document popularity skew s: weight 1/(i+1)^s (0 = uniform)").withMin(0, false).withMax(100, false),
	wl(KVTierPressure, "num-inflight-requests", Int, 8, "most requests in flight").withMin(1, false).withMax(MaxStreams, false),
	wl(KVTierPressure, "max-output-length", Int, 1, "max_tokens of each request").withMin(1, false).withMax(MaxTokens, false),

	wl(RAGQAQuality, "dataset", String, "", "musique, hotpotqa, or a local .jsonl, .json or .parquet `FILE`"),
	wl(RAGQAQuality, "num-samples", Int, 50, "samples: the first usable records in file order").withMin(1, false).withMax(MaxCount, false),
	wl(RAGQAQuality, "max-output-length", Int, 1024, "max_tokens of each answer").withMin(1, false).withMax(MaxTokens, false),
	wl(RAGQAQuality, "doc-align-tokens", Int, 256, "passages and the instruction are padded to multiples of this many tokens").withMin(1, false).withMax(MaxTokens, false),
	wl(RAGQAQuality, "template-kwargs", StringList, []string{}, "`KEY=VALUE` sent in chat_template_kwargs (repeatable; true/false and integers are typed)"),
	wl(RAGQAQuality, "output", String, "", "quality report `FILE` (default: rag_qa_quality.json in the run folder)"),
}

// Upper bounds of the numeric settings: far beyond any real engine, low
// enough that no size derived from them overflows or is allocated before
// the workload's memory estimate (bench/workload) has looked at it.
const (
	MaxTokens          = 10_000_000 // tokens in one prompt or reply
	MaxCount           = 1_000_000  // requests, questions, permutations, repetitions
	MaxStreams         = 100_000    // requests in flight
	MaxKVCacheGB       = 1_000_000  // GB of KV cache (a petabyte)
	MaxTokensPerGB     = 1 << 30    // one byte per token
	MaxRate            = 1_000_000  // requests per second
	MaxDurationSeconds = 10_000_000 // about 116 days
	MaxSeed            = 1 << 53    // exact in JSON
	MinTraceSpeedup    = 1e-3       // --tr-speedup: a trace stretched 1000x at most
	MaxTraceSpeedup    = 1e6        // --tr-speedup: 1 s of trace in 1 us at most
)

func choice(f Field, choices ...string) Field { f.Choices = choices; return f }

// Lookup finds a field by key.
func Lookup(key string) (Field, bool) {
	for _, f := range Fields {
		if f.Key == key {
			return f, true
		}
	}
	return Field{}, false
}

// WorkloadFields returns a workload's own fields in order.
func WorkloadFields(workload string) []Field {
	var out []Field
	for _, f := range Fields {
		if f.Workload == workload {
			out = append(out, f)
		}
	}
	return out
}
