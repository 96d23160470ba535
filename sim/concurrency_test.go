package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
)

func TestFiveHundredConcurrentStreams(t *testing.T) {
	const streams = 500
	r := startSim(t, nil)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: streams}}
	defer client.CloseIdleConnections()

	type outcome struct {
		i   int
		res streamResult
		err error
	}
	out := make(chan outcome, streams)
	var wg sync.WaitGroup
	for i := 0; i < streams; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			// Ten shared documents, each asked by 50 streams, so hits and
			// misses interleave.
			text := fmt.Sprintf("Document %d: %s question %d", i%10, words("hi", 200), i)
			body, _ := json.Marshal(chat(text, map[string]any{"max_tokens": 8 + i%5, "ignore_eos": true}))
			resp, err := client.Post(r.URL()+"/v1/chat/completions", "application/json", bytes.NewReader(body))
			if err != nil {
				out <- outcome{i: i, err: err}
				return
			}
			res, err := parseStream(resp)
			out <- outcome{i, res, err}
		}(i)
	}
	wg.Wait()
	close(out)

	var prompt, cached, completion int
	for o := range out {
		if o.err != nil {
			t.Fatalf("stream %d: %v", o.i, o.err)
		}
		res := o.res
		if !res.Done || res.Usage == nil {
			t.Fatalf("stream %d incomplete", o.i)
		}
		wantPrompt := len(tokenize(nil, fmt.Sprintf("Document %d: %s question %d", o.i%10, words("hi", 200), o.i))) +
			messageOverhead + requestOverhead
		if res.Usage.PromptTokens != wantPrompt || res.Usage.CompletionTokens != 8+o.i%5 ||
			res.ContentChunks != 8+o.i%5 || len(tokenize(nil, res.Content)) != 8+o.i%5 {
			t.Errorf("stream %d: usage %+v, %d chunks", o.i, res.Usage, res.ContentChunks)
		}
		if c := res.Usage.cached(t); c%16 != 0 || c >= res.Usage.PromptTokens {
			t.Errorf("stream %d: cached %d of %d", o.i, c, res.Usage.PromptTokens)
		}
		prompt += res.Usage.PromptTokens
		cached += res.Usage.cached(t)
		completion += res.Usage.CompletionTokens
	}
	if cached == 0 {
		t.Error("no stream hit the shared documents")
	}
	// The server's counters agree with the receipts.
	s := r.Server
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"queries", counterValue(t, s.metrics.queries), float64(prompt)},
		{"hits", counterValue(t, s.metrics.hits), float64(cached)},
		{"generation", counterValue(t, s.metrics.genTokens), float64(completion)},
	} {
		if c.got != c.want {
			t.Errorf("%s counter %v, receipts %v", c.name, c.got, c.want)
		}
	}
}

// With a real sequence limit, queued requests still all complete.
func TestQueuedStreamsComplete(t *testing.T) {
	r := startSim(t, func(c *Config) {
		c.ZeroLatency = false
		c.Speed = 1000
		c.MaxNumSeqs = 4
	})
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			body, _ := json.Marshal(completion(ids(i*1000, 50), map[string]any{"max_tokens": 20, "ignore_eos": true}))
			resp, err := http.Post(r.URL()+"/v1/completions", "application/json", bytes.NewReader(body))
			if err != nil {
				errs <- err
				return
			}
			res, err := parseStream(resp)
			if err == nil && (res.Usage == nil || res.Usage.CompletionTokens != 20 || !res.Done) {
				err = fmt.Errorf("request %d: %+v", i, res.Usage)
			}
			if err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
