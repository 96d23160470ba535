package config

import (
	"fmt"
	"strings"
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

// WorkloadSpec is what the settings know of one workload: its name, its
// one-line description, its flag prefix, its settings rows (in help's
// order) and the rules that only its own settings decide. Generic code
// asks the spec (Spec) and never compares a workload's name.
//
// The rows live here, not beside the workload's code, because every
// reader of a settings file (a run record's config.json read by compare,
// merge, reproduce) must know every key without building the workloads.
// A workload defined elsewhere registers its spec with RegisterWorkload.
type WorkloadSpec struct {
	Name   string
	Info   string // one line, for help and the form
	Prefix string // its flags' prefix: "ldqa" for --ldqa-*
	// Rows are its settings, built with Row (Key, Flag, Workload and Group
	// are filled from Prefix and Name).
	Rows []Field
	// Budget: it sizes itself from the KV-cache budget, so tokens per GB
	// is required (--tokens-per-gb-kvcache or --lmcache-url).
	Budget bool
	// UsesTokensPerGB: tokens per GB is read when it can be known even
	// though it is not required (a prediction uses it).
	UsesTokensPerGB bool
	// Rate is its own setting that is the run's request rate, nil when
	// --request-rate alone sets it.
	Rate *RateSetting
	// Validate checks rules between its own settings.
	Validate func(c *Config) error
	// CheckFiles checks what its settings name on this machine (files),
	// before anything starts; recorded configs skip it.
	CheckFiles func(c *Config) error
	// Unsplittable says why --shard with N > 1 would change what it
	// measures; "" when it can be split.
	Unsplittable string
}

// RateSetting is a workload setting that is the run's request rate: the
// rate and its arrival process when --request-rate and --arrival leave
// them to the workload.
type RateSetting struct {
	Key string // the setting: "mrc_qps"
	// Arrival is the arrival process (constant or poisson) the
	// workload's own settings give its rate.
	Arrival func(c *Config) string
}

// Flag is the rate setting's flag name, with its dashes.
func (r *RateSetting) Flag() string {
	f, _ := Lookup(r.Key)
	return "--" + f.Flag
}

// Row is one of a workload's settings, --PREFIX-NAME and key
// PREFIX_NAME (exported with the workload's config).
func Row(workload, prefix, name string, kind Kind, def any, help string) Field {
	return Field{
		Key: prefix + "_" + strings.ReplaceAll(name, "-", "_"), Flag: prefix + "-" + name,
		Workload: workload, Group: workload, Kind: kind, Default: def, Help: help, Exported: true,
	}
}

// AtLeast is f with values >= v allowed only.
func (f Field) AtLeast(v float64) Field { return f.withMin(v, false) }

// Above is f with values > v allowed only.
func (f Field) Above(v float64) Field { return f.withMin(v, true) }

// AtMost is f with values <= v allowed only.
func (f Field) AtMost(v float64) Field { return f.withMax(v, false) }

// Needed is f required: a run cannot start with it empty.
func (f Field) Needed() Field { return required(f) }

// OneOf is f with its values limited to choices.
func (f Field) OneOf(choices ...string) Field { return choice(f, choices...) }

// specs are the registered workloads by name.
var specs = map[string]WorkloadSpec{}

// Workloads lists every workload in the order users see them.
var Workloads []string

// WorkloadInfo describes a workload in one line, for help and the TUI.
var WorkloadInfo = map[string]string{}

// Prefix is each workload's flag prefix.
var Prefix = map[string]string{}

// Fields is every setting of `kvbench run`, general first, then each
// workload's in the order the workloads registered (spec/workloads.md's).
var Fields = registerBuiltins()

// registerBuiltins registers the built-in workloads in their order and
// returns every field.
func registerBuiltins() []Field {
	fields := generalFields
	for _, s := range builtinSpecs() {
		fields = register(fields, s)
	}
	return fields
}

// RegisterWorkload adds a workload's spec and rows after the ones known.
// It panics on a name or key already taken: registration is a program's
// start-up, not input.
func RegisterWorkload(s WorkloadSpec) { Fields = register(Fields, s) }

func register(fields []Field, s WorkloadSpec) []Field {
	if _, dup := specs[s.Name]; dup || s.Name == "" || s.Prefix == "" {
		panic("config: workload " + s.Name + " registered twice or without a prefix")
	}
	for _, r := range s.Rows {
		for _, f := range fields {
			if f.Key == r.Key || f.Flag == r.Flag {
				panic("config: setting " + r.Key + " registered twice")
			}
		}
		if r.Workload != s.Name {
			panic("config: setting " + r.Key + " is not built for " + s.Name)
		}
		fields = append(fields, r)
	}
	specs[s.Name] = s
	Workloads = append(Workloads, s.Name)
	WorkloadInfo[s.Name] = s.Info
	Prefix[s.Name] = s.Prefix
	return fields
}

// Spec is the registered workload's spec.
func Spec(name string) (WorkloadSpec, bool) {
	s, ok := specs[name]
	return s, ok
}

// NeedsTokensPerGB reports whether a workload sizes itself from the KV
// budget (the five LMCache workloads and kv-tier-pressure).
func NeedsTokensPerGB(workload string) bool {
	s, ok := specs[workload]
	return !ok || s.Budget
}

// UsesTokensPerGB reports whether tokens per GB is read for a workload
// when it can be known: it needs it, or predicts with it.
func UsesTokensPerGB(workload string) bool {
	s, ok := specs[workload]
	return !ok || s.Budget || s.UsesTokensPerGB
}

// RateOf is the workload's own rate setting, nil when it has none.
func RateOf(workload string) *RateSetting { return specs[workload].Rate }

// RequiredText is help's paragraph on the required flags.
func RequiredText() string {
	return fmt.Sprintf("Required: --engine-url and --workload; the LMCache workloads (all but\n"+
		"%s, %s and %s) also need\n"+
		"--tokens-per-gb-kvcache or --lmcache-url, except with --engine-url\n"+
		"builtin; %s needs --tr-file. On a terminal a guided form asks for\n"+
		"what is missing.\n", CacheProbe, ConcurrentExactness, TraceReplay, TraceReplay)
}

// builtinNames are the built-in workloads' names, in order.
func builtinNames() []string {
	var out []string
	for _, s := range builtinSpecs() {
		out = append(out, s.Name)
	}
	return out
}

// rower builds a workload's rows.
func rower(workload, prefix string) func(name string, kind Kind, def any, help string) Field {
	return func(name string, kind Kind, def any, help string) Field {
		return Row(workload, prefix, name, kind, def, help)
	}
}

// builtinSpecs are the built-in workloads, in the order of
// spec/workloads.md.
func builtinSpecs() []WorkloadSpec {
	return []WorkloadSpec{longDocQA(), multiRoundChat(), randomPrefill(), longDocPermutator(),
		prefixSuffixTuner(), cacheProbe(), concurrentExactness(), traceReplay(), kvTierPressure(), ragQAQuality()}
}

func longDocQA() WorkloadSpec {
	r := rower(LongDocQA, "ldqa")
	return WorkloadSpec{
		Name: LongDocQA, Prefix: "ldqa",
		Info:   "repeated questions over long documents: does TTFT fall when a document is reused?",
		Budget: true,
		Rows: []Field{
			r("document-length", Int, 10000, "tokens per document").withMin(0, true).withMax(MaxTokens, false),
			r("query-per-document", Int, 2, "questions per document").withMin(1, false).withMax(MaxCount, false),
			func() Field {
				f := r("shuffle-policy", String, "random", "order of the questions")
				f.Choices = []string{"random", "tile"}
				return f
			}(),
			r("num-inflight-requests", Int, 3, "most requests in flight").withMin(1, false).withMax(MaxStreams, false),
			r("max-output-length", Int, 128, "max_tokens of each answer").withMin(1, false).withMax(MaxTokens, false),
		},
	}
}

func multiRoundChat() WorkloadSpec {
	r := rower(MultiRoundChat, "mrc")
	return WorkloadSpec{
		Name: MultiRoundChat, Prefix: "mrc",
		Info:   "concurrent chat users with growing history: is each session's history reused?",
		Budget: true,
		Rate: &RateSetting{Key: "mrc_qps", Arrival: func(c *Config) string {
			if c.String("mrc_arrival") == "poisson" {
				return "poisson"
			}
			return "constant"
		}},
		Rows: []Field{
			r("shared-prompt-length", Int, 2000, "system prompt tokens").withMin(0, false).withMax(MaxTokens, false),
			r("chat-history-length", Int, 10000, "pre-filled history tokens").withMin(0, false).withMax(MaxTokens, false),
			r("user-input-length", Int, 50, "tokens per user query").withMin(1, false).withMax(MaxTokens, false),
			r("output-length", Int, 200, "max_tokens per answer").withMin(1, false).withMax(MaxTokens, false),
			r("qps", Float, 1.0, "queries per second").withMin(0, true).withMax(MaxRate, false),
			runLength(r("duration", Float, 60.0, "seconds of dispatch").withMin(0, true).withMax(MaxDurationSeconds, false)),
			func() Field {
				f := r("arrival", String, "fixed", "arrival process: fixed spacing or seeded poisson")
				f.Choices = []string{"fixed", "poisson"}
				return f
			}(),
		},
	}
}

func randomPrefill() WorkloadSpec {
	r := rower(RandomPrefill, "rp")
	return WorkloadSpec{
		Name: RandomPrefill, Prefix: "rp",
		Info:   "unique prompts sent at once: what does cold prefill cost?",
		Budget: true,
		Rows: []Field{
			r("request-length", Int, 10000, "tokens per request").withMin(0, true).withMax(MaxTokens, false),
			r("num-requests", Int, 50, "requests, all sent at once").withMin(1, false).withMax(MaxCount, false),
		},
	}
}

func longDocPermutator() WorkloadSpec {
	r := rower(LongDocPermutator, "ldp")
	return WorkloadSpec{
		Unsplittable: "its permutations of the same contexts must follow each other on one client to measure non-prefix reuse",
		Name:         LongDocPermutator, Prefix: "ldp",
		Info:   "the same documents in different orders: is non-prefix (blended) reuse served?",
		Budget: true,
		Rows: []Field{
			r("num-contexts", Int, 5, "context documents").withMin(1, false).withMax(1000, false),
			poolWords(r("context-length", Int, 5000, "words per context, as LMCache counts it (not tokens: a pool word such as boko42 is several tokens)").withMin(0, true).withMax(MaxTokens, false)),
			r("system-prompt-length", Int, 1000, "shared system prompt tokens (0 = none)").withMin(0, false).withMax(MaxTokens, false),
			r("num-permutations", Int, 10, "distinct permutations (capped at N!)").withMin(1, false).withMax(MaxCount, false),
			r("num-inflight-requests", Int, 1, "most requests in flight").withMin(1, false).withMax(MaxStreams, false),
			r("max-output-length", Int, 128, "max_tokens of each answer").withMin(1, false).withMax(MaxTokens, false),
		},
	}
}

func prefixSuffixTuner() WorkloadSpec {
	r := rower(PrefixSuffixTuner, "psf")
	return WorkloadSpec{
		Unsplittable: "its prefix pool is sized to overflow one cache tier in one rotation, and split rotations would not thrash it the same way",
		Name:         PrefixSuffixTuner, Prefix: "psf",
		Info:   "a prefix pool just over a cache tier: does the tier thrash as designed?",
		Budget: true,
		Rows: []Field{
			r("context-length", Int, 8000, "tokens per request (prefix + breaker + suffix)").withMin(0, true).withMax(MaxTokens, false),
			r("prefix-ratio", Float, 0.8, "share of the context given to the prefix").withMin(0, true).withMax(1, true),
			r("thrash", Float, 20.0, "size in GB of the cache tier to overflow").withMin(0, true).withMax(MaxKVCacheGB, false),
		},
	}
}

func cacheProbe() WorkloadSpec {
	r := rower(CacheProbe, "cp")
	return WorkloadSpec{
		Unsplittable: "its first, repeated and concurrent requests form one ordered sequence that proves the cold and reused states",
		Name:         CacheProbe, Prefix: "cp",
		Info: "first, repeated and concurrent identical requests: proof of cold and reused prefixes",

		Rows: []Field{
			r("tokens", Int, 64, "reply limit").withMin(1, false).withMax(MaxTokens, false),
			r("repeats", Int, 2, "repeated requests").withMin(0, false).withMax(MaxCount, false),
			r("streams", Int, 2, "concurrent requests").withMin(1, false).withMax(512, false),
			r("prompt-file", String, "", "JSON array of token ids sent as the prompt to /v1/completions"),
			r("expected-prompt-tokens", Int, 0, "every row's prompt_tokens must equal this (0 = unchecked)").withMin(0, false).withMax(MaxTokens, false),
			r("require-cold", Bool, false, "the first request must be cold"),
			r("require-reuse", Bool, false, "every repeated request must be reused"),
		},
	}
}

func concurrentExactness() WorkloadSpec {
	r := rower(ConcurrentExactness, "ce")
	return WorkloadSpec{
		Unsplittable: "each cell compares the answers of streams sent together from one client with the same prompts sent alone",
		Name:         ConcurrentExactness, Prefix: "ce",
		Info: "distinct prompts on concurrent streams: are the answers the same as alone?",

		Rows: []Field{
			r("levels", IntList, []int{1, 4, 8}, "concurrency levels").withMin(1, false).withMax(MaxStreams, false),
			r("prompts", String, "", "JSON list of {name, kind: chat|completion, prompt} (default: 16 built-in prompts)"),
			r("tokens", Int, 64, "reply limit").withMin(1, false).withMax(MaxTokens, false),
			r("reps", Int, 1, "repetitions of each cell").withMin(1, false).withMax(MaxCount, false),
			r("temperature", Float, 0.0, "sampling temperature").withMin(0, false).withMax(2, false),
			r("alone", Bool, false, "compare each request with its prompt sent alone"),
			jsonObject(r("reference-extra-body", String, "", "JSON merged into a second reference run (e.g. {\"draft\": false})")),
		},
	}
}

func traceReplay() WorkloadSpec {
	r := rower(TraceReplay, "tr")
	return WorkloadSpec{
		Name: TraceReplay, Prefix: "tr",
		Info: "a production trace (Mooncake, Bailian) replayed with exact prefix sharing: expected vs observed hits",
		// Trace replay needs no budget, but predicts an LRU cache's hits
		// with one when it can be known.
		UsesTokensPerGB: true,
		CheckFiles:      func(c *Config) error { return checkTraceFile(c.String("tr_file")) },

		Rows: []Field{
			required(r("file", String, "", "the trace, JSON lines (required; read twice, so not stdin)")),
			choice(r("format", String, "auto", "trace format (auto: bailian when lines have chat_id)"), "auto", "mooncake", "bailian"),
			r("block-size", Int, 0, "tokens per hash id (0: the format's, mooncake 512, bailian 16)").withMin(0, false).withMax(MaxTokens, false),
			r("skip-invalid", Bool, false, "count and skip invalid lines instead of stopping"),
			r("speedup", Float, 1.0, "divide every timestamp by this").withMin(MinTraceSpeedup, false).withMax(MaxTraceSpeedup, false),
			r("start", Int, 0, "skip the first lines of the file").withMin(0, false).withMax(1e12, false),
			r("limit", Int, 0, "replay at most this many lines (0: all)").withMin(0, false).withMax(1e12, false),
			r("max-input-tokens", Int, 0, "skip longer requests (0: what the engine's context allows)").withMin(0, false).withMax(MaxTokens, false),
			choice(r("output", String, "trace", "trace: max_tokens = output_length with ignore_eos; free: without ignore_eos"), "trace", "free"),
			choice(r("prompt-mode", String, "auto", "tokens: token-id prompts; text: one-token words; auto: tokens when the engine takes them"), "auto", "tokens", "text"),
			r("engine-block-size", Int, 16, "the engine's KV block size: expectations are multiples of it").withMin(1, false).withMax(MaxTokens, false),
		},
	}
}

func kvTierPressure() WorkloadSpec {
	r := rower(KVTierPressure, "ktp")
	return WorkloadSpec{
		Unsplittable: "its pool is written once and read back in one order to push one tier over its size, which shards would each repeat whole",
		Name:         KVTierPressure, Prefix: "ktp",
		Info:   "a document pool larger than the first tier: does the second tier serve hits?",
		Budget: true,
		Validate: func(c *Config) error {
			if pool := c.Int("ktp_pool_size"); pool > 0 && c.Int("ktp_docs_per_request") > pool {
				return fmt.Errorf("--ktp-docs-per-request must be <= --ktp-pool-size %d (got %d)", pool, c.Int("ktp_docs_per_request"))
			}
			return nil
		},
		Rows: []Field{
			r("pool-size", Int, 0, "documents in the pool (0 = derive from the LMCache server's L1 capacity x the overflow factor)").withMin(0, false).withMax(MaxCount, false),
			r("overflow-factor", Float, 2.0, "pool size as a multiple of the first tier, when derived").withMin(0, true).withMax(1000, false),
			r("docs-per-request", Int, 16, "documents each request carries (<= pool size)").withMin(1, false).withMax(MaxCount, false),
			r("context-length", Int, 2560, "exact tokens per document").withMin(0, true).withMax(MaxTokens, false),
			r("system-prompt-length", Int, 256, "system prompt tokens (0 = no system message)").withMin(0, false).withMax(MaxTokens, false),
			r("num-requests", Int, 200, "measured requests").withMin(1, false).withMax(MaxCount, false),
			r("access-skew", Float, 0.0, "document popularity skew s: weight 1/(i+1)^s (0 = uniform)").withMin(0, false).withMax(100, false),
			r("num-inflight-requests", Int, 8, "most requests in flight").withMin(1, false).withMax(MaxStreams, false),
			r("max-output-length", Int, 1, "max_tokens of each request").withMin(1, false).withMax(MaxTokens, false),
		},
	}
}

func ragQAQuality() WorkloadSpec {
	r := rower(RAGQAQuality, "rag")
	return WorkloadSpec{
		Unsplittable: "each sample's answer is scored against its prefill on the same client, and every shard would send every sample",
		Name:         RAGQAQuality, Prefix: "rag",
		Info: "passages prefilled alone, then stitched into questions: does reuse change the answers?",
		Validate: func(c *Config) error {
			for _, kv := range c.StringList("rag_template_kwargs") {
				if k, _, ok := strings.Cut(kv, "="); !ok || strings.TrimSpace(k) == "" {
					return fmt.Errorf("--rag-template-kwargs must be KEY=VALUE (got %q)", kv)
				}
			}
			return nil
		},

		Rows: []Field{
			required(r("dataset", String, "", "musique, hotpotqa, or a local .jsonl, .json or .parquet `FILE`")),
			r("num-samples", Int, 50, "samples: the first usable records in file order").withMin(1, false).withMax(MaxCount, false),
			r("max-output-length", Int, 1024, "max_tokens of each answer").withMin(1, false).withMax(MaxTokens, false),
			r("doc-align-tokens", Int, 256, "passages and the instruction are padded to multiples of this many tokens").withMin(1, false).withMax(MaxTokens, false),
			r("template-kwargs", StringList, []string{}, "`KEY=VALUE` sent in chat_template_kwargs (repeatable; true/false and integers are typed)"),
			r("output", String, "", "quality report `FILE` (default: rag_qa_quality.json in the run folder)"),
		},
	}
}
