package overload

import "math"

// Histogram counts durations in logarithmic buckets of 1/16 of an octave
// (4.4% wide) from 1 µs up to 100 s, the last bucket open-ended: a few
// KB however long the run, with quantiles good to one bucket. The exact
// maximum is kept beside the buckets. The zero value is empty and ready;
// it is not safe for concurrent use.
type Histogram struct {
	counts [histBuckets]uint64
	n      uint64
	max    float64 // ms
}

const (
	histPerOctave = 16
	// 26.6 octaves above 1 µs reach 100 s; bucket 0 holds what is under
	// 1 µs, the last one all above 100 s.
	histBuckets = 2 + 26*histPerOctave + 10
)

// bucketOf is the bucket of a duration in ms: bucket i >= 1 holds
// [2^((i-1)/16), 2^(i/16)) µs.
func bucketOf(ms float64) int {
	us := ms * 1000
	if !(us >= 1) { // NaN and negatives count as 0
		return 0
	}
	i := 1 + int(math.Floor(histPerOctave*math.Log2(us)))
	return min(i, histBuckets-1)
}

// upperMs is the upper bound of bucket i in ms (the last bucket's is
// infinite).
func upperMs(i int) float64 {
	if i >= histBuckets-1 {
		return math.Inf(1)
	}
	return math.Exp2(float64(i)/histPerOctave) / 1000
}

// Add counts one duration in ms; negative and NaN durations count as 0.
func (h *Histogram) Add(ms float64) {
	if !(ms > 0) {
		ms = 0
	}
	h.counts[bucketOf(ms)]++
	h.n++
	if ms > h.max {
		h.max = ms
	}
}

// Count is the number of durations added.
func (h *Histogram) Count() uint64 { return h.n }

// Max is the largest duration added, in ms; false when empty.
func (h *Histogram) Max() (float64, bool) { return h.max, h.n > 0 }

// Quantile is the nearest-rank p-th percentile (0 < p <= 100) in ms: the
// upper bound of the bucket that holds it, never above the maximum, so
// it errs high by at most one bucket. False when empty.
func (h *Histogram) Quantile(p float64) (float64, bool) {
	if h.n == 0 {
		return 0, false
	}
	rank := uint64(math.Ceil(p * float64(h.n) / 100))
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(upperMs(i), h.max), true
		}
	}
	return h.max, true
}
