package sim

import (
	"math"
	"testing"
	"time"
)

func TestRepeatedPromptCachesWholeBlocksButTheLastToken(t *testing.T) {
	r := startSim(t, nil)
	for i, p := range []int{1, 2, 15, 16, 17, 31, 32, 33, 100, 1000} {
		prompt := ids(1000*(i+1), p)
		first := streamCompletion(t, r.URL(), prompt, nil)
		if first.Usage.PromptTokens != p || first.Usage.cached(t) != 0 {
			t.Fatalf("P=%d first: %+v", p, first.Usage)
		}
		second := streamCompletion(t, r.URL(), prompt, nil)
		want := (p - 1) / 16 * 16
		if got := second.Usage.cached(t); got != want {
			t.Errorf("P=%d repeat: cached %d, want %d", p, got, want)
		}
	}
	// Chat prompts too: the template is part of the prompt.
	text := words("hi", 300)
	first := streamChat(t, r.URL(), text, nil)
	second := streamChat(t, r.URL(), text, nil)
	p := first.Usage.PromptTokens
	if p != 300+messageOverhead+requestOverhead {
		t.Errorf("chat prompt_tokens %d, want %d", p, 300+messageOverhead+requestOverhead)
	}
	if got, want := second.Usage.cached(t), (p-1)/16*16; got != want {
		t.Errorf("chat repeat: cached %d, want %d", got, want)
	}
}

func TestSharedPrefixHitsItsWholeBlocks(t *testing.T) {
	r := startSim(t, nil)
	prefix := ids(50, 100)
	a := append(append([]int{}, prefix...), ids(9000, 40)...)
	b := append(append([]int{}, prefix...), ids(7000, 40)...)
	streamCompletion(t, r.URL(), a, nil)
	res := streamCompletion(t, r.URL(), b, nil)
	if got := res.Usage.cached(t); got != 96 {
		t.Errorf("shared 100-token prefix: cached %d, want 96", got)
	}
	// A change in the first block breaks the whole chain.
	c := append([]int{}, a...)
	c[0] = 1
	res = streamCompletion(t, r.URL(), c, nil)
	if got := res.Usage.cached(t); got != 0 {
		t.Errorf("first block changed: cached %d, want 0", got)
	}
}

// lruPass replays pool distinct prefixes of one unit each, twice, against a
// GPU tier of room units, and returns the second pass's cached tokens.
func lruPass(t *testing.T, pool, room int) (hits []int) {
	const unit = 320 // tokens: 20 blocks
	r := startSim(t, func(c *Config) {
		c.TokensPerGB = unit * room
		c.GPUKVGB = 1
	})
	for pass := 0; pass < 2; pass++ {
		for i := 0; i < pool; i++ {
			res := streamCompletion(t, r.URL(), ids(100000*(i+1), unit), map[string]any{"max_tokens": 1})
			if pass == 1 {
				hits = append(hits, res.Usage.cached(t))
			}
		}
	}
	return hits
}

func TestLRUThrash(t *testing.T) {
	hits := lruPass(t, 21, 20)
	for _, hit := range hits {
		if hit != 0 {
			t.Fatalf("pool 21 over room 20: second pass cached %v, want all 0", hits)
		}
	}
	for _, pool := range []int{10, 15, 20} {
		for i, hit := range lruPass(t, pool, 20) {
			if hit != 320-16 {
				t.Fatalf("pool %d over room 20: prefix %d cached %d, want %d", pool, i, hit, 320-16)
			}
		}
	}
}

