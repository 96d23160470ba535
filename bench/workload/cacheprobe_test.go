package workload

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
)

func TestParseTokenIDs(t *testing.T) {
	ids, err := ParseTokenIDs([]byte(" [1, 2, 4294967295, 0]\n"))
	if err != nil || !slices.Equal(ids, []uint32{1, 2, 4294967295, 0}) {
		t.Fatalf("ids %v err %v", ids, err)
	}
	for _, bad := range []string{`[]`, `null`, `{}`, `[1, 2.0]`, `[8.0]`, `[-1]`, `[4294967296]`, `["5"]`, `[true]`, `[1e3]`, `[1] [2]`, `[1,`, ``} {
		if _, err := ParseTokenIDs([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestCacheProbePromptFileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`[1, 2.5]`), 0o644)
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte(`[]`), 0o644)
	for _, path := range []string{bad, empty, filepath.Join(dir, "missing.json")} {
		p := mkParams(t, config.CacheProbe, 0, map[string]any{"cp_prompt_file": path})
		_, err := New(context.Background(), p)
		if err == nil || !strings.Contains(err.Error(), "--cp-prompt-file "+path+":") {
			t.Errorf("%s: error %v must name the flag and the file", filepath.Base(path), err)
		}
	}
}

// fakeProbeEnv answers every request with fixed receipts, decided by id.
func fakeProbeEnv(t *testing.T, answer func(req *sender.Request) sender.Result) (Env, *[]*sender.Request) {
	var mu sync.Mutex
	var sent []*sender.Request
	return Env{
		Send: func(ctx context.Context, req *sender.Request) (sender.Result, bool) {
			mu.Lock()
			sent = append(sent, req)
			mu.Unlock()
			r := answer(req)
			r.RequestID, r.Phase = req.ID, req.Phase
			return r, true
		}, Phase: func(string, int, time.Duration) {}, Logf: func(string, ...any) {}, Now: time.Now,
	}, &sent
}

func probeResult(state string, prompt, cached int, out string) sender.Result {
	p, c, n := prompt, cached, 10
	r := sender.Result{Successful: true, Complete: true, CacheState: state, PromptTokens: &p, CachedTokens: &c, CompletionTokens: &n}
	if out != "" {
		r.OutputSHA256 = &out
	}
	return r
}

