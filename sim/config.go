package sim

import (
	"fmt"
	"math"
	"net"
	"time"

	"github.com/spf13/pflag"
)

// gibibyte is LMCache's "GB": tokens-per-GB figures divide 2^30 bytes.
const gibibyte = 1 << 30

// MaxModelLenLimit bounds --max-model-len, and so every max_tokens the
// simulator accepts: a request whose prompt plus max_tokens is over
// --max-model-len gets a 400, as from vLLM, so no reply is longer than
// 2^30 tokens.
const MaxModelLenLimit = 1 << 30

// Config is everything the simulated engine can be told. DefaultConfig gives
// the contract's defaults; RegisterFlags exposes every field as a flag.
type Config struct {
	Listen string // address to listen on; "127.0.0.1:0" picks a free port
	Model  string // the one served model id

	TokensPerGB int     // tokens that fit in 1 GiB of KV cache (reported by /status)
	GPUKVGB     float64 // GPU tier size in GB; 0 turns prefix caching off
	CPUKVGB     float64 // CPU tier size in GB; 0 means no second tier
	BlockSize   int     // tokens per cache block

	PrefillTPS float64 // prefill speed, tokens per second
	DecodeTPS  float64 // decode speed of one sequence running alone, tokens per second
	CPULoadTPS float64 // speed of loading CPU-tier blocks back, tokens per second

	MaxNumSeqs  int           // most requests running at once; the rest wait in FIFO order
	MaxWaiting  int           // most requests waiting; over it a request gets 429 (0 = unbounded)
	BaseLatency time.Duration // fixed part of every TTFT
	Speed       float64       // every modelled delay is divided by this
	ZeroLatency bool          // no modelled delays, no admission limit

	TokensPerChunk  int  // tokens per streamed chunk
	ReasoningTokens int  // tokens streamed as delta.reasoning_content before the content
	OmitZeroCached  bool // omit prompt_tokens_details when nothing was cached (older vLLM)

	FixedTTFT time.Duration // measuring mode: every TTFT is exactly this
	FixedITL  time.Duration // measuring mode: every gap between chunks is exactly this

	MaxModelLen  int   // longest prompt + completion, in tokens (at most MaxModelLenLimit)
	MaxBodyBytes int64 // largest request body accepted

	// Faults: each rate is a probability in [0,1], drawn per request from a
	// generator seeded by FaultSeed, in the order requests arrive.
	FaultSeed            int64
	FaultHTTP500         float64
	FaultMidstreamError  float64
	FaultTruncate        float64
	FaultMalformed       float64
	FaultDropUsage       float64
	FaultStallRate       float64       // share of requests that stall, when FaultStall > 0
	FaultStall           time.Duration // how long a stalled stream stops sending (0 = off)
	NondeterministicRate float64       // share of replies that differ from the greedy one
}

// DefaultConfig returns the defaults of the contract (spec sim.md).
func DefaultConfig() Config {
	return Config{
		Listen:          "127.0.0.1:8000",
		Model:           "kvbench-sim",
		TokensPerGB:     10000,
		GPUKVGB:         8,
		CPUKVGB:         0,
		BlockSize:       16,
		PrefillTPS:      20000,
		DecodeTPS:       100,
		CPULoadTPS:      200000,
		MaxNumSeqs:      64,
		MaxWaiting:      0,
		BaseLatency:     5 * time.Millisecond,
		Speed:           1,
		TokensPerChunk:  1,
		ReasoningTokens: 0,
		MaxModelLen:     131072,
		MaxBodyBytes:    32 << 20,
		FaultSeed:       0,
		FaultStallRate:  1,
	}
}

