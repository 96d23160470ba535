package e2e

import (
	"slices"
	"testing"

	"github.com/kvbench/kvbench/sim/simtest"
)

func cacheStates(t *testing.T, r runResult) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, q := range r.Requests {
		if q["phase"] == "measured" {
			out[q["cache_state"].(string)]++
		}
	}
	return out
}

// Reruns of random-prefill against one warm engine: cold every time with
// the default salt, all reused the second time with --prompt-salt none
// (LMCache's prompts), cold again after --reset-cache.
func TestPromptSaltAndResetCache(t *testing.T) {
	t.Parallel()
	url := simtest.Start(t, nil)
	rp := []string{"--engine-url", url, "--workload", "random-prefill", "--tokens-per-gb-kvcache", "1000",
		"--rp-num-requests", "4", "--rp-request-length", "300"}
	for i := range 4 {
		args := rp
		if i >= 2 {
			// The workload's messages joined into a completions prompt
			// are salted as well.
			args = append(slices.Clone(rp), "--endpoint", "completions")
		}
		r := kvbench(t, args...)
		if r.Code != 0 {
			t.Fatalf("auto run %d: exit %d\n%s", i, r.Code, r.Stderr)
		}
		if got := cacheStates(t, r); got["cold"] != 4 {
			t.Errorf("auto run %d (%v): states %v, want 4 cold", i, args[len(args)-1], got)
		}
		if cfg := r.Summary["config"].(map[string]any); cfg["prompt_salt"] != "auto" {
			t.Errorf("config prompt_salt %v", cfg["prompt_salt"])
		}
		if r.Summary["cache_reset"] != nil {
			t.Errorf("cache_reset %v without --reset-cache", r.Summary["cache_reset"])
		}
	}
	none := append(append([]string{}, rp...), "--prompt-salt", "none")
	first := kvbench(t, none...)
	second := kvbench(t, none...)
	if got := cacheStates(t, second); got["reused"] != 4 || first.Code != 0 || second.Code != 0 {
		t.Errorf("second run with --prompt-salt none: states %v, want 4 reused", got)
	}
	if cfg := second.Summary["config"].(map[string]any); cfg["prompt_salt"] != "none" {
		t.Errorf("config prompt_salt %v", cfg["prompt_salt"])
	}
	reset := kvbench(t, append(none, "--reset-cache")...)
	if reset.Code != 0 || reset.Summary["cache_reset"] != "POST /reset_prefix_cache" {
		t.Fatalf("--reset-cache: exit %d cache_reset %v\n%s", reset.Code, reset.Summary["cache_reset"], reset.Stderr)
	}
	if got := cacheStates(t, reset); got["cold"] != 4 {
		t.Errorf("after --reset-cache: states %v, want 4 cold", got)
	}
}
