package pyrandom

import (
	"math"
	"math/big"
	"slices"
	"testing"
)

// Every expected value below is what CPython 3.11.7 printed for the same
// calls (python3 -c 'import random; r = random.Random(42); ...').

func TestRandom(t *testing.T) {
	r := New(42)
	for _, want := range []float64{0.6394267984578837, 0.025010755222666936} {
		if got := r.Random(); got != want {
			t.Fatalf("Random(42).random() = %v, want %v", got, want)
		}
	}
	if got := New(3).Random(); got != 0.23796462709189137 {
		t.Fatalf("Random(3).random() = %v", got)
	}
}

func words(r *Random, k int) []uint64 {
	out := make([]uint64, k)
	for i := range out {
		out[i] = r.Getrandbits(32)
	}
	return out
}

func TestSeeds(t *testing.T) {
	cases := []struct {
		name string
		r    *Random
		want []uint64
	}{
		{"42", New(42), []uint64{2746317213, 478163327, 107420369, 3184935163, 1181241943}},
		{"0", New(0), []uint64{3626764237, 1654615998, 3255389356}},
		{"2**40+7", New(1<<40 + 7), []uint64{2635837658, 3209733218, 3500038837}},
		{"2**63-1", New(math.MaxInt64), []uint64{1359979423, 2819855560, 2711238091}},
		{"-2**63", New(math.MinInt64), []uint64{2377109768, 1691753470, 4039908392}},
		{"2**64+1", NewBig(new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 64), big.NewInt(1))), []uint64{437050517, 3681013637, 3113036029}},
		{"big 42", NewBig(big.NewInt(-42)), []uint64{2746317213, 478163327, 107420369}},
		{`"42:Paris\nParis is the capital of France."`, NewString("42:Paris\nParis is the capital of France."), []uint64{2864749633, 1751117650, 3289250755}},
		{`""`, NewString(""), []uint64{4124137760, 1951988028, 2557274880}},
	}
	for _, c := range cases {
		if got := words(c.r, len(c.want)); !slices.Equal(got, c.want) {
			t.Errorf("Random(%s).getrandbits(32) x %d = %v, want %v", c.name, len(c.want), got, c.want)
		}
	}
	// Sums past int64 seed as Python's unbounded ones: 2**63-1 + 2 and
	// -2**63 - 3.
	if got := words(NewSum(math.MaxInt64, 2), 3); !slices.Equal(got, []uint64{3142093607, 3219185990, 574862594}) {
		t.Errorf("Random(2**63+1) = %v", got)
	}
	if got := words(NewSum(math.MinInt64, -3), 3); !slices.Equal(got, []uint64{458592781, 663162588, 2612953956}) {
		t.Errorf("Random(-2**63-3) = %v", got)
	}
	if got := words(NewSum(40, 2), 3); !slices.Equal(got, []uint64{2746317213, 478163327, 107420369}) {
		t.Errorf("Random(40+2) = %v", got)
	}
	// The sign is dropped, as in CPython.
	if New(-42).Random() != 0.6394267984578837 {
		t.Error("Random(-42) differs from Random(42)")
	}
	// Past the first 624 outputs the state is regenerated.
	r := New(7)
	for i := 0; i < 620; i++ {
		r.Uint32()
	}
	if got := words(r, 6); !slices.Equal(got, []uint64{4251465531, 2868320755, 3575322645, 960836459, 693491440, 3033636545}) {
		t.Errorf("Random(7) outputs 620..625 = %v", got)
	}
	// Re-seeding restarts the sequence.
	r.Seed(42)
	if got := r.Getrandbits(32); got != 2746317213 {
		t.Errorf("after Seed(42): %d", got)
	}
}

func TestGetrandbits(t *testing.T) {
	r := New(42)
	var got []uint64
	for _, k := range []int{0, 1, 7, 31, 33, 63, 64} {
		got = append(got, r.Getrandbits(k))
	}
	want := []uint64{0, 1, 14, 53710184, 3184935163, 2058755736454904720, 13585496030504862185}
	if !slices.Equal(got, want) {
		t.Fatalf("getrandbits(0, 1, 7, 31, 33, 63, 64) = %v, want %v", got, want)
	}
	if got := New(12345678901234).Getrandbits(64); got != 10322521461556321409 {
		t.Fatalf("Random(12345678901234).getrandbits(64) = %d", got)
	}
}

func TestRandrange(t *testing.T) {
	// randrange(2**32) rejects on 33 bits: half the draws are redrawn.
	r := New(42)
	var got []int64
	for i := 0; i < 4; i++ {
		got = append(got, r.Randrange(0, 1<<32))
	}
	if !slices.Equal(got, []int64{2746317213, 1181241943, 958682846, 3163119785}) {
		t.Fatalf("randrange(2**32) x 4 = %v", got)
	}
	r = New(42)
	got = got[:0]
	for i := 0; i < 8; i++ {
		got = append(got, r.Randrange(-5, 5))
	}
	if !slices.Equal(got, []int64{-4, -5, -1, -2, -2, -3, -4, 3}) {
		t.Fatalf("randrange(-5, 5) x 8 = %v", got)
	}
	if v := r.Randrange(math.MinInt64, math.MaxInt64); v != 1669292198774022018 {
		t.Fatalf("randrange(-2**63, 2**63-1) = %d", v)
	}
	r = New(42)
	got = got[:0]
	for i := 0; i < 10; i++ {
		got = append(got, r.Randint(3, 7))
	}
	if !slices.Equal(got, []int64{3, 3, 5, 4, 4, 4, 3, 7, 3, 7}) {
		t.Fatalf("randint(3, 7) x 10 = %v", got)
	}
}