func TestCPUTierTakesEvictionsAndPromotesOnHit(t *testing.T) {
	const unit = 320
	ts := startTraced(t, func(c *Config) {
		c.TokensPerGB = unit * 2 // GPU: 2 units
		c.GPUKVGB = 1
		c.CPUKVGB = 2 // CPU: 4 units
		c.PrefillTPS = 1000
		c.CPULoadTPS = 10000
		c.BaseLatency = 10 * time.Millisecond
	})
	send := func(i int) (usageJSON, requestTrace) {
		res := streamCompletion(t, ts.URL, ids(100000*(i+1), unit), map[string]any{"max_tokens": 1})
		return *res.Usage, ts.last(t)
	}
	for i := 0; i < 4; i++ { // A B C D: GPU holds C D, CPU holds A B
		send(i)
	}
	gpu, cpu := ts.cache.Resident()
	if gpu != 40 || cpu != 40 {
		t.Fatalf("resident blocks gpu %d cpu %d, want 40 and 40", gpu, cpu)
	}
	u, tr := send(0) // A again: served from the CPU tier
	if u.cached(t) != unit-16 || tr.CPUTokens != unit-16 || tr.GPUTokens != 0 {
		t.Fatalf("A from CPU: cached %d, trace %+v", u.cached(t), tr)
	}
	// TTFT charges the CPU tokens at --cpu-load-tps, the rest at --prefill-tps.
	want := 16.0/1000 + float64(unit-16)/10000 + 0.010
	if got := tr.TTFT.Seconds(); math.Abs(got-want) > 1e-6 {
		t.Errorf("TTFT %v, want %vs", tr.TTFT, want)
	}
	u, tr = send(0) // A was promoted: now a GPU hit
	if u.cached(t) != unit-16 || tr.GPUTokens != unit-16 || tr.CPUTokens != 0 {
		t.Errorf("A after promotion: cached %d, trace %+v", u.cached(t), tr)
	}
	if got := tr.TTFT.Seconds(); math.Abs(got-(16.0/1000+0.010)) > 1e-6 {
		t.Errorf("GPU-hit TTFT %v", tr.TTFT)
	}
	gpu, cpu = ts.cache.Resident()
	if gpu != 40 || cpu != 40 {
		t.Errorf("after promotion: gpu %d cpu %d blocks, want 40 and 40", gpu, cpu)
	}
}

func TestOmitZeroCached(t *testing.T) {
	r := startSim(t, func(c *Config) { c.OmitZeroCached = true })
	first := streamChat(t, r.URL(), words("hi", 40), nil)
	if first.Usage.PromptTokensDetails != nil {
		t.Errorf("nothing cached but details present: %s", first.UsageRaw)
	}
	second := streamChat(t, r.URL(), words("hi", 40), nil)
	if second.Usage.cached(t) == 0 {
		t.Error("repeat reports no cached tokens")
	}
	// Without the flag an explicit 0 is sent.
	plain := startSim(t, nil)
	res := streamChat(t, plain.URL(), words("hi", 40), nil)
	if res.Usage.cached(t) != 0 {
		t.Errorf("first request: %s", res.UsageRaw)
	}
}

func TestPromptLargerThanTheTier(t *testing.T) {
	r := startSim(t, func(c *Config) {
		c.TokensPerGB = 64 // 4 blocks
		c.GPUKVGB = 1
	})
	prompt := ids(1, 200)
	streamCompletion(t, r.URL(), prompt, nil)
	res := streamCompletion(t, r.URL(), prompt, nil)
	if got := res.Usage.cached(t); got != 64 {
		t.Errorf("200-token prompt over a 64-token tier: cached %d, want 64 (the head that fits)", got)
	}
	if u := r.Server.cache.Usage(); u > 1 {
		t.Errorf("usage %v over 1", u)
	}
}

func TestNoGPUTierMeansNoCaching(t *testing.T) {
	r := startSim(t, func(c *Config) { c.GPUKVGB = 0 })
	streamCompletion(t, r.URL(), ids(1, 100), nil)
	res := streamCompletion(t, r.URL(), ids(1, 100), nil)
	if res.Usage.cached(t) != 0 {
		t.Errorf("--gpu-kv-gb 0 cached %d", res.Usage.cached(t))
	}
}
