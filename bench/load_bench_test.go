package bench

import (
	"context"
	"os"
	"runtime"
	"testing"

	"github.com/kvbench/kvbench/bench/stats"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/simtest"
)

// BenchmarkScheduleLag measures the release schedule's precision: a
// random-prefill run of 4000 requests at 2000 requests/s (Poisson) on
// one core against the zero-latency simulator. It reports the schedule
// lag (submit - scheduled release) percentiles and the achieved rate;
// the target is a p99 under 2 ms. The simulator runs in-process unless
// KVBENCH_SCHED_BENCH_URL names one started apart (then the one core is
// the client's alone):
//
//	kvbench sim --zero-latency --listen 127.0.0.1:28417 &
//	KVBENCH_SCHED_BENCH_URL=http://127.0.0.1:28417 \
//	    go test ./bench/ -run '^$' -bench ScheduleLag -benchtime 3x
func BenchmarkScheduleLag(b *testing.B) {
	url := os.Getenv("KVBENCH_SCHED_BENCH_URL")
	if url == "" {
		url = simtest.Start(b, func(c *sim.Config) { c.ZeroLatency = true })
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	var p50, p99, maxLag, rate float64
	for i := 0; i < b.N; i++ {
		cfg := config.Default()
		for k, v := range map[string]any{"workload": config.RandomPrefill, "model": "kvbench-sim", "output_dir": b.TempDir(),
			"no_csv": true, "rp_request_length": 20, "rp_num_requests": 4000, "tokens_per_gb_kvcache": 1000,
			"request_rate": "2000", "seed": i + 1} {
			if err := cfg.Set(k, v); err != nil {
				b.Fatal(err)
			}
		}
		r, err := New(context.Background(), &Prepared{Config: cfg, EngineURL: url + "/v1", TokensPerGB: 1000})
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			for range r.Events() {
			}
		}()
		fin := r.Run(context.Background())
		l := fin.Summary.Load
		if fin.ExitCode != 0 || l == nil || l.ScheduleLagP99ms == nil || l.AchievedRate == nil {
			b.Fatalf("exit %d, load %+v", fin.ExitCode, l)
		}
		p50 += *l.ScheduleLagP50ms
		p99 += *l.ScheduleLagP99ms
		maxLag = max(maxLag, *l.ScheduleLagMaxms)
		rate += *l.AchievedRate
	}
	n := float64(b.N)
	b.ReportMetric(p50/n, "p50-lag-ms")
	b.ReportMetric(p99/n, "p99-lag-ms")
	b.ReportMetric(maxLag, "max-lag-ms")
	b.ReportMetric(rate/n, "achieved-req/s")
}

// BenchmarkTinyRequests is one core's ceiling for tiny requests: a
// random-prefill of 20,000 16-token prompts with max_tokens 1, capped at
// 64 in flight, on one core (GOMAXPROCS 1) against the zero-latency
// simulator, with the CSV streamed as in a run. It reports the requests
// per second and the client's CPU per request. The simulator runs
// in-process unless KVBENCH_SCHED_BENCH_URL names one started apart:
//
//	taskset -c 0 kvbench sim --zero-latency --listen 127.0.0.1:28417 &
//	KVBENCH_SCHED_BENCH_URL=http://127.0.0.1:28417 taskset -c 1 \
//	    go test ./bench/ -run '^$' -bench TinyRequests -benchtime 3x
func BenchmarkTinyRequests(b *testing.B) {
	url := os.Getenv("KVBENCH_SCHED_BENCH_URL")
	if url == "" {
		url = simtest.Start(b, func(c *sim.Config) { c.ZeroLatency = true })
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	const n = 20000
	var rate, cpu float64
	for i := 0; i < b.N; i++ {
		cfg := config.Default()
		for k, v := range map[string]any{"workload": config.RandomPrefill, "model": "kvbench-sim", "output_dir": b.TempDir(),
			"rp_request_length": 16, "rp_num_requests": n, "tokens_per_gb_kvcache": 1000,
			"max_concurrency": 64, "seed": i + 1} {
			if err := cfg.Set(k, v); err != nil {
				b.Fatal(err)
			}
		}
		r, err := New(context.Background(), &Prepared{Config: cfg, EngineURL: url + "/v1", TokensPerGB: 1000})
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			for range r.Events() {
			}
		}()
		cpu0 := stats.ProcessCPU()
		fin := r.Run(context.Background())
		cpu += (stats.ProcessCPU() - cpu0).Seconds()
		res := fin.Summary.Results
		if fin.ExitCode != 0 || res.SuccessfulRequests != n {
			b.Fatalf("exit %d, %d of %d requests", fin.ExitCode, res.SuccessfulRequests, n)
		}
		rate += float64(n) / res.ElapsedTime
	}
	nf := float64(b.N)
	b.ReportMetric(rate/nf, "req/s")
	b.ReportMetric(cpu/nf/n*1e6, "cpu-us/req")
}

// BenchmarkBurst is 1000 streams started together on one core against a
// simulator holding every TTFT at 50 ms and every token gap at 20 ms
// (measuring mode): the streams' TTFT error (p50 and p99 of TTFT - 50
// ms) is the client's own delay in sending and reading. The simulator
// must run apart, on the other core:
//
//	taskset -c 0 kvbench sim --fixed-ttft 50ms --fixed-itl 20ms --listen 127.0.0.1:28418 &
//	KVBENCH_BURST_BENCH_URL=http://127.0.0.1:28418 taskset -c 1 \
//	    go test ./bench/ -run '^$' -bench Burst -benchtime 3x
func BenchmarkBurst(b *testing.B) {
	url := os.Getenv("KVBENCH_BURST_BENCH_URL")
	if url == "" {
		b.Skip("KVBENCH_BURST_BENCH_URL is not set")
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	var p50, p99 float64
	for i := 0; i < b.N; i++ {
		cfg := config.Default()
		for k, v := range map[string]any{"workload": config.ConcurrentExactness, "model": "kvbench-sim", "output_dir": b.TempDir(),
			"ce_levels": []int{1000}, "ce_tokens": 100, "ignore_eos": true, "tokens_per_gb_kvcache": 1000} {
			if err := cfg.Set(k, v); err != nil {
				b.Fatal(err)
			}
		}
		r, err := New(context.Background(), &Prepared{Config: cfg, EngineURL: url + "/v1", TokensPerGB: 1000})
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			for range r.Events() {
			}
		}()
		fin := r.Run(context.Background())
		res := fin.Summary.Results
		if res.SuccessfulRequests != 1000 || res.P50TTFTms == nil {
			b.Fatalf("exit %d, %d of 1000 streams", fin.ExitCode, res.SuccessfulRequests)
		}
		p50 += *res.P50TTFTms - 50
		p99 += *res.P99TTFTms - 50
	}
	b.ReportMetric(p50/float64(b.N), "ttft-p50-err-ms")
	b.ReportMetric(p99/float64(b.N), "ttft-p99-err-ms")
}
