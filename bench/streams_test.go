package bench

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/simtest"
)

// countingProxy forwards 127.0.0.1 connections to target and counts
// them; it is closed when the test ends.
func countingProxy(t *testing.T, target string) (url string, conns *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns = new(atomic.Int64)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	// The accept loop ends before the copies are waited for: it is the
	// only one to add to wg, and a connection it accepted last is in
	// open by then.
	accepting := make(chan struct{})
	t.Cleanup(func() {
		ln.Close()
		<-accepting
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	addr := strings.TrimPrefix(target, "http://")
	go func() {
		defer close(accepting)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			up, err := net.Dial("tcp", addr)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			open = append(open, c, up)
			mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); io.Copy(up, c); up.Close() }()
			go func() { defer wg.Done(); io.Copy(c, up); c.Close() }()
		}
	}()
	return "http://" + ln.Addr().String(), conns
}

func streamsConfig(t *testing.T, set map[string]any) *config.Config {
	t.Helper()
	cfg := config.Default()
	base := map[string]any{"workload": config.RandomPrefill, "model": "kvbench-sim", "output_dir": t.TempDir(),
		"rp_request_length": 16, "tokens_per_gb_kvcache": 1000}
	for k, v := range base {
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range set {
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

// TestRatedRunOpensThePlannedConnections: a rated random-prefill opens
// connections for the concurrency its rate plans, not one per request,
// and sends every request.
func TestRatedRunOpensThePlannedConnections(t *testing.T) {
	// The connections opened ahead, and a few more should the engine
	// have closed one; never one per request. That is the claim when the
	// client kept its schedule. A client that fell behind (a loaded
	// machine, -race) sends the late requests together and needs a
	// connection for each in flight, and net/http returns a finished
	// stream's connection to its pool from another goroutine, so a burst
	// dials a few more than it holds: such an attempt says little about
	// the plan and runs again (at most three times); the last one is
	// bound by what was in flight at once, which the load block records.
	// 300 requests at 300/s: a rate a client under -race on a loaded
	// machine can keep (at 2000/s it could not, and fell behind in every
	// attempt), and five requests for each connection planned.
	const n, attempts = 300, 3
	for attempt := 1; ; attempt++ {
		url, conns := countingProxy(t, simtest.Start(t, func(c *sim.Config) { c.ZeroLatency = true }))
		cfg := streamsConfig(t, map[string]any{"rp_num_requests": n, "request_rate": "300", "no_csv": true})
		r, err := New(context.Background(), &Prepared{Config: cfg, EngineURL: url + "/v1", TokensPerGB: 1000})
		if err != nil {
			t.Fatal(err)
		}
		// 300/s x 73.2 ms = 21.96 in flight: 2 x 21.96 + 4 x sqrt(21.96).
		if r.streams.Streams != 63 || r.streams.Flag != "--request-rate" {
			t.Fatalf("planned %+v, want 63 streams by --request-rate", r.streams)
		}
		go func() {
			for range r.Events() {
			}
		}()
		fin := r.Run(context.Background())
		if fin.ExitCode != 0 || fin.Summary.Results.SuccessfulRequests != n {
			t.Fatalf("exit %d, %d of %d requests", fin.ExitCode, fin.Summary.Results.SuccessfulRequests, n)
		}
		bound, behind := r.streams.Streams, false
		if l := fin.Summary.Load; l != nil && l.ObservedMaxConcurrency > bound {
			bound, behind = l.ObservedMaxConcurrency, true
		}
		got := conns.Load()
		if behind && attempt < attempts {
			t.Logf("attempt %d: the client fell behind (%d in flight at once, %d connections); again", attempt, bound, got)
			continue
		}
		if got < int64(r.streams.Streams) || got > int64(bound)+16 {
			t.Errorf("%d connections for %d requests planned at %d streams (at most %d in flight)", got, n, r.streams.Streams, bound)
		}
		return
	}
}

// TestDescriptorCheckFollowsThePlan: the descriptor limit is checked
// against the planned concurrency: with room for 1000 more descriptors,
// a rated random-prefill of a million requests fits, 3000 requests at
// once do not, and kv-tier-pressure's in-flight setting is checked too.
func TestDescriptorCheckFollowsThePlan(t *testing.T) {
	old := descriptorLimit
	descriptorLimit = func() int { return openFDs() + 1000 }
	t.Cleanup(func() { descriptorLimit = old })
	url := simtest.Start(t, nil)
	try := func(set map[string]any) error {
		cfg := streamsConfig(t, set)
		r, err := New(context.Background(), &Prepared{Config: cfg, EngineURL: url + "/v1", TokensPerGB: 1000})
		if err == nil {
			r.rec.Close()
		}
		return err
	}
	if err := try(map[string]any{"rp_num_requests": 1_000_000, "request_rate": "1000"}); err != nil {
		t.Errorf("a million requests at 1000/s refused: %v", err)
	}
	err := try(map[string]any{"rp_num_requests": 3000})
	if !IsUsage(err) || !strings.Contains(err.Error(), "--rp-num-requests 3000") || !strings.Contains(err.Error(), "ulimit -n") {
		t.Errorf("3000 requests at once in 1000 descriptors: %v", err)
	}
	err = try(map[string]any{"rp_num_requests": 1_000_000, "request_rate": "100000"})
	if !IsUsage(err) || !strings.Contains(err.Error(), "--request-rate 100000") || !strings.Contains(err.Error(), "--max-concurrency") {
		t.Errorf("a million requests at 100,000/s in 1000 descriptors: %v", err)
	}
	err = try(map[string]any{"workload": config.KVTierPressure, "ktp_pool_size": 4000, "ktp_docs_per_request": 1,
		"ktp_context_length": 8, "ktp_num_requests": 4000, "ktp_num_inflight_requests": 3000})
	if !IsUsage(err) || !strings.Contains(err.Error(), "--ktp-num-inflight-requests 3000") {
		t.Errorf("kv-tier-pressure with 3000 in flight in 1000 descriptors: %v", err)
	}
}

// TestStreamedCSVRun: a run's bench_results.csv, streamed as its
// requests finished, has one row per measured request, in the order of
// requests.jsonl.
func TestStreamedCSVRun(t *testing.T) {
	url := simtest.Start(t, func(c *sim.Config) { c.ZeroLatency = true })
	cfg := streamsConfig(t, map[string]any{"rp_num_requests": 300, "max_concurrency": 8})
	r, err := New(context.Background(), &Prepared{Config: cfg, EngineURL: url + "/v1", TokensPerGB: 1000})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for range r.Events() {
		}
	}()
	if fin := r.Run(context.Background()); fin.ExitCode != 0 {
		t.Fatalf("exit %d", fin.ExitCode)
	}
	csv, err := os.ReadFile(filepath.Join(r.Dir(), "bench_results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines, err := os.ReadFile(filepath.Join(r.Dir(), "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSuffix(string(csv), "\r\n"), "\r\n")[1:]
	ids := strings.Split(strings.TrimSpace(string(lines)), "\n")
	if len(rows) != 300 || len(ids) != 300 {
		t.Fatalf("%d rows, %d lines, want 300 of each", len(rows), len(ids))
	}
	for i, row := range rows {
		id, _, _ := strings.Cut(row, ",")
		if !strings.HasPrefix(ids[i], `{"request_id":"`+id+`"`) {
			t.Fatalf("row %d is %s, line %d is %.40s", i, id, i, ids[i])
		}
	}
	entries, _ := os.ReadDir(r.Dir())
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("%s left in the run folder", e.Name())
		}
	}
}
