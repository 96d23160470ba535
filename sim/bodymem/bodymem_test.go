package bodymem

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	rtmetrics "runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvbench/kvbench/sim"
)

// BenchmarkBigBodyPeak serves one 30 MB chat body per iteration and
// reports the largest heap the request needed above the idle server
// (sampled every 100 µs), as a multiple of the body: the simulator's
// memory per body (about twice its size, docs/sim.md).
func BenchmarkBigBodyPeak(b *testing.B) {
	cfg := sim.DefaultConfig()
	cfg.ZeroLatency = true
	cfg.MaxModelLen = 1 << 24
	s, err := sim.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	const size = 30 << 20
	for _, shape := range []struct{ name, word string }{{"hi", "hi "}, {"document", "document "}} {
		b.Run(shape.name, func(b *testing.B) {
			content := strings.Repeat(shape.word, size/len(shape.word)-10)
			body := []byte(`{"messages":[{"role":"user","content":"` + content + `"}],"max_tokens":1}`)
			content = ""
			var worst float64
			for b.Loop() {
				runtime.GC()
				base := heapObjects()
				var peak atomic.Uint64
				stop := make(chan struct{})
				done := make(chan struct{})
				go func() {
					defer close(done)
					for {
						if h := heapObjects(); h > peak.Load() {
							peak.Store(h)
						}
						select {
						case <-stop:
							return
						case <-time.After(100 * time.Microsecond):
						}
					}
				}()
				resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				close(stop)
				<-done
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
				// The client's copy of the body is not the server's cost.
				worst = max(worst, float64(peak.Load()-min(base, peak.Load()))/float64(len(body)))
			}
			b.ReportMetric(worst, "x-body-peak")
		})
	}
}

func heapObjects() uint64 {
	s := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	rtmetrics.Read(s)
	return s[0].Value.Uint64()
}
