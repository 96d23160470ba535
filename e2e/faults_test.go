package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/simtest"
)

// TestSimulatorFaultsAsRecorded runs the binary against a simulator with
// each fault at rate 1 and checks the error code the record names.
func TestSimulatorFaultsAsRecorded(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		configure func(*sim.Config)
		args      []string
		error     string // the record's error code, "" for none
		reason    string // unverified_reason
	}{
		{"http 500", func(c *sim.Config) { c.FaultHTTP500 = 1 }, nil, "http_500", "error"},
		{"midstream error", func(c *sim.Config) { c.FaultMidstreamError = 1 }, nil, "stream_error", "error"},
		{"truncate", func(c *sim.Config) { c.FaultTruncate = 1 }, nil, "incomplete", "incomplete"},
		{"malformed", func(c *sim.Config) { c.FaultMalformed = 1 }, nil, "invalid_json", "error"},
		{"stall", func(c *sim.Config) { c.FaultStall = 30 * time.Second; c.FaultStallRate = 1 },
			[]string{"--idle-timeout", "300ms"}, "idle_timeout", "error"},
		{"drop usage", func(c *sim.Config) { c.FaultDropUsage = 1 }, nil, "", "usage_missing"},
		{"omit zero cached", func(c *sim.Config) { c.OmitZeroCached = true }, nil, "", "details_absent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url := simtest.Start(t, c.configure)
			args := append([]string{"--engine-url", url, "--workload", "random-prefill", "--tokens-per-gb-kvcache", "10000",
				"--rp-num-requests", "3", "--rp-request-length", "40"}, c.args...)
			r := kvbench(t, args...)
			wantCode := 1
			if c.error == "" {
				wantCode = 0
			}
			if r.Code != wantCode {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", r.Code, wantCode, r.Stderr)
			}
			if len(r.Requests) != 3 {
				t.Fatalf("%d requests recorded, want 3", len(r.Requests))
			}
			for _, q := range r.Requests {
				got := ""
				if e, ok := q["error"].(string); ok {
					got = e
				}
				if got != c.error {
					t.Errorf("%s: error %q, want %q (detail %v)", q["request_id"], got, c.error, q["error_detail"])
				}
				if q["cache_state"] != "unverified" || q["unverified_reason"] != c.reason {
					t.Errorf("%s: state %v reason %v, want unverified/%s", q["request_id"], q["cache_state"], q["unverified_reason"], c.reason)
				}
				if q["output_sha256"] != nil && c.error != "" {
					t.Errorf("%s: a failed request must have no fingerprint", q["request_id"])
				}
			}
		})
	}
}

// TestLMCacheURLAgainstSimulator resolves tokens-per-GB from the
// simulator's LMCache-shaped /status.
func TestLMCacheURLAgainstSimulator(t *testing.T) {
	t.Parallel()
	url := simtest.Start(t, func(c *sim.Config) { c.TokensPerGB = 4096 })
	r := kvbench(t, "--engine-url", url, "--lmcache-url", url, "--workload", "long-doc-qa",
		"--kv-cache-volume", "1", "--ldqa-document-length", "1000", "--ldqa-query-per-document", "1")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	cfg := r.Summary["config"].(map[string]any)
	if cfg["tokens_per_gb_kvcache"].(float64) != 4096 {
		t.Fatalf("tokens per GB %v, want 4096 from /status", cfg["tokens_per_gb_kvcache"])
	}
	// 1 GB x 4096 / 1000 -> 4 documents, one question each.
	if got := len(r.byPhase("measured")); got != 4 {
		t.Fatalf("%d measured requests, want 4", got)
	}
	if w := r.workload(t); fmt.Sprint(w["num_documents"]) != "4" {
		t.Fatalf("num_documents %v", w["num_documents"])
	}
	if !strings.Contains(r.Stdout, "Tokens per GB") {
		t.Fatalf("summary lacks the tokens-per-GB line")
	}
}
