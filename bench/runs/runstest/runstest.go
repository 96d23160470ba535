// Package runstest writes run folders for tests and benchmarks of the
// results explorer and compare, with the real record writer, so what is
// read back is what a run writes.
package runstest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/stats"
	"github.com/kvbench/kvbench/config"
)

// Spec describes one generated run.
type Spec struct {
	Workload  string // default long-doc-qa
	Name      string
	Model     string // default sim-model
	EngineURL string // default http://127.0.0.1:8000/v1
	Started   time.Time
	Requests  int // measured requests
	Warmup    int // warmup requests before them

	// BaseTTFTms is the TTFT of a cold request (default 100); a reused
	// request takes a fifth of it. Each request adds (i%7) ms.
	BaseTTFTms float64
	// FailEvery makes every n-th request fail (0: none).
	FailEvery int
	// ReusedEvery: requests i%ReusedEvery != 0 are reused, the others cold
	// (0: all cold). Every 10th successful request is unverified
	// (details_absent) when Unverified is set.
	ReusedEvery int
	Unverified  bool

	// Summary writes bench_summary.json; without it the folder looks like
	// a crashed run.
	Summary     bool
	Interrupted bool
	ExitCode    int
	// Corrupt appends a torn line (a kill during a write) after the
	// requests.
	Corrupt bool
	// Config sets config.json keys on top of the defaults (Set values).
	Config map[string]any
	// CPUSeconds goes into the client block.
	CPUSeconds float64
	// Load is the summary's load block (nil: none, as before it existed).
	Load *load.Block
	// WorkloadBlock is the summary's workload block (nil: none).
	WorkloadBlock any
	// Goodput is the summary's goodput block (nil: no SLO); CacheReset
	// its cache_reset.
	Goodput    *load.Goodput
	CacheReset *string
	// Headline writes the blocks a summary has today: headline,
	// by_cache_state, serving and errors (without it, a summary written
	// before them).
	Headline bool
	// Folder names the run folder (a sweep's cells/01-rate-5) instead of
	// <stamp>-<workload>[-<name>].
	Folder string
	// JitterMs adds a seeded uniform draw in [0, JitterMs) to every TTFT
	// (JitterSeed picks the draws), so two runs differ as measured ones do.
	JitterMs   float64
	JitterSeed uint64
}

func ip(v int) *int         { return &v }
func fp(v float64) *float64 { return &v }
func sp(v string) *string   { return &v }
func orStr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Result is request i of s, deterministic.
func (s Spec) Result(i int, phase string) *sender.Result {
	base := s.BaseTTFTms
	if base == 0 {
		base = 100
	}
	t0 := float64(s.Started.UnixNano()) / 1e9
	submit := t0 + 0.1*float64(i)
	r := &sender.Result{
		RequestID:  fmt.Sprintf("%s-%d", phase, i),
		Phase:      phase,
		SubmitTime: submit,
		Complete:   true,
		Chunks:     32,
	}
	fail := s.FailEvery > 0 && i%s.FailEvery == s.FailEvery-1
	if fail {
		r.Error = sp("http_503")
		r.ErrorDetail = sp("server busy")
		r.FinishTime = submit + 0.05
		r.RequestLatency = 0.05
		r.Complete = false
		r.Chunks = 0
		r.CacheState = sender.StateUnverified
		r.UnverifiedReason = sp("error")
		return r
	}
	reused := s.ReusedEvery > 0 && i%s.ReusedEvery != 0
	ttft := base
	if reused {
		ttft = base / 5
	}
	ttft += float64(i % 7)
	if s.JitterMs > 0 {
		// One generator per request: request i's draw does not depend on
		// which requests were generated before it.
		ttft += s.JitterMs * rand.New(rand.NewPCG(s.JitterSeed, uint64(i))).Float64()
	}
	r.Successful = true
	r.TTFT = fp(ttft / 1000)
	r.FirstTokenTime = fp(submit + ttft/1000)
	r.RequestLatency = ttft/1000 + 0.5
	r.FinishTime = submit + r.RequestLatency
	r.PromptTokens = ip(1000)
	r.CompletionTokens = ip(64)
	r.DecodeSpeed = fp(128)
	r.TokensPerChunk = fp(2)
	switch {
	case s.Unverified && i%10 == 5:
		r.CacheState = sender.StateUnverified
		r.UnverifiedReason = sp("details_absent")
	case reused:
		r.CachedTokens = ip(800)
		r.CacheState = sender.StateReused
	default:
		r.CachedTokens = ip(0)
		r.CacheState = sender.StateCold
		r.PrefillTPS = fp(1000 / (ttft / 1000))
	}
	return r
}

