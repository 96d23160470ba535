package doctor

import (
	"strings"
)

// engine is what the doctor could tell about the server, so hints can
// name the flag of that engine rather than every engine's.
type engine int

const (
	engineUnknown engine = iota
	engineVLLM
	engineSGLang
	engineLlamaCpp
	engineOllama
	engineSim
)

func (e engine) String() string {
	switch e {
	case engineVLLM:
		return "vLLM"
	case engineSGLang:
		return "SGLang"
	case engineLlamaCpp:
		return "llama.cpp"
	case engineOllama:
		return "ollama"
	case engineSim:
		return "kvbench sim"
	}
	return ""
}

// fromOwnedBy reads /v1/models' owned_by, which most servers fill with
// their own name.
func fromOwnedBy(owner string) engine {
	switch strings.ToLower(owner) {
	case "vllm":
		return engineVLLM
	case "sglang":
		return engineSGLang
	case "llamacpp", "llama.cpp":
		return engineLlamaCpp
	case "ollama", "library":
		return engineOllama
	case "kvbench":
		return engineSim
	}
	return engineUnknown
}

// fromServerHeader reads the Server response header.
func fromServerHeader(h string) engine {
	h = strings.ToLower(h)
	switch {
	case strings.Contains(h, "llama.cpp"):
		return engineLlamaCpp
	case strings.Contains(h, "ollama"):
		return engineOllama
	}
	return engineUnknown
}

// fromMetricNames reads the prefixes of the metric names. The simulator
// speaks vLLM's names, and LMCache's sit beside vLLM's.
func fromMetricNames(all map[string]float64) (e engine, lmcache bool) {
	var vllm, sglang, llama, sim bool
	for name := range all {
		switch {
		case strings.HasPrefix(name, "vllm:"):
			vllm = true
		case strings.HasPrefix(name, "sglang:"):
			sglang = true
		case strings.HasPrefix(name, "llamacpp:"):
			llama = true
		case strings.HasPrefix(name, "lmcache:"):
			lmcache = true
		case strings.HasPrefix(name, "kvbench_sim:"):
			sim = true
		}
	}
	switch {
	case sim:
		e = engineSim
	case vllm:
		e = engineVLLM
	case sglang:
		e = engineSGLang
	case llama:
		e = engineLlamaCpp
	}
	return e, lmcache
}

// hints are the engine-specific words for each problem the doctor can
// find; generic is used when the engine was not recognised.
type hintSet struct {
	generic string
	by      map[engine]string
}

func (h hintSet) For(e engine) string {
	if s, ok := h.by[e]; ok {
		return s
	}
	return h.generic
}

var (
	hintDetailsNever = hintSet{
		generic: "the engine never sends usage.prompt_tokens_details.cached_tokens, so every receipt will be unverified: on vLLM start with --enable-prompt-tokens-details, on SGLang with --enable-cache-report",
		by: map[engine]string{
			engineVLLM:     "start vLLM with --enable-prompt-tokens-details: without it cached_tokens is never sent and every receipt will be unverified",
			engineSGLang:   "start SGLang with --enable-cache-report: without it cached_tokens is never sent and every receipt will be unverified",
			engineLlamaCpp: "update llama.cpp: recent llama-server builds send prompt_tokens_details.cached_tokens (kvbench records timings.cache_n meanwhile, but receipts stay unverified)",
			engineOllama:   "ollama does not report cached tokens, so receipts will be unverified (details_absent); for cache receipts use vLLM, SGLang or llama.cpp",
			engineSim:      "the simulator was started without cached-token reporting; on vLLM the flag is --enable-prompt-tokens-details",
		},
	}
	hintDetailsOmitZero = hintSet{
		generic: "the engine sends cached_tokens only when it is not 0, so cold requests will be unverified (details_absent) instead of cold; vLLM before mid-2026 does this even with --enable-prompt-tokens-details: a newer release sends the explicit 0",
		by: map[engine]string{
			engineVLLM: "this vLLM omits cached_tokens when it is 0 (releases before mid-2026), so cold requests will be unverified (details_absent) instead of cold; a newer vLLM sends the explicit 0",
			engineSim:  "the simulator runs with --omit-zero-cached (older vLLM's behaviour): drop the flag; on vLLM use a release that sends the explicit 0 with --enable-prompt-tokens-details",
		},
	}
	hintPrefixOff = hintSet{
		generic: "prefix caching looks off: turn it on in the engine (vLLM --enable-prefix-caching, SGLang without --disable-radix-cache, llama.cpp --cache-reuse 256 and cache_prompt)",
		by: map[engine]string{
			engineVLLM:     "prefix caching looks off: start vLLM with --enable-prefix-caching (and without --no-enable-prefix-caching)",
			engineSGLang:   "prefix caching looks off: start SGLang without --disable-radix-cache",
			engineLlamaCpp: "prefix caching looks off: start llama-server with --cache-reuse 256; with --parallel > 1 a repeat can land in another slot (raise --slot-prompt-similarity or use one slot)",
			engineOllama:   "ollama reuses a prompt only within one loaded model and slot: check OLLAMA_NUM_PARALLEL and that the model stays loaded (keep_alive)",
			engineSim:      "the simulator's GPU tier is 0 GB (--gpu-kv-gb 0 turns prefix caching off)",
		},
	}
	hintNoUsage = hintSet{
		generic: "the engine ignored stream_options.include_usage: kvbench takes token counts and receipts from the final usage chunk; upgrade the engine or put no proxy in between that drops it",
		by: map[engine]string{
			engineVLLM:   "vLLM sends the usage chunk for stream_options.include_usage from 0.5 on: upgrade",
			engineOllama: "ollama sends the usage chunk from 0.5 on: upgrade",
		},
	}
	hintNoMetrics = hintSet{
		generic: "no Prometheus endpoint there: pass --metrics-url if the engine serves one elsewhere (server_metrics needs it; the benchmark does not)",
		by: map[engine]string{
			engineLlamaCpp: "start llama-server with --metrics to serve /metrics",
			engineOllama:   "ollama serves no Prometheus metrics; runs work without them (no server_metrics)",
		},
	}
	hintNoCacheCounters = hintSet{
		generic: "none of kvbench's known cache counters (vllm:, sglang:, llamacpp:, lmcache:) is there, so server_metrics will have no hit rate",
		by: map[engine]string{
			engineLlamaCpp: "update llama.cpp: recent builds add llamacpp:prompt_tokens_cached_total, which kvbench compares with the receipts",
			engineSGLang:   "start SGLang with --enable-metrics; sglang:cached_tokens_total gives the hit rate",
		},
	}
	hintReasoning = "reasoning tokens count as first tokens; to switch thinking off pass e.g. --extra-body '{\"chat_template_kwargs\":{\"enable_thinking\":false}}'"
)
