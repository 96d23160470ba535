package app

import (
	"context"
	"os"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/stats"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/home"
	"github.com/kvbench/kvbench/screens/screentest"
)

func TestMain(m *testing.M) {
	// Pinned output: no colour, a dark background, UTC times.
	screentest.PinColors()
	time.Local = time.UTC
	os.Exit(m.Run())
}

var t0 = screentest.Now

// testCommon is a shared context with fixed paths and clock; the root
// sizes it.
func testCommon(runsDir, configDir string) *common.Common {
	c := screentest.Common(0, 0, t0)
	c.RunsDir, c.ConfigDir = runsDir, configDir
	return c
}

// sized builds the root over a screen at a terminal size.
func sized(c *common.Common, s common.Screen, w, h int) *model {
	m := newModel(c, s)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

func fptr(v float64) *float64 { return &v }
func iptr(v int) *int         { return &v }
func sptr(v string) *string   { return &v }

// homeData is fixed home content.
func homeData() home.LoadedMsg {
	return home.LoadedMsg{
		Profiles: []config.Profile{
			{Name: "gpu-a-ldqa", Workload: config.LongDocQA},
			{Name: "probe-8k", Workload: config.CacheProbe},
		},
		Runs: []home.Run{
			{ID: "20260504-091500-long-doc-qa", Dir: "/runs/20260504-091500-long-doc-qa", Workload: config.LongDocQA,
				Started: t0.Add(-15 * time.Minute), MeanTTFTms: fptr(84.25), HitRatio: fptr(0.8123), OK: 20, Complete: true},
			{ID: "20260504-085000-multi-round-chat-a100", Dir: "/runs/20260504-085000-multi-round-chat-a100", Workload: config.MultiRoundChat, Name: "a100",
				Started: t0.Add(-40 * time.Minute), MeanTTFTms: fptr(412.5), HitRatio: fptr(0.5), OK: 58, Failed: 2, Complete: true},
			{ID: "20260504-080000-random-prefill", Dir: "/runs/20260504-080000-random-prefill", Workload: config.RandomPrefill,
				Started: t0.Add(-90 * time.Minute), MeanTTFTms: fptr(1532.0), OK: 10, Complete: true, Interrupted: true},
			{ID: "20260503-230000-cache-probe", Dir: "/runs/20260503-230000-cache-probe", Workload: config.CacheProbe},
		},
	}
}

// fakeSource is a runner stand-in with a fixed snapshot.
type fakeSource struct {
	events chan bench.Event
	snap   bench.Snapshot
}

func (f *fakeSource) Events() <-chan bench.Event { return f.events }
func (f *fakeSource) Snapshot() bench.Snapshot   { return f.snap }
func (f *fakeSource) Run(ctx context.Context) bench.Finish {
	<-ctx.Done()
	return bench.Finish{ExitCode: 130}
}
func (f *fakeSource) Abort() {}

func liveSnapshot() bench.Snapshot {
	s := bench.Snapshot{
		Phase: "measured", PhaseDone: 12, PhaseTotal: 20,
		Started: t0, Elapsed: 14 * time.Second, PhaseStart: t0.Add(4 * time.Second),
		InFlight: 3, Sent: 20, CPUPercent: 12, Cores: 8,
	}
	s.Done, s.Failed = 12, 1
	s.MeanTTFTms, s.P99TTFTms = 123.4, 456.7
	s.Cold, s.Reused, s.Unverified = 2, 9, 1
	s.HitRatio = fptr(0.82)
	s.ServerHitRate = fptr(0.79)
	s.MaxDispatchLagMs = 0.4
	s.TimingErrorP99Ms = fptr(0.35)
	for i := 0; i < 10; i++ {
		s.Series = append(s.Series, stats.Point{
			Second: i, Requests: 1 + i%3,
			TTFTP50ms: 80 + float64(i%4)*10, TTFTMaxms: 150 + float64(i%5)*40,
			OutputTPS: 300 + float64(i)*20, InputTPS: 2000 + float64(i%3)*500,
		})
	}
	return s
}

func finishedResult(id, phase, state string, ttft float64) *sender.Result {
	return &sender.Result{RequestID: id, Phase: phase, Successful: true, TTFT: fptr(ttft), CacheState: state,
		PromptTokens: iptr(2010), CachedTokens: iptr(1600), CompletionTokens: iptr(16)}
}

func liveEvents() []bench.Event {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	failed := &sender.Result{RequestID: "doc4_q0", Phase: "measured", Error: sptr("HTTP 500"), ErrorDetail: sptr("internal error"), CacheState: "unverified"}
	return []bench.Event{
		{Kind: bench.RunStarted, Time: at(0)},
		{Kind: bench.LogLine, Time: at(0), Text: "num_documents: 5 (1 GB x 10000 tokens/GB / 2000)"},
		{Kind: bench.PhaseChanged, Time: at(0), Phase: "warmup", Total: 5},
		{Kind: bench.RequestFinished, Time: at(1), Result: finishedResult("warmup_doc0", "warmup", "cold", 0.2125)},
		{Kind: bench.PhaseChanged, Time: at(4), Phase: "measured", Total: 20},
		{Kind: bench.RequestFinished, Time: at(5), Result: finishedResult("doc0_q0", "measured", "reused", 0.0843)},
		{Kind: bench.RequestFinished, Time: at(6), Result: finishedResult("doc1_q0", "measured", "cold", 0.2011)},
		{Kind: bench.RequestFinished, Time: at(7), Result: failed},
		{Kind: bench.RequestFinished, Time: at(8), Result: finishedResult("doc2_q0", "measured", "unverified", 0.0951)},
		{Kind: bench.LogLine, Time: at(9), Text: "dispatch lag reached 12.0 ms: the client is sending late", Warn: true},
	}
}

func finishedSummary() *record.Summary {
	cfg := config.Default()
	cfg.SetString("workload", config.LongDocQA)
	cfg.SetString("model", "kvbench-sim")
	cfg.SetString("kv_cache_volume", "1")
	cfg.SetString("tokens_per_gb_kvcache", "10000")
	s := &record.Summary{SchemaVersion: 1, Config: record.SummaryConfig(cfg, "builtin", "/runs/20260504-093000-long-doc-qa")}
	s.Tool.Name, s.Tool.Version = "kvbench", "dev"
	s.Run = record.RunInfo{ID: "20260504-093000-long-doc-qa", StartedAt: "2026-05-04T09:30:00Z", FinishedAt: "2026-05-04T09:30:20Z", ExitCode: 1}
	s.Results = stats.Results{TotalRequests: 20, SuccessfulRequests: 19, FailedRequests: 1, ElapsedTime: 16,
		MeanTTFTms: fptr(123.4), P50TTFTms: fptr(98.1), P90TTFTms: fptr(301.2), P99TTFTms: fptr(456.7),
		InputThroughput: 2400, OutputThroughput: 19, TotalInputTokens: 38190, TotalOutputTokens: 304}
	s.Cache = stats.Cache{Cold: 3, Reused: 15, Unverified: 2, PromptTokens: 38190, CachedTokens: 30400, HitRatio: fptr(0.796)}
	s.Workload = map[string]any{"num_documents": 5, "expectation": &record.Expectation{
		Expected: "every question reuses its document (warmed up beforehand); the 5 documents (10,000 tokens) fit the built-in engine's GPU cache (8 GB, 80,000 tokens)",
		Verdict:  record.VerdictNotMet,
		Reason:   "questions: 15/18 reused their document (a hit caches at least half of its 2,000 tokens); 1 failed (not judged)",
	}}
	return s
}
