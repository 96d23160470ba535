package workload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/sim/simtest"
)

func writeLines(t *testing.T, lines []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func mooncakeLine(ts, in, out string, hashes string) string {
	return fmt.Sprintf(`{"timestamp": %s, "input_length": %s, "output_length": %s, "hash_ids": %s}`, ts, in, out, hashes)
}

// The lines of the issue: a prompt or a reply beyond any engine (they
// panicked, ran out of memory, or reached the engine as max_tokens
// 2^63-1), a 50M-token prompt, a timestamp that goes back. Without
// --tr-skip-invalid the first stops the run before anything is sent,
// naming its line; with it, each is counted and skipped, and what is
// sent is bounded.
func TestTraceReplayRefusesLinesBeyondTheBounds(t *testing.T) {
	big := make([]string, 97657)
	for i := range big {
		big[i] = fmt.Sprint(i)
	}
	lines := []string{
		mooncakeLine("0", "20", "2", "[1]"),
		mooncakeLine("1", "9223372036854775807", "1", "[1]"),
		mooncakeLine("2", "2000000000", "1", "[1]"),
		mooncakeLine("3", "50000000", "1", "["+strings.Join(big, ",")+"]"),
		mooncakeLine("4", "20", "9223372036854775807", "[1]"),
		mooncakeLine("10", "20", "3", "[2]"),
		mooncakeLine("5", "20", "1", "[3]"), // back in time
		mooncakeLine("11", "20", "4", "[1]"),
	}
	path := writeLines(t, lines)
	url := simtest.Start(t, bigSim(8))
	_, err := New(context.Background(), traceParams(t, url, 0, map[string]any{"tr_file": path}))
	var unavailable *UnavailableError
	if err == nil || errors.As(err, &unavailable) ||
		!strings.Contains(err.Error(), "line 2: input_length 9223372036854775807 is above the limit of 10000000 tokens in one prompt") {
		t.Fatalf("error %v: want a usage error naming line 2", err)
	}

	wl, err := New(context.Background(), traceParams(t, url, 0, map[string]any{"tr_file": path, "tr_skip_invalid": true, "tr_speedup": 1000.0}))
	if err != nil {
		t.Fatal(err)
	}
	w := wl.(*TraceReplay)
	env, results := simEnv(t, url)
	var mu sync.Mutex
	var maxTokens []int
	send := env.Send
	env.Send = func(ctx context.Context, req *sender.Request) (sender.Result, bool) {
		mu.Lock()
		maxTokens = append(maxTokens, req.MaxTokens)
		mu.Unlock()
		return send(ctx, req)
	}
	if err := w.Run(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	res := results()
	if w.skippedInvalid != 5 || w.replayable != 3 || len(res) != 3 {
		t.Fatalf("skipped %d invalid, planned %d, sent %d; want 5, 3, 3", w.skippedInvalid, w.replayable, len(res))
	}
	for _, r := range res {
		if !r.Successful || *r.PromptTokens != 20 {
			t.Errorf("%s: successful %v, prompt %v", r.RequestID, r.Successful, r.PromptTokens)
		}
	}
	for _, m := range maxTokens {
		if m < 1 || m > 4 {
			t.Errorf("max_tokens %d sent; the valid lines ask 2, 3 and 4", m)
		}
	}
}

// A speedup that would stretch the trace past a run's longest duration
// is refused before the engine is asked anything.
func TestTraceReplayRefusesAStretchLongerThanARun(t *testing.T) {
	path := writeLines(t, []string{mooncakeLine("0", "20", "1", "[1]"), mooncakeLine("10000000000", "20", "1", "[1]")}) // 10^7 s
	p := traceParams(t, "http://127.0.0.1:1", 0, map[string]any{"tr_file": path, "tr_speedup": 0.01})
	_, err := New(context.Background(), p)
	if err == nil || !strings.Contains(err.Error(), "--tr-speedup 0.01 stretches the trace's 10000000 s to 1000000000 s, longer than a run may last") {
		t.Errorf("error %v", err)
	}
	// With the load flags timing the releases, the timestamps are unused.
	p = traceParams(t, "http://127.0.0.1:1", 0, map[string]any{"tr_file": path, "tr_speedup": 0.01, "max_concurrency": 1})
	if _, err := New(context.Background(), p); err == nil || strings.Contains(err.Error(), "--tr-speedup") {
		t.Errorf("shaped: error %v, want the engine's (none listens)", err)
	}
}

// The speedup's range is a usage error naming the flag; its ends are
// accepted.
func TestTraceSpeedupRange(t *testing.T) {
	for v, ok := range map[float64]bool{1e-300: false, 0: false, -1: false, 9e-4: false, config.MinTraceSpeedup: true, 1: true, config.MaxTraceSpeedup: true, 1.1e6: false, 1e300: false} {
		c := config.Default()
		c.Set("workload", config.TraceReplay)
		c.Set("tr_speedup", v)
		err := c.Validate()
		if ok != (err == nil) || err != nil && !strings.HasPrefix(err.Error(), "--tr-speedup must be in [0.001, 1000000]") {
			t.Errorf("--tr-speedup %g: %v", v, err)
		}
	}
}

// Both passes over a sharded Bailian trace assign conversations alike,
// even when a conversation's first turns are too long to send: every
// short line goes out exactly once, each shard sends what it planned.
func TestTraceReplayShardsWithTooLongTurns(t *testing.T) {
	var lines []string
	for turn := 1; turn <= 4; turn++ { // conversations interleave, in time order
		for c := 0; c < 12; c++ {
			id, parent := 1000*turn+7*c+1, 1000*(turn-1)+7*c+1
			if turn == 1 {
				parent = -1
			}
			in := 16 * turn
			if turn <= 2 {
				in = 200 // over --tr-max-input-tokens
			}
			hashes := make([]string, (in+15)/16)
			for k := range hashes {
				hashes[k] = fmt.Sprint(1000*c + k)
			}
			lines = append(lines, fmt.Sprintf(`{"chat_id": %d, "parent_chat_id": %d, "timestamp": %d.%02d, "input_length": %d, "output_length": 1, "type": "text", "turn": %d, "hash_ids": [%s]}`,
				id, parent, turn, c, in, turn, strings.Join(hashes, ", ")))
		}
	}
	path := writeLines(t, lines)
	url := simtest.Start(t, bigSim(8))
	seen := map[string]int{}
	for i := 0; i < 3; i++ {
		p := traceParams(t, url, 0, map[string]any{"tr_file": path, "tr_speedup": 1e4, "tr_max_input_tokens": 100})
		p.Shard = config.Shard{Index: i, Count: 3}
		w, res := runTrace(t, p, url, 4)
		t.Logf("shard %d: planned %d sent %d", i, w.replayable, len(res))
		if w.replayable != len(res) {
			t.Errorf("shard %d: planned %d, sent %d", i, w.replayable, len(res))
		}
		for _, r := range res {
			seen[r.RequestID]++
		}
	}
	if len(seen) != 24 {
		t.Errorf("%d distinct requests sent, want the 24 short turns", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s sent by %d shards", id, n)
		}
	}
}
