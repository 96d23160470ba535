package bench

import (
	"context"
	"os"
	"runtime"
	"testing"

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
