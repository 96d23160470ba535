package workload

import (
	"context"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/config"
)

// TestAbsurdPlansAreRefused: plans within every flag's range but far
// beyond memory are refused before anything is built, naming the flags;
// the defaults pass.
func TestAbsurdPlansAreRefused(t *testing.T) {
	old := MemoryLimit
	MemoryLimit = func() float64 { return 4 << 30 }
	t.Cleanup(func() { MemoryLimit = old })
	cases := []struct {
		workload string
		set      map[string]any
		tpg      int
		want     string // "" when it must pass
	}{
		{config.RandomPrefill, nil, 6000, ""},
		{config.LongDocQA, nil, 6000, ""},
		{config.MultiRoundChat, nil, 6000, ""},
		{config.LongDocPermutator, nil, 6000, ""},
		{config.PrefixSuffixTuner, nil, 6000, ""},
		{config.RandomPrefill, map[string]any{"rp_num_requests": 1_000_000, "rp_request_length": 10_000_000}, 6000, "--rp-num-requests or --rp-request-length"},
		{config.LongDocQA, map[string]any{"kv_cache_volume": 1e6, "ldqa_document_length": 1}, config.MaxTokensPerGB, "--kv-cache-volume"},
		{config.MultiRoundChat, map[string]any{"kv_cache_volume": 1e6, "mrc_shared_prompt_length": 1, "mrc_chat_history_length": 0}, config.MaxTokensPerGB, "--kv-cache-volume"},
		{config.LongDocPermutator, map[string]any{"ldp_num_contexts": 20, "ldp_num_permutations": 1_000_000}, 6000, "--ldp-num-permutations"},
		{config.PrefixSuffixTuner, map[string]any{"psf_thrash": 1e6}, config.MaxTokensPerGB, "--psf-thrash"},
	}
	for _, c := range cases {
		cfg := config.Default()
		cfg.Set("workload", c.workload)
		for k, v := range c.set {
			if err := cfg.Set(k, v); err != nil {
				t.Fatal(err)
			}
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%s %v must be within the ranges: %v", c.workload, c.set, err)
		}
		_, err := New(context.Background(), Params{Config: cfg, TokensPerGB: c.tpg, Seed: 1})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s defaults refused: %v", c.workload, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "in memory")):
			t.Errorf("%s %v: got %v, want a refusal naming %s", c.workload, c.set, err, c.want)
		}
	}
}
