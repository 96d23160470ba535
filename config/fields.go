// Package config owns kvbench's settings: one table of fields (Fields:
// the general ones in this file, each workload's in its spec,
// workloads.go) drives the command-line flags, the exported config JSON,
// the layering (resolve.go: defaults < config.yaml, read with viper <
// KVBENCH_* env < --config file < set flags), validation and the TUI
// form. What a setting needs beyond its type and range is an attribute
// of its Field (Exported, Derived, JSONObject, URL, RunLength, PoolWords,
// Required, Hidden), and what a workload needs is in its WorkloadSpec,
// so the code that exports, layers, validates and shows settings asks
// the field or the spec, never a name. Past the edge settings are read
// as types (Settings, Decode; settings.go).
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
	// Required settings of a workload must be given (not empty) before
	// it can run: the guided form asks for them even when the optional
	// settings are skipped.
	Required bool

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

func exported(f Field) Field { f.Exported = true; return f }

func required(f Field) Field { f.Required = true; return f }

func derived(f Field) Field { f.Derived = true; return f }

func jsonObject(f Field) Field { f.JSONObject = true; return f }

func urlValued(f Field) Field { f.URL = true; return f }

func label(f Field) Field { f.Label = true; return f }

func runLength(f Field) Field { f.RunLength = true; return f }

func poolWords(f Field) Field { f.PoolWords = true; return f }

func group(g string, f Field) Field { f.Group = g; return f }

// generalFields are the settings of every run, in help's order; each
// workload's own follow them in Fields.
var generalFields = []Field{
	urlValued(group("engine", general("engine_url", "engine-url", String, "", "engine base `URL` (builtin starts the simulated engine in-process)"))),
	urlValued(group("engine", general("lmcache_url", "lmcache-url", String, "", "LMCache server URL: tokens-per-GB is read from its /status"))),
	exported(general("workload", "workload", String, "", "workload to run: "+strings.Join(builtinNames(), ", "))),
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
