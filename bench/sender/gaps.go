package sender

import (
	"math/bits"
	"time"
)

// GapHistogram counts time gaps in log-linear buckets of fixed memory (21
// KiB), for streams with more chunks than the arrival times a stream keeps
// (maxExactChunks) and for pooling such streams' gaps over a run. Gaps
// under 128 ns (a zero gap: chunks of one read) are counted exactly; a
// longer gap falls in one of 64 buckets per power of two, and Rank
// answers its bucket's midpoint, within 1/128 (0.8%) of the true value.
// Gaps are clamped to [0, 2^47 ns] (39 hours). Sum is exact.
type GapHistogram struct {
	counts [histBuckets]uint64
	n      uint64
	sum    time.Duration
}

const (
	histSubBits = 6
	histSub     = 1 << histSubBits // buckets per power of two
	histMaxBits = 47
	histMax     = 1<<histMaxBits - 1
	// Below 2*histSub every value has a bucket of its own; above, each
	// power of two from 2^7 to 2^46 has histSub.
	histBuckets = (histMaxBits-histSubBits-1)*histSub + 2*histSub
)

func histIndex(v uint64) int {
	if v < 2*histSub {
		return int(v)
	}
	e := bits.Len64(v) - histSubBits - 1 // v>>e is in [histSub, 2*histSub)
	return e*histSub + int(v>>e)
}

// histValue is the midpoint of bucket i.
func histValue(i int) time.Duration {
	if i < 2*histSub {
		return time.Duration(i)
	}
	e := i/histSub - 1
	lo := uint64(i-e*histSub) << e
	return time.Duration(lo + (uint64(1)<<e-1)/2)
}

// Reset empties h.
func (h *GapHistogram) Reset() { *h = GapHistogram{} }

// Add counts one gap.
func (h *GapHistogram) Add(d time.Duration) { h.AddN(d, 1) }

// AddN counts n equal gaps.
func (h *GapHistogram) AddN(d time.Duration, n uint64) {
	if n == 0 {
		return
	}
	v := uint64(max(d, 0))
	v = min(v, histMax)
	h.counts[histIndex(v)] += n
	h.n += n
	h.sum += time.Duration(v) * time.Duration(n)
}

// Merge adds every gap of o.
func (h *GapHistogram) Merge(o *GapHistogram) {
	if o == nil {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
}

// Count is the number of gaps counted.
func (h *GapHistogram) Count() uint64 { return h.n }

// Sum is the total of the gaps counted (after clamping).
func (h *GapHistogram) Sum() time.Duration { return h.sum }

// Rank is the k-th smallest gap (1-based; clamped to [1, Count]), as its
// bucket's midpoint; 0 when h is empty.
func (h *GapHistogram) Rank(k uint64) time.Duration {
	if h.n == 0 {
		return 0
	}
	k = max(1, min(k, h.n))
	var seen uint64
	for i, c := range h.counts {
		if seen += c; seen >= k {
			return histValue(i)
		}
	}
	return histValue(histBuckets - 1)
}
