// Command minreader is the yardstick kvbench's client is measured
// against: the least a Go program can do to stream N chat completions at
// once (net/http, one shared transport, a bufio.Reader, a byte search for
// content, no JSON). It prints one JSON line with its TTFT percentiles and
// token count; the harness (cmd/bench-client) measures its CPU and memory.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8000", "engine base URL (without /v1)")
	streams := flag.Int("streams", 1000, "streams sent together")
	tokens := flag.Int("tokens", 100, "max_tokens per stream")
	model := flag.String("model", "kvbench-sim", "model")
	flag.Parse()

	tr := &http.Transport{
		MaxIdleConns:        *streams,
		MaxIdleConnsPerHost: *streams,
		DisableCompression:  true,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
	}
	client := &http.Client{Transport: tr}
	endpoint := strings.TrimRight(*url, "/") + "/v1/chat/completions"
	needle := []byte(`"content":"`)

	ttfts := make([]float64, *streams)
	counts := make([]int, *streams)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < *streams; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"stream %d: tell me a story"}],"max_tokens":%d,"ignore_eos":true,"temperature":0,"stream":true,"stream_options":{"include_usage":true}}`, *model, i, *tokens)
			<-start
			submit := time.Now()
			resp, err := client.Post(endpoint, "application/json", strings.NewReader(body))
			if err != nil {
				ttfts[i] = -1
				return
			}
			defer resp.Body.Close()
			br := bufio.NewReaderSize(resp.Body, 4096)
			first := true
			for {
				line, err := br.ReadSlice('\n')
				if j := bytes.Index(line, needle); j >= 0 && len(line) > j+len(needle) && line[j+len(needle)] != '"' {
					if first {
						ttfts[i] = time.Since(submit).Seconds()
						first = false
					}
					counts[i]++
				}
				if err != nil {
					break
				}
			}
			if first {
				ttfts[i] = -1
			}
		}(i)
	}
	close(start)
	wg.Wait()

	var ok []float64
	total := 0
	for i, t := range ttfts {
		if t >= 0 {
			ok = append(ok, t*1000)
		}
		total += counts[i]
	}
	sort.Float64s(ok)
	json.NewEncoder(os.Stdout).Encode(map[string]any{
		"streams": *streams, "ok": len(ok), "tokens": total,
		"ttft_p50_ms": linear(ok, 50), "ttft_p99_ms": linear(ok, 99),
	})
}

// linear is the p-th percentile of sorted values by linear interpolation
// at rank (n-1)p/100, the method of kvbench's p50/p99 TTFT (LMCache's), so
// both clients' figures are computed alike.
func linear(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	k := float64(n-1) * p / 100
	f := int(k)
	if f >= n-1 {
		return sorted[n-1]
	}
	return sorted[f] + (k-float64(f))*(sorted[f+1]-sorted[f])
}
