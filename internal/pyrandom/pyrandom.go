// Package pyrandom is Python's random.Random, bit for bit: the Mersenne
// Twister (MT19937) seeded as CPython seeds it, and the methods LMCache's
// benchmark draws with, by CPython 3.11's algorithms. The same seed gives
// the same numbers, choices, shuffles and samples as
// `random.Random(seed)` does in Python, so kvbench can send the prompts
// `lmcache bench engine` sends.
//
// Methods that Python answers with an exception (an empty range, a sample
// larger than its population, a negative count) panic here, as
// math/rand's do: callers validate their inputs first.
package pyrandom

import (
	"crypto/sha512"
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"
)

const (
	n         = 624
	m         = 397
	matrixA   = 0x9908b0df
	upperMask = 0x80000000
	lowerMask = 0x7fffffff
)

// Random is one generator, Python's random.Random. It is not safe for
// concurrent use.
type Random struct {
	mt    [n]uint32
	index int
}

// New is random.Random(seed) for an integer seed. As in CPython the sign
// is dropped: New(-5) and New(5) are the same generator.
func New(seed int64) *Random {
	r := &Random{}
	r.Seed(seed)
	return r
}

// NewSum is random.Random(seed + off) with Python's unbounded integers:
// a sum past the int64 range seeds as Python's would, not wrapped.
func NewSum(seed, off int64) *Random {
	sum := seed + off
	if (off > 0 && sum < seed) || (off < 0 && sum > seed) {
		return NewBig(new(big.Int).Add(big.NewInt(seed), big.NewInt(off)))
	}
	return New(sum)
}

// NewBig is random.Random(seed) for an integer of any size.
func NewBig(seed *big.Int) *Random {
	r := &Random{}
	r.seedMagnitude(new(big.Int).Abs(seed).Bytes())
	return r
}

// NewString is random.Random(s) for a str seed (version 2, the default):
// the seed is the integer whose big-endian bytes are s's UTF-8 bytes
// followed by their SHA-512.
func NewString(s string) *Random {
	r := &Random{}
	r.SeedString(s)
	return r
}

// Seed is random.seed(seed) for an integer seed.
func (r *Random) Seed(seed int64) {
	mag := uint64(seed)
	if seed < 0 {
		mag = -mag // two's complement: right for math.MinInt64 too
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], mag)
	r.seedMagnitude(b[:])
}

// SeedString is random.seed(s) for a str seed (version 2).
func (r *Random) SeedString(s string) {
	sum := sha512.Sum512([]byte(s))
	b := make([]byte, 0, len(s)+len(sum))
	b = append(append(b, s...), sum[:]...)
	r.seedMagnitude(b)
}

// seedMagnitude seeds from a non-negative integer given as big-endian
// bytes: CPython splits it into 32-bit words from the least significant
// end (at least one word, so 0 is [0]) and calls init_by_array.
func (r *Random) seedMagnitude(be []byte) {
	for len(be) > 0 && be[0] == 0 {
		be = be[1:]
	}
	key := make([]uint32, 0, len(be)/4+1)
	for end := len(be); end > 0; end -= 4 {
		start := max(end-4, 0)
		var w uint32
		for _, c := range be[start:end] {
			w = w<<8 | uint32(c)
		}
		key = append(key, w)
	}
	if len(key) == 0 {
		key = append(key, 0)
	}
	r.initByArray(key)
}

func (r *Random) initGenrand(s uint32) {
	r.mt[0] = s
	for i := 1; i < n; i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	r.index = n
}

