package metrics

import (
	"math"
	"strings"
)

// Kind says how a known series behaves.
type Kind int

const (
	// Counter only grows (until the engine restarts): before/after/delta
	// make sense.
	Counter Kind = iota
	// Gauge is a level (requests running, cache usage): sampled, never
	// differenced.
	Gauge
)

// Metric is a series kvbench knows by name.
type Metric struct {
	// Name is the canonical name. Counters end in _total; an engine that
	// exposes one without the suffix (older client libraries, OpenMetrics
	// family names) is matched too and reported under this name.
	Name   string
	Kind   Kind
	Engine string // vllm, sglang, llamacpp, lmcache, kvbench-sim
	// Cache marks the prefix-cache figures: hits, queries, cached tokens
	// and hit rates. Doctor reports which of these an endpoint has.
	Cache bool
}

// Known lists the counters and gauges that metrics.jsonl records and the
// summary's server_metrics differences (counters only).
var Known = []Metric{
	// vLLM (v1 engine names; queries and hits count tokens).
	{"vllm:prefix_cache_queries_total", Counter, "vllm", true},
	{"vllm:prefix_cache_hits_total", Counter, "vllm", true},
	{"vllm:external_prefix_cache_queries_total", Counter, "vllm", true},
	{"vllm:external_prefix_cache_hits_total", Counter, "vllm", true},
	{"vllm:gpu_prefix_cache_queries_total", Counter, "vllm", true}, // name before vLLM 0.10
	{"vllm:gpu_prefix_cache_hits_total", Counter, "vllm", true},
	{"vllm:prompt_tokens_cached_total", Counter, "vllm", true},
	{"vllm:prompt_tokens_total", Counter, "vllm", false},
	{"vllm:generation_tokens_total", Counter, "vllm", false},
	{"vllm:request_success_total", Counter, "vllm", false},
	{"vllm:num_preemptions_total", Counter, "vllm", false},
	{"vllm:time_to_first_token_seconds_sum", Counter, "vllm", false},
	{"vllm:time_to_first_token_seconds_count", Counter, "vllm", false},
	{"vllm:num_requests_running", Gauge, "vllm", false},
	{"vllm:num_requests_waiting", Gauge, "vllm", false},
	{"vllm:kv_cache_usage_perc", Gauge, "vllm", false},
	{"vllm:gpu_cache_usage_perc", Gauge, "vllm", false}, // name before vLLM 0.10
	{"vllm:gpu_prefix_cache_hit_rate", Gauge, "vllm", true},

	// SGLang (cached_tokens_total is split by cache_source; summed).
	{"sglang:prompt_tokens_total", Counter, "sglang", false},
	{"sglang:cached_tokens_total", Counter, "sglang", true},
	{"sglang:generation_tokens_total", Counter, "sglang", false},
	{"sglang:num_requests_total", Counter, "sglang", false},
	{"sglang:cache_hit_rate", Gauge, "sglang", true},
	{"sglang:num_running_reqs", Gauge, "sglang", false},
	{"sglang:num_queue_reqs", Gauge, "sglang", false},
	{"sglang:token_usage", Gauge, "sglang", false},

	// llama.cpp server (--metrics). Since prompt_tokens_cached_total
	// exists, prompt_tokens_total counts only the tokens evaluated.
	{"llamacpp:prompt_tokens_total", Counter, "llamacpp", false},
	{"llamacpp:prompt_tokens_cached_total", Counter, "llamacpp", true},
	{"llamacpp:tokens_predicted_total", Counter, "llamacpp", false},
	{"llamacpp:n_decode_total", Counter, "llamacpp", false},
	{"llamacpp:requests_processing", Gauge, "llamacpp", false},
	{"llamacpp:requests_deferred", Gauge, "llamacpp", false},
	{"llamacpp:kv_cache_usage_ratio", Gauge, "llamacpp", false},
	{"llamacpp:kv_cache_tokens", Gauge, "llamacpp", false},

	// LMCache (served beside vLLM's, prefix lmcache:).
	{"lmcache:num_requested_tokens_total", Counter, "lmcache", true},
	{"lmcache:num_hit_tokens_total", Counter, "lmcache", true},
	{"lmcache:num_vllm_hit_tokens_total", Counter, "lmcache", true},
	{"lmcache:num_lookup_tokens_total", Counter, "lmcache", true},
	{"lmcache:num_lookup_hits_total", Counter, "lmcache", true},
	{"lmcache:num_stored_tokens_total", Counter, "lmcache", false},
	{"lmcache:num_retrieve_requests_total", Counter, "lmcache", false},
	{"lmcache:num_store_requests_total", Counter, "lmcache", false},
	{"lmcache:retrieve_hit_rate", Gauge, "lmcache", true},
	{"lmcache:lookup_hit_rate", Gauge, "lmcache", true},
	{"lmcache:local_cache_usage", Gauge, "lmcache", false},

	// kvbench's simulator: its second tier.
	{"kvbench_sim:cpu_tier_hit_tokens_total", Counter, "kvbench-sim", true},
}

