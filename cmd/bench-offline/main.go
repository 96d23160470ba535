// Command bench-offline writes the record of a large random-prefill run
// for measuring kvbench's offline tools (merge, report, compare, results;
// scripts/bench-offline): the folders of a sharded run, each with its
// config.json and requests.jsonl lines exactly as a run writes them
// (sender.Result through encoding/json, in finish order), and nothing
// else. `kvbench merge` of them is then an ordinary run folder.
//
//	bench-offline -out DIR -n 1000000 -shards 8
//
// With -open RUN it instead opens a run folder as the results explorer
// does before its first page of that run (the summary, computed for a
// folder without one, and the first rows) and prints the seconds it took.
//
//	bench-offline -open RUN
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
)

func main() {
	out := flag.String("out", "", "folder to write the shard folders in (shard-0, shard-1...)")
	n := flag.Int("n", 1_000_000, "requests of the whole run")
	shards := flag.Int("shards", 1, "shards to split them over")
	open := flag.String("open", "", "a run folder to open as the explorer does (timed)")
	flag.Parse()
	if *open != "" {
		start := time.Now()
		if _, err := runs.Load(*open); err != nil {
			fmt.Fprintln(os.Stderr, "bench-offline:", err)
			os.Exit(1)
		}
		if _, err := runs.Head(*open, 256); err != nil {
			fmt.Fprintln(os.Stderr, "bench-offline:", err)
			os.Exit(1)
		}
		fmt.Printf("%.2f\n", time.Since(start).Seconds())
		return
	}
	if *out == "" || *n < 1 || *shards < 1 {
		fmt.Fprintln(os.Stderr, "bench-offline: -out DIR, -n >= 1 and -shards >= 1 are needed")
		os.Exit(2)
	}
	if err := write(*out, *n, *shards); err != nil {
		fmt.Fprintln(os.Stderr, "bench-offline:", err)
		os.Exit(1)
	}
}

func write(root string, n, shards int) error {
	cfg := config.Default()
	cfg.Set("workload", config.RandomPrefill)
	cfg.Set("model", "m")
	cfg.Set("tokens_per_gb_kvcache", 10000)
	cfg.Set("rp_num_requests", n)
	cfg.Set("start_at", "2026-01-02T03:04:05Z")
	cfg.Set("run_key", "offline-bench")
	base := 1_767_323_045.0
	for s := range shards {
		cfg.Set("shard", fmt.Sprintf("%d/%d", s, shards))
		dir := filepath.Join(root, fmt.Sprintf("shard-%d", s))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, record.ConfigFile), cfg.RecordJSON(), 0o644); err != nil {
			return err
		}
		f, err := os.Create(filepath.Join(dir, record.RequestsFile))
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		// Lines are written in finish order, as a run writes them: a
		// window of 256 requests in flight at a time is sorted by finish.
		var window []sender.Result
		flush := func(all bool) error {
			slices.SortFunc(window, func(a, b sender.Result) int {
				switch {
				case a.FinishTime < b.FinishTime:
					return -1
				case a.FinishTime > b.FinishTime:
					return 1
				}
				return 0
			})
			k := len(window) / 2
			if all {
				k = len(window)
			}
			for i := range window[:k] {
				b, err := json.Marshal(&window[i])
				if err != nil {
					return err
				}
				w.Write(b)
				w.WriteByte('\n')
			}
			window = append(window[:0], window[k:]...)
			return nil
		}
		for i := s; i < n; i += shards {
			window = append(window, result(i, s, shards, base))
			if len(window) == 256 {
				if err := flush(false); err != nil {
					return err
				}
			}
		}
		if err := flush(true); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// result is request i: 1000 requests a second, TTFT and latency varying
// by id, every third one a cache hit, one in 500 failed.
func result(i, shard, shards int, base float64) sender.Result {
	submit := base + float64(i)*0.001
	sched := submit - 0.0002
	ttft := 0.05 + float64(i%97)*0.001
	lat := 0.5 + float64(i%89)*0.01
	first, finish := submit+ttft, submit+lat
	prompt, cached, out := 10000, 0, 16
	state := sender.StateCold
	if i%3 == 0 {
		cached, state = 9984, sender.StateReused
	}
	sha := strings.Repeat(strconv.FormatInt(int64(i%16), 16), 64)
	lag, dec, itl := 0.2, 30.0, 29.5+float64(i%7)
	reason := "length"
	r := sender.Result{
		RequestID: fmt.Sprintf("prefill_%d", i), Phase: sender.PhaseMeasured, Successful: true,
		ScheduledTime: &sched, SubmitTime: submit, FirstTokenTime: &first, FinishTime: finish,
		TTFT: &ttft, RequestLatency: lat, DispatchLagMs: &lag, PromptTokens: &prompt, CachedTokens: &cached,
		CompletionTokens: &out, CacheN: &cached, CacheState: state, Complete: true, FinishReason: &reason,
		Chunks: 16, DecodeSpeed: &dec, ITLMeanMs: &itl, ITLP50Ms: &itl, ITLP95Ms: &itl,
		OutputSHA256: &sha,
	}
	if shards > 1 {
		r.Shard = &shard
	}
	if i%500 == 499 {
		code, detail := "http_503", "engine overloaded"
		r.Successful, r.Complete, r.Error, r.ErrorDetail = false, false, &code, &detail
		r.TTFT, r.FirstTokenTime, r.CompletionTokens, r.Chunks = nil, nil, nil, 0
		r.DecodeSpeed, r.ITLMeanMs, r.ITLP50Ms, r.ITLP95Ms, r.FinishReason = nil, nil, nil, nil, nil
		r.CacheState = sender.StateUnverified
		u := "error"
		r.UnverifiedReason = &u
	}
	return r
}