// RegisterFlags adds every simulator flag to fs. The flag defaults are
// DefaultConfig's, and registering sets c to them; parsing fs then fills c.
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	d := DefaultConfig()
	fs.StringVar(&c.Listen, "listen", d.Listen, "address to listen on (host:port; port 0 picks a free one)")
	fs.StringVar(&c.Model, "model", d.Model, "model id served by /v1/models")
	fs.IntVar(&c.TokensPerGB, "tokens-per-gb", d.TokensPerGB, "tokens that fit in 1 GB of KV cache (reported by /status)")
	fs.Float64Var(&c.GPUKVGB, "gpu-kv-gb", d.GPUKVGB, "GPU KV-cache tier in GB (0 = prefix caching off)")
	fs.Float64Var(&c.CPUKVGB, "cpu-kv-gb", d.CPUKVGB, "CPU KV-cache tier in GB, fed by GPU evictions (0 = off)")
	fs.IntVar(&c.BlockSize, "block-size", d.BlockSize, "tokens per KV-cache block")
	fs.Float64Var(&c.PrefillTPS, "prefill-tps", d.PrefillTPS, "prefill speed in tokens per second")
	fs.Float64Var(&c.DecodeTPS, "decode-tps", d.DecodeTPS, "decode speed of one sequence in tokens per second")
	fs.Float64Var(&c.CPULoadTPS, "cpu-load-tps", d.CPULoadTPS, "speed of loading CPU-tier hits back, tokens per second")
	fs.IntVar(&c.MaxNumSeqs, "max-num-seqs", d.MaxNumSeqs, "most requests running at once; the rest wait")
	fs.IntVar(&c.MaxWaiting, "max-waiting", d.MaxWaiting, "most requests waiting before new ones get 429 (0 = unbounded)")
	fs.DurationVar(&c.BaseLatency, "base-latency", d.BaseLatency, "fixed part of every time to first token")
	fs.Float64Var(&c.Speed, "speed", d.Speed, "divide every modelled delay by this")
	fs.BoolVar(&c.ZeroLatency, "zero-latency", d.ZeroLatency, "no modelled delays at all (for measuring the client)")
	fs.IntVar(&c.TokensPerChunk, "tokens-per-chunk", d.TokensPerChunk, "tokens per streamed chunk")
	fs.IntVar(&c.ReasoningTokens, "reasoning-tokens", d.ReasoningTokens, "tokens streamed as reasoning_content before the content")
	fs.BoolVar(&c.OmitZeroCached, "omit-zero-cached", d.OmitZeroCached, "omit prompt_tokens_details when nothing was cached, as older vLLM does")
	fs.DurationVar(&c.FixedTTFT, "fixed-ttft", d.FixedTTFT, "measuring mode: every request gets exactly this TTFT, whatever the load")
	fs.DurationVar(&c.FixedITL, "fixed-itl", d.FixedITL, "measuring mode: exactly this gap between chunks, whatever the load")
	fs.IntVar(&c.MaxModelLen, "max-model-len", d.MaxModelLen, "longest prompt plus completion in tokens")
	fs.Int64Var(&c.MaxBodyBytes, "max-body-bytes", d.MaxBodyBytes, "largest request body accepted (bigger ones get 413)")
	fs.Int64Var(&c.FaultSeed, "fault-seed", d.FaultSeed, "seed of the per-request fault and sampling draws")
	fs.Float64Var(&c.FaultHTTP500, "fault-http-500", d.FaultHTTP500, "share of requests answered with HTTP 500")
	fs.Float64Var(&c.FaultMidstreamError, "fault-midstream-error", d.FaultMidstreamError, "share of streams that send an error event after some tokens and end")
	fs.Float64Var(&c.FaultTruncate, "fault-truncate", d.FaultTruncate, "share of streams that end after some tokens without [DONE]")
	fs.Float64Var(&c.FaultMalformed, "fault-malformed", d.FaultMalformed, "share of streams that carry one invalid JSON chunk")
	fs.Float64Var(&c.FaultDropUsage, "fault-drop-usage", d.FaultDropUsage, "share of replies sent without usage")
	fs.DurationVar(&c.FaultStall, "fault-stall", d.FaultStall, "stop sending for this long in the middle of a stream (0 = off)")
	fs.Float64Var(&c.FaultStallRate, "fault-stall-rate", d.FaultStallRate, "share of streams that stall when --fault-stall is set")
	fs.Float64Var(&c.NondeterministicRate, "nondeterministic-rate", d.NondeterministicRate, "share of replies whose text differs from the greedy one")
}