func TestChoice(t *testing.T) {
	r := New(42)
	letters := []byte("abcdefghij")
	var got []byte
	for i := 0; i < 8; i++ {
		got = append(got, ChoiceOf(r, letters))
	}
	if string(got) != "baeddcbi" {
		t.Fatalf("choice('abcdefghij') x 8 = %q", got)
	}
	if got := New(42).Choices(13, 10); !slices.Equal(got, []int{8, 0, 3, 2, 9, 8, 11, 1, 5, 0}) {
		t.Fatalf("choices(range(13), k=10) = %v", got)
	}
	if got := ChoicesOf(New(42), []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m"}, 3); !slices.Equal(got, []string{"i", "a", "d"}) {
		t.Fatalf("ChoicesOf = %v", got)
	}
	w := []float64{1, 0.5, 0.25, 2, 1e-3}
	if got := New(42).WeightedChoices(w, 10); !slices.Equal(got, []int{3, 0, 1, 0, 3, 3, 3, 0, 2, 0}) {
		t.Fatalf("choices(range(5), weights=%v, k=10) = %v", w, got)
	}
	// Zero weights are never picked, at either end.
	r = New(42)
	if a, b := r.WeightedChoices([]float64{1, 0, 0, 0, 0}, 3), r.WeightedChoices([]float64{0, 0, 1}, 3); !slices.Equal(a, []int{0, 0, 0}) || !slices.Equal(b, []int{2, 2, 2}) {
		t.Fatalf("zero weights: %v %v", a, b)
	}
}

func TestShuffle(t *testing.T) {
	r := New(42)
	x := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	ShuffleSlice(r, x)
	if !slices.Equal(x, []int{7, 3, 2, 8, 5, 6, 9, 4, 0, 1}) {
		t.Fatalf("shuffle(range(10)) = %v", x)
	}
	y := []int{0, 1, 2}
	ShuffleSlice(r, y)
	if !slices.Equal(y, []int{0, 1, 2}) {
		t.Fatalf("second shuffle(range(3)) = %v", y)
	}
}

func TestSample(t *testing.T) {
	r := New(42)
	if a, b := r.Sample(10, 10), r.Sample(10, 3); !slices.Equal(a, []int{1, 0, 4, 9, 6, 5, 8, 2, 3, 7}) || !slices.Equal(b, []int{0, 9, 1}) {
		t.Fatalf("sample(range(10), 10), sample(range(10), 3) = %v, %v", a, b)
	}
	// A large population is drawn with a set of picks, not a pool.
	if got := New(42).Sample(100000, 8); !slices.Equal(got, []int{83810, 14592, 3278, 97196, 36048, 32098, 29256, 18289}) {
		t.Fatalf("sample(range(100000), 8) = %v", got)
	}
	// The switch point: k 6 gives a set size of 21 + 4**3 = 85. A
	// population of 85 is drawn from a pool, 86 with a set of picks, and
	// with seed 5 the two ways part at the fourth pick.
	if got := New(5).Sample(85, 6); !slices.Equal(got, []int{79, 32, 45, 67, 3, 59}) {
		t.Fatalf("sample(range(85), 6) = %v", got)
	}
	if got := New(5).Sample(86, 6); !slices.Equal(got, []int{79, 32, 45, 83, 67, 3}) {
		t.Fatalf("sample(range(86), 6) = %v", got)
	}
	if got := SampleOf(New(42), []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}, 3); !slices.Equal(got, []string{"b", "a", "e"}) {
		t.Fatalf("SampleOf = %v", got)
	}
}

func TestSampleSetSize(t *testing.T) {
	// 21 + 4 ** ceil(log(k * 3, 4)) for k > 5, as CPython computes it.
	for k, want := range map[int]int{0: 21, 5: 21, 6: 85, 21: 85, 22: 277, 8000: 21 + 65536} {
		if got := sampleSetSize(k); got != want {
			t.Errorf("sampleSetSize(%d) = %d, want %d", k, got, want)
		}
	}
}

func TestPanics(t *testing.T) {
	for name, f := range map[string]func(r *Random){
		"Randbelow(0)":        func(r *Random) { r.Randbelow(0) },
		"Randrange(3, 3)":     func(r *Random) { r.Randrange(3, 3) },
		"Choice(0)":           func(r *Random) { r.Choice(0) },
		"Sample(3, 4)":        func(r *Random) { r.Sample(3, 4) },
		"Getrandbits(65)":     func(r *Random) { r.Getrandbits(65) },
		"WeightedChoices(0s)": func(r *Random) { r.WeightedChoices([]float64{0, 0}, 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f(New(1))
		}()
	}
}
