package workload

import (
	"context"
	"fmt"
	"testing"

	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
)

// A trace replay rebuilt from a record (kvbench merge) opens no file and
// asks no engine: what it knows of the trace comes from the shards'
// blocks. Its ids say their shard only for a Mooncake trace.
func TestTraceReplayFromRecord(t *testing.T) {
	p := mkParams(t, config.TraceReplay, 0, map[string]any{"tr_file": "/nonexistent/trace.jsonl"})
	p.FromRecord = true
	wl, err := New(context.Background(), p)
	if err != nil {
		t.Fatalf("a replay rebuilt from its record must not read its trace: %v", err)
	}
	w := wl.(*TraceReplay)
	block := func(format, exactness string, tooLong int) []byte {
		return fmt.Appendf(nil, `{"skipped_invalid":2,"skipped_too_long":%d,"prompt_mode":"text","prompt_exactness":%q,`+
			`"trace_span_s":12.5,"format":%q,"block_size":16,"kv_budget_tokens":null,"max_input_tokens":4096}`, tooLong, exactness, format)
	}
	for _, b := range [][]byte{block("mooncake", "verified", 1), block("mooncake", "verified", 2)} {
		if err := w.AddShardBlock(b); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []string{`{}`, `{"skipped_invalid":-1,"skipped_too_long":0,"prompt_mode":"text","prompt_exactness":"exact","trace_span_s":1}`,
		`{"skipped_invalid":0,"skipped_too_long":0,"prompt_mode":"\u001b]0;x\u0007","prompt_exactness":"exact","trace_span_s":1}`} {
		if err := w.AddShardBlock([]byte(bad)); err == nil {
			t.Errorf("block %s accepted", bad)
		}
	}
	if w.skippedInvalid != 2 || w.skippedTooLong != 3 || w.traceSpan.Seconds() != 12.5 || w.format != "mooncake" || w.block != 16 ||
		w.mode != modeText || w.exactness != verified || w.maxInput != 4096 || w.lruTokens != 0 {
		t.Fatalf("from the blocks: %+v", w)
	}
	for id, want := range map[string]int{"trace_0": 0, "trace_7": 1, "trace_12": 0} {
		if got, ok := w.ShardOf(id, 2); !ok || got != want {
			t.Errorf("mooncake %s: shard %d (%v), want %d", id, got, ok, want)
		}
	}
	if _, ok := w.ShardOf("prefill_1", 2); ok {
		t.Error("prefill_1 is no trace request")
	}
	// Verified text prompts are input_length tokens: prompt_tokens stands
	// for it. Estimated ones are not: the expected ratio is then unknown.
	n, c := 32, 16
	line := func() *sender.Result {
		return &sender.Result{RequestID: "trace_0", Phase: sender.PhaseMeasured, Successful: true, CacheState: sender.StateReused,
			PromptTokens: &n, CachedTokens: &c, TraceExpectation: &sender.TraceExpectation{ExpectedCachedTokens: 16}}
	}
	w.Observe(line())
	if a := w.agg; a.input != 32 || a.expected != 16 || a.valid != 1 {
		t.Fatalf("verified: %+v", a)
	}
	if err := w.AddShardBlock(block("mooncake", "estimated", 0)); err != nil {
		t.Fatal(err)
	}
	w.Observe(line())
	if a := w.agg; a.input != 32 || a.valid != 2 || w.exactness != estimated {
		t.Fatalf("estimated: %+v (%s)", a, w.exactness)
	}

	b := mkParams(t, config.TraceReplay, 0, map[string]any{"tr_file": "/nonexistent", "tr_format": "bailian"})
	b.FromRecord = true
	bw, err := New(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := bw.(ShardOwner).ShardOf("trace_3", 2); !ok || got != AnyShard {
		t.Errorf("bailian trace_3: %d %v, want AnyShard: a conversation's shard is not in its id", got, ok)
	}
}