// Validate checks every field and returns one line naming the first flag
// that is out of range and the range it allows.
func (c Config) Validate() error {
	if c.Listen == "" {
		return fmt.Errorf("--listen must be host:port (got empty)")
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("--listen must be host:port (got %q)", c.Listen)
	}
	if c.Model == "" {
		return fmt.Errorf("--model must not be empty")
	}
	if c.TokensPerGB < 1 || c.TokensPerGB > gibibyte {
		return fmt.Errorf("--tokens-per-gb must be in [1,%d] (got %d)", gibibyte, c.TokensPerGB)
	}
	if _, ok := cacheSizePerToken(c.TokensPerGB); !ok {
		lo, hi := nearestTokensPerGB(c.TokensPerGB)
		return fmt.Errorf("--tokens-per-gb %d is not 1073741824 divided by a whole cache_size_per_token; nearest are %d and %d", c.TokensPerGB, lo, hi)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"--gpu-kv-gb", c.GPUKVGB}, {"--cpu-kv-gb", c.CPUKVGB}} {
		if !(f.v >= 0 && f.v <= 1e6) {
			return fmt.Errorf("%s must be in [0,1000000] (got %v)", f.name, f.v)
		}
	}
	if c.BlockSize < 1 || c.BlockSize > 4096 {
		return fmt.Errorf("--block-size must be in [1,4096] (got %d)", c.BlockSize)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"--prefill-tps", c.PrefillTPS}, {"--decode-tps", c.DecodeTPS}, {"--cpu-load-tps", c.CPULoadTPS}, {"--speed", c.Speed}} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%s must be a finite number > 0 (got %v)", f.name, f.v)
		}
	}
	if c.MaxNumSeqs < 1 {
		return fmt.Errorf("--max-num-seqs must be >= 1 (got %d)", c.MaxNumSeqs)
	}
	if c.MaxWaiting < 0 {
		return fmt.Errorf("--max-waiting must be >= 0 (got %d)", c.MaxWaiting)
	}
	if c.BaseLatency < 0 {
		return fmt.Errorf("--base-latency must be >= 0 (got %v)", c.BaseLatency)
	}
	if c.TokensPerChunk < 1 {
		return fmt.Errorf("--tokens-per-chunk must be >= 1 (got %d)", c.TokensPerChunk)
	}
	if c.ReasoningTokens < 0 {
		return fmt.Errorf("--reasoning-tokens must be >= 0 (got %d)", c.ReasoningTokens)
	}
	if c.FixedTTFT < 0 {
		return fmt.Errorf("--fixed-ttft must be >= 0 (got %v)", c.FixedTTFT)
	}
	if c.FixedITL < 0 {
		return fmt.Errorf("--fixed-itl must be >= 0 (got %v)", c.FixedITL)
	}
	if c.ZeroLatency && c.fixedMode() {
		return fmt.Errorf("--zero-latency cannot be combined with --fixed-ttft or --fixed-itl")
	}
	if c.MaxModelLen < 2 || c.MaxModelLen > MaxModelLenLimit {
		return fmt.Errorf("--max-model-len must be in [2, %d] (got %d)", MaxModelLenLimit, c.MaxModelLen)
	}
	if c.MaxBodyBytes < 1024 {
		return fmt.Errorf("--max-body-bytes must be >= 1024 (got %d)", c.MaxBodyBytes)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"--fault-http-500", c.FaultHTTP500},
		{"--fault-midstream-error", c.FaultMidstreamError},
		{"--fault-truncate", c.FaultTruncate},
		{"--fault-malformed", c.FaultMalformed},
		{"--fault-drop-usage", c.FaultDropUsage},
		{"--fault-stall-rate", c.FaultStallRate},
		{"--nondeterministic-rate", c.NondeterministicRate},
	} {
		if !(f.v >= 0 && f.v <= 1) {
			return fmt.Errorf("%s must be in [0,1] (got %v)", f.name, f.v)
		}
	}
	if c.FaultStall < 0 {
		return fmt.Errorf("--fault-stall must be >= 0 (got %v)", c.FaultStall)
	}
	return nil
}

// fixedMode reports the measuring mode of --fixed-ttft/--fixed-itl.
func (c Config) fixedMode() bool { return c.FixedTTFT > 0 || c.FixedITL > 0 }

// gpuBlocks and cpuBlocks are the tiers' capacities in whole blocks.
func (c Config) gpuBlocks() int { return tierBlocks(c.GPUKVGB, c.TokensPerGB, c.BlockSize) }
func (c Config) cpuBlocks() int { return tierBlocks(c.CPUKVGB, c.TokensPerGB, c.BlockSize) }

func tierBlocks(gb float64, tokensPerGB, blockSize int) int {
	tokens := math.Floor(gb * float64(tokensPerGB))
	if tokens > math.MaxInt32 {
		tokens = math.MaxInt32
	}
	return int(tokens) / blockSize
}

// cacheSizePerToken returns the bytes per token B that /status reports, such
// that 1073741824 / B == tokensPerGB in integer division, and whether one
// exists (above 32767 tokens per GB some values have none).
func cacheSizePerToken(tokensPerGB int) (int64, bool) {
	if tokensPerGB < 1 {
		return 0, false
	}
	b := int64(gibibyte / tokensPerGB)
	if b < 1 || gibibyte/b != int64(tokensPerGB) {
		return 0, false
	}
	return b, true
}

// nearestTokensPerGB returns the representable values around t.
func nearestTokensPerGB(t int) (lo, hi int) {
	b := int64(gibibyte / t)
	hi = int(gibibyte / b)
	lo = int(gibibyte / (b + 1))
	return lo, hi
}