func TestCacheProbeRunQualified(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ids.json")
	os.WriteFile(file, []byte(`[5, 6, 7]`), 0o644)
	p := mkParams(t, config.CacheProbe, 0, map[string]any{
		"cp_prompt_file": file, "cp_repeats": 2, "cp_streams": 3, "cp_tokens": 9,
		"cp_expected_prompt_tokens": 3, "cp_require_cold": true, "cp_require_reuse": true,
	})
	wl, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	env, sent := fakeProbeEnv(t, func(req *sender.Request) sender.Result {
		if req.ID == "first_0" {
			return probeResult(sender.StateCold, 3, 0, "h")
		}
		return probeResult(sender.StateReused, 3, 2, "h")
	})
	if err := wl.Run(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range *sent {
		ids = append(ids, r.ID+"/"+r.Phase)
		if r.Endpoint != sender.Completions || !slices.Equal(r.PromptIDs, []uint32{5, 6, 7}) || r.MaxTokens != 9 ||
			r.Temperature != 0 || r.Seed == nil || *r.Seed != 1234 {
			t.Fatalf("request %s: %+v", r.ID, r)
		}
	}
	slices.Sort(ids[3:])
	want := []string{"first_0/first", "repeated_0/repeated", "repeated_1/repeated", "concurrent_0/concurrent", "concurrent_1/concurrent", "concurrent_2/concurrent"}
	if !slices.Equal(ids, want) {
		t.Fatalf("ids %v, want %v", ids, want)
	}
	o := wl.Outcome()
	if o.Failed || len(o.Reasons) != 0 {
		t.Fatalf("not qualified: %v", o.Reasons)
	}
	b := o.Block.(map[string]any)
	rows := b["rows"].([]cpRow)
	if b["qualified"] != true || len(rows) != 6 || rows[5].RequestID != "concurrent_2" || rows[5].EqualFirstOutput == nil || !*rows[5].EqualFirstOutput {
		t.Fatalf("block %+v", b)
	}
	if rows[3].EqualFirstTokens != nil {
		t.Fatal("without token hashes equal_first_tokens must be null")
	}
}

func TestCacheProbeDefaultPrompt(t *testing.T) {
	p := mkParams(t, config.CacheProbe, 0, map[string]any{"cp_repeats": 0, "cp_streams": 1})
	wl, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	env, sent := fakeProbeEnv(t, func(*sender.Request) sender.Result { return probeResult(sender.StateCold, 300, 0, "h") })
	wl.Run(context.Background(), env)
	if len(*sent) != 2 {
		t.Fatalf("%d requests", len(*sent))
	}
	r := (*sent)[0]
	if r.Endpoint != sender.Chat || len(r.Messages) != 1 || !strings.Contains(r.Messages[0].Content, "Four score and seven years ago") {
		t.Fatalf("default prompt request %+v", r)
	}
}

func TestCacheProbeReasons(t *testing.T) {
	ids := []string{"first_0", "repeated_0", "concurrent_0", "concurrent_1"}
	phases := []string{sender.PhaseFirst, sender.PhaseRepeated, sender.PhaseConcurrent, sender.PhaseConcurrent}
	mk := func(rs ...sender.Result) []*sender.Result {
		out := make([]*sender.Result, len(rs))
		for i := range rs {
			out[i] = &rs[i]
		}
		return out
	}
	good := mk(probeResult(sender.StateCold, 50, 0, "a"), probeResult(sender.StateReused, 50, 48, "a"),
		probeResult(sender.StateReused, 50, 48, "a"), probeResult(sender.StateReused, 50, 48, "a"))
	if r := cacheProbeReasons(cacheProbeRows(ids, phases, good), 50, true, true); len(r) != 0 {
		t.Fatalf("good probe: %v", r)
	}
	if r := cacheProbeReasons(cacheProbeRows(ids, phases, good), 51, false, false); len(r) != 4 || r[0] != "first_0: prompt_tokens 50, expected 51" {
		t.Fatalf("wrong expected prompt tokens: %v", r)
	}

	errCode := "http_503"
	failed := probeResult(sender.StateUnverified, 50, 0, "")
	failed.Error, failed.Successful = &errCode, false
	usageOnly := probeResult(sender.StateReused, 50, 48, "")
	details := "details_absent"
	unverified := probeResult(sender.StateUnverified, 50, 0, "a")
	unverified.UnverifiedReason = &details
	bad := mk(probeResult(sender.StateReused, 50, 16, "a"), unverified, usageOnly, probeResult(sender.StateReused, 50, 48, "b"))
	got := cacheProbeReasons(cacheProbeRows(ids, phases, bad), 0, true, true)
	want := []string{
		"first_0: not cold (reused)",
		"repeated_0: not reused (unverified: details_absent)",
		"concurrent_0: no text or reasoning",
		"concurrent_1: output differs from first_0",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("reasons\n got %q\nwant %q", got, want)
	}
	withErr := mk(probeResult(sender.StateCold, 50, 0, "a"), failed, probeResult(sender.StateReused, 50, 48, "a"), probeResult(sender.StateReused, 50, 48, "a"))
	rows := cacheProbeRows(ids, phases, withErr)
	if rows[1].EqualFirstOutput != nil {
		t.Fatal("a failed request's comparison must be null")
	}
	if got := cacheProbeReasons(rows, 0, false, false); !slices.Equal(got, []string{"repeated_0: error http_503"}) {
		t.Fatalf("error reasons %v", got)
	}
	notSent := []*sender.Result{good[0], good[1], good[2], nil}
	if got := cacheProbeReasons(cacheProbeRows(ids, phases, notSent), 0, false, false); !slices.Equal(got, []string{"concurrent_1: not sent"}) {
		t.Fatalf("not sent: %v", got)
	}
}
