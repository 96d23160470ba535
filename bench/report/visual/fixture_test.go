package visual

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/stats"
)

// fixture describes a generated run folder, written as a run writes it:
// requests.jsonl lines of sender.Result, a summary from the stats
// collector, and optionally metrics.jsonl and the blocks other parts of
// the record add (load, goodput, client overload, merge).
type fixture struct {
	name        string
	n           int     // measured requests
	coldTTFT    float64 // ms
	reusedEvery int     // every request i%reusedEvery != 0 is reused
	itlMs       float64
	metrics     bool
	trace       bool
	overloaded  bool
	undelivered bool
	mergedFrom  []string
	noSummary   bool
	engineURL   string
	started     time.Time
	seed        uint64
}

func ip(v int) *int         { return &v }
func fp(v float64) *float64 { return &v }
func sp(v string) *string   { return &v }

func writeRun(t testing.TB, dir string, f fixture) string {
	t.Helper()
	if f.started.IsZero() {
		f.started = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	}
	if f.engineURL == "" {
		f.engineURL = "http://127.0.0.1:8000/v1"
	}
	id := f.started.Format("20060102-150405") + "-long-doc-qa-" + f.name
	rd := filepath.Join(dir, id)
	if err := os.MkdirAll(rd, 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(f.seed, 7))
	c := stats.New()
	var lines bytes.Buffer
	var mlines bytes.Buffer
	t0 := float64(f.started.Unix()) + 0.25
	var hits, queries float64
	nextScrape := t0
	for i := range f.n {
		submit := t0 + 0.05*float64(i) + 0.01*rng.Float64()
		reused := f.reusedEvery > 0 && i%f.reusedEvery != 0
		ttft := f.coldTTFT * (0.8 + 0.4*rng.Float64())
		prompt := 2000
		cached := 0
		if reused {
			ttft /= 6
			cached = 1984
		}
		out := 32 + rng.IntN(32)
		itl := f.itlMs * (0.7 + 0.6*rng.Float64())
		first := submit + ttft/1000
		finish := first + float64(out-1)*itl/1000
		r := sender.Result{
			RequestID: fmt.Sprintf("req-%d", i), Phase: sender.PhaseMeasured, Successful: true,
			SubmitTime: submit, FirstTokenTime: fp(first), FinishTime: finish,
			TTFT: fp(ttft / 1000), RequestLatency: finish - submit,
			PromptTokens: ip(prompt), CachedTokens: ip(cached), CompletionTokens: ip(out),
			Complete: true, FinishReason: sp("length"), Chunks: out,
			DecodeSpeed: fp(float64(out) / (finish - first)), ITLMeanMs: fp(itl), ITLP50Ms: fp(itl), ITLP95Ms: fp(itl * 1.3),
			RoundGapP50Ms: fp(itl), RoundGapP95Ms: fp(itl * 1.3), TokensPerChunk: fp(1),
		}
		r.CacheState = sender.StateCold
		if reused {
			r.CacheState = sender.StateReused
		} else {
			r.PrefillTPS = fp(float64(prompt) / (ttft / 1000))
		}
		if i%17 == 16 {
			r.CachedTokens = nil
			r.CacheState = sender.StateUnverified
			r.UnverifiedReason = sp("details_absent")
		}
		c.Add(&r)
		b, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		if f.trace {
			exp := cached
			if i%5 == 0 {
				exp = 1984
			}
			b = append(b[:len(b)-1], fmt.Sprintf(`,"expected_cached_tokens":%d,"expected_cached_tokens_lru":%d}`, exp, exp/2)...)
		}
		lines.Write(b)
		lines.WriteByte('\n')
		queries += float64(prompt)
		hits += float64(cached)
		for f.metrics && submit >= nextScrape {
			fmt.Fprintf(&mlines, `{"time":%f,"elapsed_s":%f,"metrics":{"vllm:prefix_cache_queries_total":%g,"vllm:prefix_cache_hits_total":%g,"vllm:num_requests_running":3},"scrape_ms":1.5}`+"\n",
				nextScrape, nextScrape-t0, queries, hits)
			nextScrape += 0.5
		}
	}
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(rd, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(record.RequestsFile, lines.Bytes())
	write(record.ConfigFile, []byte(`{"workload":"long-doc-qa","model":"sim-model"}`+"\n"))
	if f.metrics {
		write(MetricsFile, mlines.Bytes())
	}
	if f.noSummary {
		return rd
	}
	blk := c.Final(stats.ClientInfo{CPUSeconds: 0.5})
	if f.overloaded {
		blk.Client.Overloaded = true
		blk.Client.OverloadReasons = []string{"scheduler p99 latency 7.2 ms > 5 ms"}
	}
	s := record.Summary{
		SchemaVersion: 1,
		Tool:          record.Tool{Name: "kvbench", Version: "test"},
		Run: record.RunInfo{ID: id, Name: f.name, StartedAt: f.started.Format(time.RFC3339),
			FinishedAt: f.started.Add(time.Duration(f.n) * 50 * time.Millisecond).Format(time.RFC3339)},
		Config:  map[string]any{"engine_url": f.engineURL, "model": "sim-model", "workload": "long-doc-qa"},
		Results: blk.Results, Cache: blk.Cache, Latency: blk.Latency, Client: blk.Client,
	}
	b, err := json.MarshalIndent(&s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.mergedFrom) > 0 {
		mf, _ := json.Marshal(f.mergedFrom)
		b = bytes.Replace(b, []byte(`"run": {`), []byte(`"run": {"merged_from": `+string(mf)+`,`), 1)
	}
	delivered := !f.undelivered && !f.overloaded
	reasons := "[]"
	if f.undelivered {
		reasons = `["achieved 7.1 req/s < 95% of the target 10 req/s"]`
	}
	extra := fmt.Sprintf(`,"load":{"target_rate":10,"achieved_rate":%g,"arrival":"poisson","burstiness":1,"max_concurrency":null,"observed_max_concurrency":4,"mean_concurrency":2.5,"schedule_lag_p50_ms":0.2,"schedule_lag_p99_ms":1.1,"schedule_lag_max_ms":2,"delivered":%t,"degraded_reasons":%s},"goodput":{"slo":{"ttft_ms":500,"tpot_ms":null,"e2e_ms":null},"good_requests":%d,"good_fraction":0.95,"goodput_rps":9.5,"goodput_output_tps":400.25}}`,
		math.Round(float64(f.n)/(0.05*float64(f.n))*100)/100, delivered, reasons, f.n*95/100)
	b = append(bytes.TrimRight(bytes.TrimSpace(b), "}"), []byte(extra+"\n")...)
	if !json.Valid(b) {
		t.Fatalf("fixture summary is not JSON: %s", b)
	}
	write(record.SummaryFile, b)
	return rd
}

// writeSweep writes a sweep folder whose cells are run folders.
func writeSweep(t testing.TB, dir, name string, rates []float64, withCells bool) string {
	t.Helper()
	sd := filepath.Join(dir, "20260302-090000-sweep-long-doc-qa-"+name)
	cellsDir := filepath.Join(sd, "cells")
	if err := os.MkdirAll(cellsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	type cellJSON struct {
		Value            float64  `json:"value"`
		RunID            string   `json:"run_id"`
		TargetRate       float64  `json:"target_rate"`
		AchievedRate     float64  `json:"achieved_rate"`
		MeanConcurrency  float64  `json:"mean_concurrency"`
		Delivered        bool     `json:"delivered"`
		TotalRequests    int      `json:"total_requests"`
		FailedRequests   int      `json:"failed_requests"`
		P50TTFTms        float64  `json:"p50_ttft_ms"`
		P99TTFTms        float64  `json:"p99_ttft_ms"`
		MeanTPOTms       float64  `json:"mean_tpot_ms"`
		OutputThroughput float64  `json:"output_throughput"`
		HitRatio         *float64 `json:"hit_ratio"`
		GoodFraction     float64  `json:"good_fraction"`
		GoodputRPS       float64  `json:"goodput_rps"`
	}
	var cells []cellJSON
	for i, r := range rates {
		runID := fmt.Sprintf("%02d-rate-%g", i+1, r)
		if withCells {
			rd := writeRun(t, cellsDir, fixture{name: fmt.Sprintf("cell%d", i), n: 40, coldTTFT: 80 * (1 + float64(i*i)), reusedEvery: 2, itlMs: 12, seed: uint64(i)})
			if err := os.Rename(rd, filepath.Join(cellsDir, runID)); err != nil {
				t.Fatal(err)
			}
		}
		achieved := r * 0.99
		if i == len(rates)-1 {
			achieved = r * 0.8
		}
		cells = append(cells, cellJSON{
			Value: r, RunID: runID, TargetRate: r, AchievedRate: achieved, MeanConcurrency: r * 0.4,
			Delivered: i != len(rates)-1, TotalRequests: 40, P50TTFTms: 50 * (1 + float64(i*i)), P99TTFTms: 120 * (1 + float64(i*i)),
			MeanTPOTms: 12, OutputThroughput: 100 * r, HitRatio: fp(0.5), GoodFraction: math.Max(0, 1-0.2*float64(i)), GoodputRPS: r * math.Max(0, 1-0.2*float64(i)),
		})
	}
	doc := map[string]any{
		"schema_version": 1,
		"tool":           map[string]any{"name": "kvbench", "version": "test"},
		"sweep": map[string]any{"id": filepath.Base(sd), "name": name, "started_at": "2026-03-02T09:00:00Z", "finished_at": "2026-03-02T09:10:00Z",
			"interrupted": false, "dimension": "rate", "values": rates, "search": false, "goodput_target": 0.9,
			"slo": map[string]any{"ttft_ms": 500, "tpot_ms": nil, "e2e_ms": nil}},
		"cells":  cells,
		"result": nil,
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sd, record.SweepFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return sd
}
