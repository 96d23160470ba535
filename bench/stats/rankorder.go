package stats

import "slices"

// rankOrder keeps samples split at the rank one percentile needs, so the
// live view reads that percentile exactly in O(1) after an O(log n) Add,
// instead of copying and sorting every sample at each snapshot. lo holds
// the smallest f+1 samples (a max-heap), hi the others (a min-heap), f
// being Linear's lower rank floor((n-1)p/100): Linear's two neighbours
// are the tops of the heaps. It holds each sample once, as a slice of
// them would, and sorted gives them all back for the final figures.
type rankOrder struct {
	p      float64
	lo, hi []float64
}

func (o *rankOrder) len() int { return len(o.lo) + len(o.hi) }

// add inserts v; the split moves by at most one sample.
func (o *rankOrder) add(v float64) {
	if len(o.lo) > 0 && v <= o.lo[0] {
		o.lo = heapPush(o.lo, v, greater)
	} else {
		o.hi = heapPush(o.hi, v, less)
	}
	want := o.lower() + 1
	for len(o.lo) > want {
		var top float64
		o.lo, top = heapPop(o.lo, greater)
		o.hi = heapPush(o.hi, top, less)
	}
	for len(o.lo) < want {
		var top float64
		o.hi, top = heapPop(o.hi, less)
		o.lo = heapPush(o.lo, top, greater)
	}
}

// lower is Linear's lower rank over the samples held (0 when none).
func (o *rankOrder) lower() int {
	n := o.len()
	if n == 0 {
		return 0
	}
	k := float64(n-1) * o.p / 100
	switch {
	case k <= 0:
		return 0
	case k >= float64(n-1):
		return n - 1
	}
	return int(k)
}

// linear is Linear(sorted samples, p), bit for bit; 0 without samples.
func (o *rankOrder) linear() float64 {
	n := o.len()
	if n == 0 {
		return 0
	}
	k := float64(n-1) * o.p / 100
	if n == 1 || k <= 0 || k >= float64(n-1) {
		return o.lo[0]
	}
	f := int(k)
	return o.lo[0] + (k-float64(f))*(o.hi[0]-o.lo[0])
}

// sorted is every sample in ascending order, in a new slice.
func (o *rankOrder) sorted() []float64 {
	out := make([]float64, 0, o.len())
	out = append(append(out, o.lo...), o.hi...)
	slices.Sort(out)
	return out
}

func less(a, b float64) bool    { return a < b }
func greater(a, b float64) bool { return a > b }

// heapPush adds v to the binary heap h ordered by before (its top first).
func heapPush(h []float64, v float64, before func(a, b float64) bool) []float64 {
	h = append(h, v)
	i := len(h) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !before(h[i], h[parent]) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
	return h
}

// heapPop removes and returns the top of a non-empty heap.
func heapPop(h []float64, before func(a, b float64) bool) ([]float64, float64) {
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && before(h[l], h[m]) {
			m = l
		}
		if r < len(h) && before(h[r], h[m]) {
			m = r
		}
		if m == i {
			return h, top
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