func (r *Random) initByArray(key []uint32) {
	r.initGenrand(19650218)
	mt := &r.mt
	i, j := 1, 0
	for k := max(n, len(key)); k > 0; k-- {
		mt[i] = (mt[i] ^ ((mt[i-1] ^ (mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= n {
			mt[0] = mt[n-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k := n - 1; k > 0; k-- {
		mt[i] = (mt[i] ^ ((mt[i-1] ^ (mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= n {
			mt[0] = mt[n-1]
			i = 1
		}
	}
	mt[0] = 0x80000000
	r.index = n
}

// Uint32 is the generator's next 32-bit output (CPython's genrand_uint32).
func (r *Random) Uint32() uint32 {
	mt := &r.mt
	if r.index >= n {
		var kk int
		for kk = 0; kk < n-m; kk++ {
			y := mt[kk]&upperMask | mt[kk+1]&lowerMask
			mt[kk] = mt[kk+m] ^ y>>1 ^ (y&1)*matrixA
		}
		for ; kk < n-1; kk++ {
			y := mt[kk]&upperMask | mt[kk+1]&lowerMask
			mt[kk] = mt[kk+(m-n)] ^ y>>1 ^ (y&1)*matrixA
		}
		y := mt[n-1]&upperMask | mt[0]&lowerMask
		mt[n-1] = mt[m-1] ^ y>>1 ^ (y&1)*matrixA
		r.index = 0
	}
	y := mt[r.index]
	r.index++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	y ^= y >> 18
	return y
}

// Random is random(): a float in [0, 1) with 53 random bits.
func (r *Random) Random() float64 {
	a, b := r.Uint32()>>5, r.Uint32()>>6
	return (float64(a)*67108864.0 + float64(b)) * (1.0 / 9007199254740992.0)
}

// Getrandbits is getrandbits(k) for 0 <= k <= 64: words are drawn from
// the least significant end and the last one keeps its top bits.
func (r *Random) Getrandbits(k int) uint64 {
	switch {
	case k < 0 || k > 64:
		panic("pyrandom: Getrandbits wants 0 <= k <= 64")
	case k == 0:
		return 0
	case k <= 32:
		return uint64(r.Uint32() >> (32 - k))
	}
	lo := uint64(r.Uint32())
	hi := r.Uint32() >> (64 - k)
	return lo | uint64(hi)<<32
}

// Randbelow is _randbelow(n): a uniform integer in [0, n), by rejection on
// getrandbits(n.bit_length()) (not of n-1: a power of two rejects half).
func (r *Random) Randbelow(n uint64) uint64 {
	if n == 0 {
		panic("pyrandom: Randbelow(0)")
	}
	k := bits.Len64(n)
	v := r.Getrandbits(k)
	for v >= n {
		v = r.Getrandbits(k)
	}
	return v
}

// Intn is randrange(n) for n > 0.
func (r *Random) Intn(n int) int {
	if n <= 0 {
		panic("pyrandom: empty range for Intn")
	}
	return int(r.Randbelow(uint64(n)))
}

// Randrange is randrange(start, stop): start + _randbelow(stop - start).
func (r *Random) Randrange(start, stop int64) int64 {
	if stop <= start {
		panic("pyrandom: empty range for Randrange")
	}
	width := uint64(stop) - uint64(start) // exact: stop > start
	return int64(uint64(start) + r.Randbelow(width))
}

// Randint is randint(a, b): randrange(a, b+1), b included.
func (r *Random) Randint(a, b int64) int64 {
	if b < a {
		panic("pyrandom: empty range for Randint")
	}
	if b == math.MaxInt64 {
		// b+1 does not fit an int64; the width still fits a uint64
		// unless the range is the whole of int64.
		width := uint64(b) - uint64(a) + 1
		if width == 0 {
			panic("pyrandom: Randint over all of int64 is not supported")
		}
		return int64(uint64(a) + r.Randbelow(width))
	}
	return r.Randrange(a, b+1)
}

// Choice is the index choice(seq) picks from a sequence of length n:
// _randbelow(n).
func (r *Random) Choice(n int) int {
	if n <= 0 {
		panic("pyrandom: Choice from an empty sequence")
	}
	return int(r.Randbelow(uint64(n)))
}

// Choices are the k indices choices(seq, k=k) picks from a sequence of
// length n, with replacement and no weights: floor(random() * n) each.
func (r *Random) Choices(n, k int) []int {
	if n <= 0 && k > 0 {
		panic("pyrandom: Choices from an empty sequence")
	}
	out := make([]int, k)
	fn := float64(n)
	for i := range out {
		out[i] = int(math.Floor(r.Random() * fn))
	}
	return out
}

// WeightedChoices are the k indices choices(seq, weights=w, k=k) picks:
// the weights are summed left to right as Python's accumulate does, and
// each pick is bisect_right(cum, random() * total, 0, n-1).
func (r *Random) WeightedChoices(weights []float64, k int) []int {
	n := len(weights)
	if n == 0 {
		panic("pyrandom: WeightedChoices from an empty sequence")
	}
	cum := make([]float64, n)
	sum := 0.0
	for i, w := range weights {
		sum += w
		cum[i] = sum
	}
	total := cum[n-1]
	if !(total > 0) || math.IsInf(total, 0) || math.IsNaN(total) {
		panic("pyrandom: WeightedChoices needs a positive, finite total weight")
	}
	out := make([]int, k)
	for i := range out {
		x := r.Random() * total
		lo, hi := 0, n-1
		for lo < hi {
			mid := (lo + hi) / 2
			if x < cum[mid] {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		out[i] = lo
	}
	return out
}

// Shuffle is shuffle(x) for a sequence of length n: for i from n-1 down
// to 1, swap i with _randbelow(i+1).
func (r *Random) Shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		j := int(r.Randbelow(uint64(i + 1)))
		swap(i, j)
	}
}

// Sample is the k indices, in selection order, that sample(seq, k) picks
// from a sequence of length n without replacement. As in CPython a pool
// of the n positions is drawn from when it is smaller than the set of k
// picks would be, else picks are redrawn until unseen; the two draw
// differently, so the switch point is CPython's.
func (r *Random) Sample(n, k int) []int {
	if k < 0 || k > n {
		panic("pyrandom: Sample larger than population or is negative")
	}
	out := make([]int, k)
	if n <= sampleSetSize(k) {
		pool := make([]int, n)
		for i := range pool {
			pool[i] = i
		}
		for i := 0; i < k; i++ {
			j := int(r.Randbelow(uint64(n - i)))
			out[i] = pool[j]
			pool[j] = pool[n-i-1]
		}
		return out
	}
	selected := make(map[int]struct{}, k)
	for i := 0; i < k; i++ {
		j := int(r.Randbelow(uint64(n)))
		for {
			if _, dup := selected[j]; !dup {
				break
			}
			j = int(r.Randbelow(uint64(n)))
		}
		selected[j] = struct{}{}
		out[i] = j
	}
	return out
}

// sampleSetSize is CPython's `21 + 4 ** ceil(log(k * 3, 4))` (the second
// term only when k > 5). 3k is never a power of 4, so the ceiling is the
// smallest e with 4^e > 3k, computed here without floating point.
func sampleSetSize(k int) int {
	size := 21
	if k > 5 {
		p := 1
		for p <= 3*k {
			p *= 4
		}
		size += p
	}
	return size
}

// ChoiceOf is choice(seq).
func ChoiceOf[T any](r *Random, seq []T) T { return seq[r.Choice(len(seq))] }

// ChoicesOf is choices(seq, k=k).
func ChoicesOf[T any](r *Random, seq []T, k int) []T {
	idx := r.Choices(len(seq), k)
	out := make([]T, k)
	for i, j := range idx {
		out[i] = seq[j]
	}
	return out
}

// SampleOf is sample(seq, k).
func SampleOf[T any](r *Random, seq []T, k int) []T {
	idx := r.Sample(len(seq), k)
	out := make([]T, k)
	for i, j := range idx {
		out[i] = seq[j]
	}
	return out
}

// ShuffleSlice is shuffle(x) in place.
func ShuffleSlice[T any](r *Random, x []T) {
	r.Shuffle(len(x), func(i, j int) { x[i], x[j] = x[j], x[i] })
}