// Write creates the run folder of s under runsDir and returns its path.
func Write(tb testing.TB, runsDir string, s Spec) string {
	tb.Helper()
	dir, err := write(runsDir, s)
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}

// Start writes the run of s as a run in progress: its folder, config.json
// and requests, with the writer left open, holding the folder's lock.
// Closing the writer ends it without a summary (a crashed run's folder).
// The writer is closed at the end of the test.
func Start(tb testing.TB, runsDir string, s Spec) *record.Writer {
	tb.Helper()
	w, _, _, err := begin(runsDir, &s)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { w.Close() })
	return w
}

func write(runsDir string, s Spec) (string, error) {
	w, c, cfg, err := begin(runsDir, &s)
	if err != nil {
		return "", err
	}
	return finish(w, c, cfg, s)
}

// begin creates the run folder of s with its config.json and requests.
func begin(runsDir string, s *Spec) (*record.Writer, *stats.Collector, *config.Config, error) {
	s.Workload = orStr(s.Workload, config.LongDocQA)
	s.Model = orStr(s.Model, "sim-model")
	s.EngineURL = orStr(s.EngineURL, "http://127.0.0.1:8000/v1")
	if s.Started.IsZero() {
		s.Started = time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)
	}
	var w *record.Writer
	var err error
	if s.Folder != "" {
		w, err = record.CreateNamed(runsDir, s.Folder)
	} else {
		w, err = record.Create(runsDir, s.Workload, s.Name, s.Started)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	cfg := config.Default()
	if err := cfg.Set("workload", s.Workload); err != nil {
		return nil, nil, nil, err
	}
	if err := cfg.Set("model", s.Model); err != nil {
		return nil, nil, nil, err
	}
	for k, v := range s.Config {
		if err := cfg.Set(k, v); err != nil {
			return nil, nil, nil, err
		}
	}
	if err := w.WriteConfig(rawJSON(cfg.ExportJSON())); err != nil {
		return nil, nil, nil, err
	}
	c := stats.New()
	for i := range s.Warmup {
		r := s.Result(i, sender.PhaseWarmup)
		c.Add(r)
		if err := w.Append(r); err != nil {
			return nil, nil, nil, err
		}
	}
	for i := range s.Requests {
		r := s.Result(s.Warmup+i, sender.PhaseMeasured)
		r.RequestID = fmt.Sprintf("req-%d", i)
		c.Add(r)
		if err := w.Append(r); err != nil {
			return nil, nil, nil, err
		}
	}
	return w, c, cfg, nil
}

// finish ends the run begun: closes requests.jsonl, adds the torn line and
// the summary s asks for.
func finish(w *record.Writer, c *stats.Collector, cfg *config.Config, s Spec) (string, error) {
	if err := w.Close(); err != nil {
		return "", err
	}
	if s.Corrupt {
		f, err := os.OpenFile(filepath.Join(w.Dir(), record.RequestsFile), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return "", err
		}
		_, err = f.WriteString(`{"request_id":"torn","phase":"meas`)
		f.Close()
		if err != nil {
			return "", err
		}
	}
	if !s.Summary {
		return w.Dir(), nil
	}
	b := c.Final(stats.ClientInfo{CPUSeconds: s.CPUSeconds})
	finished := s.Started.Add(time.Duration(float64(s.Warmup+s.Requests)*0.1*float64(time.Second)) + time.Second)
	sum := &record.Summary{
		SchemaVersion: record.SchemaVersion,
		Tool:          record.Tool{Name: "kvbench", Version: "test"},
		Run: record.RunInfo{
			ID: w.ID(), Name: s.Name,
			StartedAt:   s.Started.UTC().Format(time.RFC3339),
			FinishedAt:  finished.UTC().Format(time.RFC3339),
			Interrupted: s.Interrupted, ExitCode: s.ExitCode,
		},
		Config:     record.SummaryConfig(cfg, s.EngineURL, w.Dir()),
		Results:    b.Results,
		Cache:      b.Cache,
		Latency:    b.Latency,
		Client:     b.Client,
		Load:       s.Load,
		Goodput:    s.Goodput,
		Workload:   s.WorkloadBlock,
		CacheReset: s.CacheReset,
	}
	if s.Headline {
		errs := b.Errors
		if errs == nil {
			errs = map[string]int{}
		}
		sum.ByCacheState, sum.Serving, sum.Errors = &b.ByCacheState, &b.Serving, &errs
		sum.Headline = record.NewHeadline(sum, b.Speedup)
	}
	if err := w.WriteSummary(sum); err != nil {
		return "", err
	}
	return w.Dir(), nil
}

type rawJSON []byte

func (j rawJSON) MarshalJSON() ([]byte, error) { return j, nil }
