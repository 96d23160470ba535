package sim

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics uses vLLM's names and units, on a registry of its own (never the
// global one: several simulators can live in one process). The cache
// counters count tokens exactly as the cache does: queries += the prompt
// tokens looked up, hits += the cached_tokens reported.
type metrics struct {
	registry     *prometheus.Registry
	queries      prometheus.Counter
	hits         prometheus.Counter
	promptTokens prometheus.Counter
	genTokens    prometheus.Counter
	cachedTokens prometheus.Counter
	cpuHits      prometheus.Counter
	// LMCache's prefix-chained lookup counters, for the CPU tier: the
	// tokens the engine asked the tier for (what the GPU tier missed) and
	// the tokens the tier served.
	mpRequested    prometheus.Counter
	mpHits         prometheus.Counter
	requestSuccess *prometheus.CounterVec
	running        prometheus.Gauge
	waiting        prometheus.Gauge
	ttft           prometheus.Observer
	handler        http.Handler
}

// vLLM's bucket bounds for time to first token.
var ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}

func newMetrics(model string, usage func() float64) *metrics {
	reg := prometheus.NewRegistry()
	labels := prometheus.Labels{"model_name": model}
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels})
		reg.MustRegister(c)
		return c
	}
	gauge := func(name, help string) prometheus.Gauge {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels})
		reg.MustRegister(g)
		return g
	}
	m := &metrics{registry: reg}
	m.queries = counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.")
	m.hits = counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.")
	m.promptTokens = counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.")
	m.genTokens = counter("vllm:generation_tokens_total", "Number of generation tokens processed.")
	m.cachedTokens = counter("vllm:prompt_tokens_cached_total", "Number of cached prompt tokens (local prefix cache hits).")
	m.cpuHits = counter("kvbench_sim:cpu_tier_hit_tokens_total", "Prompt tokens served from the CPU tier.")
	lmcache := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
		reg.MustRegister(c)
		return c
	}
	m.mpRequested = lmcache("lmcache_mp_lookup_requested_tokens_total", "Tokens looked up in the CPU tier (prefix-chained lookups).")
	m.mpHits = lmcache("lmcache_mp_lookup_hit_tokens_total", "Tokens the CPU tier served (prefix-chained lookups).")
	m.requestSuccess = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vllm:request_success_total", Help: "Count of successfully processed requests.", ConstLabels: labels,
	}, []string{"finished_reason"})
	reg.MustRegister(m.requestSuccess)
	m.running = gauge("vllm:num_requests_running", "Number of requests in model execution batches.")
	m.waiting = gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.")
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "vllm:kv_cache_usage_perc", Help: "KV-cache usage. 1 means 100 percent usage.", ConstLabels: labels,
	}, usage))
	h := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "vllm:time_to_first_token_seconds", Help: "Histogram of time to first token in seconds.",
		ConstLabels: labels, Buckets: ttftBuckets,
	})
	reg.MustRegister(h)
	m.ttft = h
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return m
}
