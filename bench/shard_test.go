package bench

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
)

// A shard given --start-at sends its share only, holds the measured phase
// until that time, and records its shard on every line and in its
// summary and config.
func TestShardWithStartAt(t *testing.T) {
	cfg := config.Default()
	cfg.Set("workload", config.RandomPrefill)
	cfg.Set("model", "m")
	cfg.Set("tokens_per_gb_kvcache", 1000)
	cfg.Set("rp_num_requests", 6)
	cfg.Set("rp_request_length", 20)
	cfg.Set("output_dir", t.TempDir())
	cfg.Set("shard", "1/3")
	startAt := time.Now().Add(300 * time.Millisecond).UTC()
	cfg.Set("start_at", startAt.Format(time.RFC3339Nano))
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	r, err := New(context.Background(), &Prepared{Config: cfg, EngineURL: testEngine(t)})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for range r.Events() {
		}
	}()
	fin := r.Run(context.Background())
	sum, code := fin.Summary, fin.ExitCode
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var ids []string
	_, err = record.ReadRequests(r.Dir(), func(res *sender.Result) error {
		ids = append(ids, res.RequestID)
		if res.Shard == nil || *res.Shard != 1 {
			t.Errorf("%s: shard %v, want 1", res.RequestID, res.Shard)
		}
		if at := float64(startAt.UnixNano()) / 1e9; res.SubmitTime < at {
			t.Errorf("%s submitted at %.3f, before --start-at %.3f", res.RequestID, res.SubmitTime, at)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	if want := []string{"prefill_1", "prefill_4"}; !slices.Equal(ids, want) {
		t.Fatalf("shard 1/3 of 6 sent %v, want %v", ids, want)
	}
	if sum.StartSkewMs == nil || *sum.StartSkewMs < 0 {
		t.Fatalf("start_skew_ms = %v, want >= 0", sum.StartSkewMs)
	}
	s, err := record.ReadSummary(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range []any{s.Shard, mustField(t, s.Config, "shard")} {
		if v, _ := record.Field(block, "count"); v == nil || v.(interface{ String() string }).String() != "3" {
			t.Fatalf("shard block %v: count %v, want 3", block, v)
		}
		if v, _ := record.Field(block, "start_at"); v != startAt.Format(time.RFC3339Nano) {
			t.Fatalf("shard block start_at %v, want %s", v, startAt.Format(time.RFC3339Nano))
		}
	}
	c := config.Default()
	if err := c.LoadJSON(r.Dir() + "/" + record.ConfigFile); err != nil {
		t.Fatalf("a shard's config.json must load as a config: %v", err)
	}
	if c.String("shard") != "" {
		t.Fatalf("a replayed shard config is a whole run unless --shard is given, got shard %q", c.String("shard"))
	}
}

func mustField(t *testing.T, v any, key string) any {
	t.Helper()
	f, ok := record.Field(v, key)
	if !ok {
		t.Fatalf("no %s in %v", key, v)
	}
	return f
}

func TestStartAtInThePast(t *testing.T) {
	cfg := config.Default()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cfg.Set("start_at", now.Add(-4*time.Second).Format(time.RFC3339))
	if err := cfg.CheckStartAt(now); err != nil {
		t.Fatalf("4 s ago is accepted: %v", err)
	}
	cfg.Set("start_at", now.Add(-6*time.Second).Format(time.RFC3339))
	if err := cfg.CheckStartAt(now); err == nil {
		t.Fatal("6 s ago must be refused")
	}
	cfg.Set("start_at", "tomorrow")
	if err := cfg.Validate(); err == nil {
		t.Fatal("a start time that is not RFC 3339 must be refused")
	}
}

func TestShardWarnsAboutGammaSums(t *testing.T) {
	cfg := config.Default()
	cfg.Set("workload", config.RandomPrefill)
	cfg.Set("request_rate", "20")
	cfg.Set("shard", "0/4")
	if w := ShardWarnings(cfg); len(w) != 0 {
		t.Fatalf("poisson shards add up to poisson, no warning: %q", w)
	}
	cfg.Set("burstiness", 0.5)
	w := ShardWarnings(cfg)
	if len(w) != 1 || !strings.Contains(w[0], "sum of 4 gamma processes is not a gamma process") {
		t.Fatalf("gamma shards must warn: %q", w)
	}
	cfg.Set("shard", "0/1")
	if w := ShardWarnings(cfg); len(w) != 0 {
		t.Fatalf("an unsharded run does not warn: %q", w)
	}
}
