package load

import (
	"context"
	"runtime"
	"sort"
	"testing"
	"time"
)

// BenchmarkGateLateness measures the gate alone (no HTTP): 2000 Poisson
// releases at 2000/s on one core, each handed to a goroutine as a
// workload does; it reports how late the goroutine started after its
// scheduled time.
//
//	go test ./bench/load/ -run '^$' -bench GateLateness -benchtime 3x
func BenchmarkGateLateness(b *testing.B) {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	var p50, p99, worst float64
	for i := 0; i < b.N; i++ {
		g := NewGate(Settings{Rate: 2000, Arrival: Poisson, Burstiness: 1, Seed: int64(i + 1)}, nil)
		lags := make([]float64, 2000)
		done := make(chan struct{}, len(lags))
		for k := range lags {
			t, ok := g.Release(context.Background())
			if !ok {
				b.Fatal("release")
			}
			go func() {
				lags[k] = float64(time.Since(t.Scheduled)) / float64(time.Millisecond)
				g.Done()
				done <- struct{}{}
			}()
		}
		for range lags {
			<-done
		}
		sort.Float64s(lags)
		p50 += lags[len(lags)/2]
		p99 += lags[len(lags)*99/100]
		worst = max(worst, lags[len(lags)-1])
	}
	n := float64(b.N)
	b.ReportMetric(p50/n, "p50-lag-ms")
	b.ReportMetric(p99/n, "p99-lag-ms")
	b.ReportMetric(worst, "max-lag-ms")
}
