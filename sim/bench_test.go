package sim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// BenchmarkZeroLatency streams chat replies through a real loopback server
// in --zero-latency mode: the simulator's own cost per request and token.
func BenchmarkZeroLatency(b *testing.B) {
	const maxTokens = 64
	r := startSim(b, nil)
	body, _ := json.Marshal(chat(words("hi", 500), map[string]any{"max_tokens": maxTokens, "ignore_eos": true}))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Post(r.URL()+"/v1/chat/completions", "application/json", bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || n == 0 || resp.StatusCode != http.StatusOK {
				b.Errorf("status %d, %d bytes, %v", resp.StatusCode, n, err)
				return
			}
		}
	})
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/secs, "requests/s")
	b.ReportMetric(float64(b.N*maxTokens)/secs, "tokens/s")
}
