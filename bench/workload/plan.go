package workload

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/bench/load"
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
		// Prompts are built as they are dispatched: those in flight and
		// the look-ahead are held at once (every one when all go at once).
		n, l := f("rp_num_requests"), f("rp_request_length")
		ls, _ := load.FromConfig(c) // an invalid load is refused later, naming its flag
		held := math.Min(n, float64(measuredStreams(ls, int(min(n, math.MaxInt32)), "", expectedLatency(int(min(l, math.MaxInt32)), 1)).Streams)+lookAhead)
		p = Plan{Requests: n, Tokens: held * l, Flags: []string{"--rp-num-requests", "--rp-request-length"}}
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

// StreamPlan is how many requests a workload holds in flight at once,
// planned before the run: the file descriptors the run needs and the
// connections opened ahead of it follow it.
type StreamPlan struct {
	// Streams is the most requests in flight at once; 0 when not planned.
	Streams int
	// Flag is the setting that bounds Streams, for a message asking to
	// lower it.
	Flag string
	// Rate (requests/s) and Latency are Little's law's inputs when
	// Streams came from them, zero otherwise: a slower engine than
	// Latency assumes holds more, and the client opens them as needed.
	Rate    float64
	Latency time.Duration
}

// StreamPlanner is a workload that plans its own concurrency: the most
// requests it holds in flight at once under the load ls, from its own
// settings (an in-flight setting, its concurrency levels, its sessions),
// the --max-concurrency cap and, for arrivals at a rate, Little's law.
type StreamPlanner interface {
	PlanStreams(ls load.Settings) StreamPlan
}

// PlannedStreams is w's plan under ls; a workload that plans nothing
// sends one request at a time.
func PlannedStreams(w Workload, ls load.Settings) StreamPlan {
	if p, ok := w.(StreamPlanner); ok {
		return p.PlanStreams(ls)
	}
	return StreamPlan{Streams: 1}
}

// The engine Little's law assumes for a request's expected latency when
// nothing was measured yet: slow on purpose (a busy engine), so that the
// plan errs toward more streams, never toward too few descriptors.
const (
	nominalBase       = 50 * time.Millisecond // queueing, scheduling, the first token's overhead
	nominalPrefillTPS = 5000                  // prompt tokens per second, per request
	nominalTPOT       = 20 * time.Millisecond // per output token
)

// expectedLatency is a request's latency on the nominal engine.
func expectedLatency(prompt, output int) time.Duration {
	s := float64(max(prompt, 0))/nominalPrefillTPS + float64(max(output, 0))*nominalTPOT.Seconds() + nominalBase.Seconds()
	return time.Duration(math.Min(s, 24*3600) * float64(time.Second))
}

// littleStreams is what arrivals at rate keep in flight when each takes
// latency, with headroom: twice Little's mean L = rate x latency, plus
// four standard deviations of the arrivals' count over one latency (L
// for Poisson arrivals, L/burstiness for gamma ones, whose gaps vary
// more when burstiness < 1), at least 1.
func littleStreams(rate float64, latency time.Duration, burstiness float64) int {
	m := rate * latency.Seconds()
	if !(m > 0) {
		return 1
	}
	k := 1.0
	if burstiness > 0 && burstiness < 1 {
		k = burstiness
	}
	n := math.Ceil(2*m + 4*math.Sqrt(m/k))
	return int(math.Min(math.Max(n, 1), math.MaxInt32))
}

// measuredStreams is the plan of measured requests of which the
// workload's own settings hold at most own in flight (set by flag; 0 when
// they do not bound it), each expected to take latency: the
// --max-concurrency cap applies, and at a finite rate Little's law
// bounds what the arrivals keep in flight.
func measuredStreams(ls load.Settings, own int, flag string, latency time.Duration) StreamPlan {
	p := StreamPlan{Streams: max(own, 0), Flag: flag}
	if m := ls.MaxConcurrency; m > 0 && (p.Streams == 0 || m < p.Streams) {
		p = StreamPlan{Streams: m, Flag: "--max-concurrency"}
	}
	if ls.Timed() {
		rate := ls.ProcessRate()
		if n := littleStreams(rate, latency, ls.Burstiness); p.Streams == 0 || n < p.Streams {
			p = StreamPlan{Streams: n, Flag: "--request-rate", Rate: rate, Latency: latency}
		}
	}
	return p
}

// atLeast is p with at least n streams (an ungated phase's own
// concurrency, which neither the cap nor the rate bounds) and then flag.
func (p StreamPlan) atLeast(n int, flag string) StreamPlan {
	if n > p.Streams {
		return StreamPlan{Streams: n, Flag: flag}
	}
	return p
}
