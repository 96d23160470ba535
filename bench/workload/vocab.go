package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
)

// TokenizeFunc returns the engine's token ids for text, without special
// tokens where the engine allows it.
type TokenizeFunc func(ctx context.Context, text string) ([]uint32, error)

// vocabBatch is how many candidates one /tokenize call checks at once.
const vocabBatch = 64

// vocabMaxCalls bounds the /tokenize calls spent learning a vocabulary.
const vocabMaxCalls = 4000

// vocabMin is the fewest one-token words a workload can work with.
const vocabMin = 256

// vocabCandidates is a seeded stream of distinct lowercase pseudo-words
// (consonant-vowel syllables: "ba", "kot", "mire"...), short enough that
// most tokenizers keep many of them whole.
type vocabCandidates struct {
	rng  *rand.Rand
	seen map[string]bool
}

func newVocabCandidates(seed int64) *vocabCandidates {
	return &vocabCandidates{rng: rand.New(rand.NewPCG(uint64(seed), 0x766f63)), seen: map[string]bool{}}
}

func (c *vocabCandidates) next() string {
	const vowels, consonants = "aeiou", "bcdfghjklmnprstvwyz"
	for {
		var b []byte
		switch c.rng.IntN(3) {
		case 0: // CV
			b = []byte{consonants[c.rng.IntN(len(consonants))], vowels[c.rng.IntN(len(vowels))]}
		case 1: // CVC
			b = []byte{consonants[c.rng.IntN(len(consonants))], vowels[c.rng.IntN(len(vowels))], consonants[c.rng.IntN(len(consonants))]}
		default: // CVCV
			b = []byte{consonants[c.rng.IntN(len(consonants))], vowels[c.rng.IntN(len(vowels))],
				consonants[c.rng.IntN(len(consonants))], vowels[c.rng.IntN(len(vowels))]}
		}
		if w := string(b); !c.seen[w] {
			c.seen[w] = true
			return w
		}
	}
}

// LearnVocab finds up to n words that are one token each on the engine's
// tokenizer, in a seeded order: candidates are checked in batches (a batch
// whose words tokenize to exactly one id each is accepted whole; one that
// does not is split in halves until its single words are judged), within
// a bounded number of calls. Fewer than n words is not an error as long as
// there are enough to draw text from; the caller says how many it got.
func LearnVocab(ctx context.Context, tokenize TokenizeFunc, n int, seed int64) ([]string, error) {
	calls := 0
	count := func(words []string) (int, error) {
		calls++
		ids, err := tokenize(ctx, strings.Join(words, " "))
		return len(ids), err
	}
	base, err := count(nil) // ids the engine adds to any text (a BOS)
	if err != nil {
		return nil, err
	}
	var out []string
	var judge func(words []string) error
	judge = func(words []string) error {
		if len(out) >= n || calls >= vocabMaxCalls {
			return nil
		}
		got, err := count(words)
		if err != nil {
			return err
		}
		if got-base == len(words) {
			out = append(out, words[:min(len(words), n-len(out))]...)
			return nil
		}
		if len(words) == 1 {
			return nil
		}
		half := len(words) / 2
		if err := judge(words[:half]); err != nil {
			return err
		}
		return judge(words[half:])
	}
	cands := newVocabCandidates(seed)
	for len(out) < n && calls < vocabMaxCalls {
		batch := make([]string, vocabBatch)
		for i := range batch {
			batch[i] = cands.next()
		}
		if err := judge(batch); err != nil {
			return nil, err
		}
	}
	if len(out) < min(n, vocabMin) {
		return nil, &UnavailableError{Err: fmt.Errorf("the engine's /tokenize gave only %d one-token words in %d calls; cannot build text of exact length", len(out), calls)}
	}
	return out, nil
}

// tokenizeFunc is the engine's /tokenize (the one client trace replay
// uses too), or Params.Tokenize when a test set it; nil when no engine is
// known. Any failure of it before the run is the engine being unavailable
// (exit 3: nothing was sent yet).
func (p Params) tokenizeFunc() TokenizeFunc {
	tk := p.Tokenize
	if tk == nil {
		if p.Engine == nil {
			return nil
		}
		tk = newTokenizer(p.Engine).tokenize
	}
	return func(ctx context.Context, text string) ([]uint32, error) {
		ids, err := tk(ctx, text)
		var unavailable *UnavailableError
		if err != nil && !errors.As(err, &unavailable) {
			err = &UnavailableError{Err: err}
		}
		return ids, err
	}
}

// vocabulary learns n one-token words through the engine, or says why it
// cannot (exit 3: nothing was sent).
func (p Params) vocabulary(ctx context.Context, n int, seed int64) ([]string, error) {
	tk := p.tokenizeFunc()
	if tk == nil {
		return nil, &UnavailableError{Err: errors.New("this workload needs the engine's /tokenize, and no engine is known")}
	}
	return LearnVocab(ctx, tk, n, seed)
}
