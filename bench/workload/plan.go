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

// EstimatePlan sizes c's workload's plan from its settings (its Kind's
// Estimate). ok is false for workloads whose size is bounded by their
// flags' ranges alone.
func EstimatePlan(c *config.Config, tokensPerGB int) (Plan, bool) {
	k := kinds[c.Workload()]
	if k.Estimate == nil {
		return Plan{}, false
	}
	p := k.Estimate(c, tokensPerGB)
	p.Bytes = p.Tokens*bytesPerToken + p.Requests*bytesPerRequest
	return p, true
}

// budgetTokens is the KV budget in tokens, for an estimate.
func budgetTokens(c *config.Config, tokensPerGB int) float64 {
	return c.Settings().KVCacheGB * float64(tokensPerGB)
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

// oneAtATime is the plan of a workload that sends each request after
// the one before has finished.
var oneAtATime = StreamPlan{Streams: 1}

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
