package workload

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/config"
)

// Memory a plan holds, per token of prompt text built ahead ("hi " words
// plus the request body while in flight) and per request (the request,
// its result and its share of the statistics).
const (
	bytesPerToken   = 8
	bytesPerRequest = 2048
)

// Plan is the size of what a workload builds before and while it runs.
type Plan struct {
	Requests float64 // requests the plan holds
	Tokens   float64 // prompt tokens built and held at once
	Bytes    float64 // estimated memory
	// Flags are the settings that drive the size, for the message.
	Flags []string
}

// EstimatePlan sizes the named workload's plan from its settings with
// float arithmetic, so absurd values are seen before anything is built.
// ok is false for workloads whose size is bounded by their flags' ranges
// alone.
func EstimatePlan(c *config.Config, tokensPerGB int) (Plan, bool) {
	f := func(key string) float64 {
		if fl, ok := config.Lookup(key); ok && fl.Kind == config.Float {
			return c.Float(key)
		}
		return float64(c.Int(key))
	}
	budget := f("kv_cache_volume") * float64(tokensPerGB) // tokens
	var p Plan
	switch c.Workload() {
	case config.RandomPrefill:
		n, l := f("rp_num_requests"), f("rp_request_length")
		p = Plan{Requests: n, Tokens: n * l, Flags: []string{"--rp-num-requests", "--rp-request-length"}}
	case config.LongDocQA:
		l := f("ldqa_document_length")
		docs := math.Max(1, math.Floor(budget/l))
		reqs := docs * f("ldqa_query_per_document")
		p = Plan{Requests: docs + reqs, Tokens: (docs + reqs) * l,
			Flags: []string{"--kv-cache-volume", "--tokens-per-gb-kvcache", "--ldqa-document-length", "--ldqa-query-per-document"}}
	case config.MultiRoundChat:
		per := f("mrc_shared_prompt_length") + f("mrc_chat_history_length")
		// The sessions are built ahead; what the run then sends is bounded
		// by time (--mrc-qps x --mrc-duration within their ranges).
		users := math.Max(1, math.Floor(budget/math.Max(per, 1)))
		p = Plan{Requests: users, Tokens: users * per,
			Flags: []string{"--kv-cache-volume", "--tokens-per-gb-kvcache", "--mrc-shared-prompt-length", "--mrc-chat-history-length"}}
	case config.LongDocPermutator:
		n := f("ldp_num_contexts")
		perms := math.Min(f("ldp_num_permutations"), math.Gamma(n+1))
		// Contexts count pool words, about LDPBuiltinTokensPerWord tokens
		// each; the system prompt's words are one token each.
		ctx := f("ldp_context_length") * LDPBuiltinTokensPerWord
		per := n*ctx + f("ldp_system_prompt_length")
		p = Plan{Requests: perms, Tokens: perms*per + n*ctx,
			Flags: []string{"--ldp-num-permutations", "--ldp-num-contexts", "--ldp-context-length"}}
	case config.PrefixSuffixTuner:
		l := f("psf_context_length")
		prefix := math.Max(1, l*f("psf_prefix_ratio"))
		num := math.Max(1, math.Floor(f("psf_thrash")*psfOverflow*float64(tokensPerGB)/l))
		p = Plan{Requests: 2 * num, Tokens: num*prefix + 2*num*l,
			Flags: []string{"--psf-thrash", "--tokens-per-gb-kvcache", "--psf-context-length"}}
	case config.KVTierPressure:
		// The documents are built ahead, the measured requests too. A
		// derived pool is sized from the server's L1 capacity at start-up,
		// so only an explicit one can be estimated here.
		l, per, n := f("ktp_context_length"), f("ktp_docs_per_request"), f("ktp_num_requests")
		pool := math.Max(f("ktp_pool_size"), per)
		p = Plan{Requests: n + pool/per + 1, Tokens: pool*l + n*(per*l+f("ktp_system_prompt_length")),
			Flags: []string{"--ktp-num-requests", "--ktp-docs-per-request", "--ktp-context-length", "--ktp-pool-size"}}
	default:
		return Plan{}, false
	}
	p.Bytes = p.Tokens*bytesPerToken + p.Requests*bytesPerRequest
	return p, true
}

// MemoryLimit is the most memory a plan may need: half of the machine's
// memory. Tests replace it.
var MemoryLimit = func() float64 { return physicalMemory() / 2 }

// CheckPlan refuses a plan that needs more than MemoryLimit, naming the
// settings that size it.
func CheckPlan(c *config.Config, tokensPerGB int) error {
	p, ok := EstimatePlan(c, tokensPerGB)
	if !ok {
		return nil
	}
	if limit := MemoryLimit(); p.Bytes > limit || math.IsNaN(p.Bytes) {
		return fmt.Errorf("%s would hold about %s in memory (%s requests, %s prompt tokens), more than the %s allowed (half of this machine's memory): lower %s",
			c.Workload(), bytesText(p.Bytes), countText(p.Requests), countText(p.Tokens), bytesText(limit), strings.Join(p.Flags, " or "))
	}
	return nil
}

func bytesText(b float64) string {
	units := []string{"B", "KB", "MB", "GB", "TB", "PB", "EB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if b >= 1024 {
		return fmt.Sprintf("%.3g %s", b, units[i])
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}

func countText(n float64) string {
	if n < 1e6 {
		return strconv.FormatFloat(n, 'f', 0, 64)
	}
	return strconv.FormatFloat(n, 'g', 3, 64)
}

// physicalMemory is MemTotal from /proc/meminfo, else 8 GB.
func physicalMemory() float64 {
	const fallback = 8 << 30
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return fallback
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			if kb, err := strconv.ParseFloat(fields[1], 64); err == nil && kb > 0 {
				return kb * 1024
			}
		}
	}
	return fallback
}

// PlannedStreams is the most requests the workload will have in flight
// at once, as its settings plan it, and the flag that sets it; 0 when the
// arrivals decide (multi-round-chat sends at a rate, so its concurrency
// is not planned). A --max-concurrency cap, where there is one, applies.
func PlannedStreams(c *config.Config) (int, string) {
	var n int
	var flag string
	switch c.Workload() {
	case config.RandomPrefill:
		n, flag = c.Int("rp_num_requests"), "--rp-num-requests"
	case config.LongDocQA:
		n, flag = c.Int("ldqa_num_inflight_requests"), "--ldqa-num-inflight-requests"
	case config.LongDocPermutator:
		n, flag = c.Int("ldp_num_inflight_requests"), "--ldp-num-inflight-requests"
	case config.CacheProbe:
		n, flag = c.Int("cp_streams"), "--cp-streams"
	case config.ConcurrentExactness:
		for _, l := range c.IntList("ce_levels") {
			n = max(n, l)
		}
		flag = "--ce-levels"
	case config.PrefixSuffixTuner:
		n = 1
	}
	if f, ok := config.Lookup("max_concurrency"); ok && f.Kind == config.Int && n > 0 {
		if m := c.Int("max_concurrency"); m > 0 && m < n {
			n, flag = m, "--max-concurrency"
		}
	}
	return n, flag
}