var knownByName = func() map[string]Metric {
	m := make(map[string]Metric, len(Known))
	for _, k := range Known {
		m[k.Name] = k
	}
	return m
}()

// Lookup returns the known metric of a canonical name.
func Lookup(name string) (Metric, bool) {
	m, ok := knownByName[name]
	return m, ok
}

// Pick returns the known series present in a scrape, under their
// canonical names.
func Pick(all map[string]float64) map[string]float64 {
	out := make(map[string]float64)
	for _, k := range Known {
		// JSON has no NaN or Inf (a gauge with nothing to average reads NaN).
		if v, ok := value(all, k); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[k.Name] = v
		}
	}
	return out
}

func value(all map[string]float64, k Metric) (float64, bool) {
	if v, ok := all[k.Name]; ok {
		return v, true
	}
	if k.Kind == Counter && strings.HasSuffix(k.Name, "_total") {
		v, ok := all[strings.TrimSuffix(k.Name, "_total")]
		return v, ok
	}
	return 0, false
}

// HitRatePair names the counters a prefix-cache hit rate is taken from:
// hits delta over the sum of the queries deltas.
type HitRatePair struct {
	Hits    string
	Queries []string
}

// HitRatePairs are tried in order; the first whose counters are all
// present gives prefix_cache_hit_rate. All count tokens. llama.cpp's
// prompt counter leaves the cached tokens out, so its queries are the two
// added together.
var HitRatePairs = []HitRatePair{
	{"vllm:prefix_cache_hits_total", []string{"vllm:prefix_cache_queries_total"}},
	{"vllm:gpu_prefix_cache_hits_total", []string{"vllm:gpu_prefix_cache_queries_total"}},
	{"sglang:cached_tokens_total", []string{"sglang:prompt_tokens_total"}},
	{"llamacpp:prompt_tokens_cached_total", []string{"llamacpp:prompt_tokens_total", "llamacpp:prompt_tokens_cached_total"}},
	{"lmcache:num_hit_tokens_total", []string{"lmcache:num_requested_tokens_total"}},
}

// hitRatePair returns the first pair whose counters are all in vals.
func hitRatePair(vals map[string]float64) (HitRatePair, bool) {
	for _, p := range HitRatePairs {
		if _, ok := vals[p.Hits]; !ok {
			continue
		}
		all := true
		for _, q := range p.Queries {
			if _, ok := vals[q]; !ok {
				all = false
				break
			}
		}
		if all {
			return p, true
		}
	}
	return HitRatePair{}, false
}

// String is how the pair reads in the summary: "hits / queries".
func (p HitRatePair) String() string {
	return p.Hits + " / " + strings.Join(p.Queries, " + ")
}
