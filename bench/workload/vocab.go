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

const vocabVowels, vocabConsonants = "aeiou", "bcdfghjklmnprstvwyz"

// vocabCandidateSpace is how many distinct candidates there are: CV, CVC
// and CVCV words.
const vocabCandidateSpace = len(vocabConsonants) * len(vocabVowels) * (1 + len(vocabConsonants) + len(vocabConsonants)*len(vocabVowels))

// exhausted reports whether every candidate has been given.
func (c *vocabCandidates) exhausted() bool { return len(c.seen) >= vocabCandidateSpace }

func (c *vocabCandidates) next() string {
	const vowels, consonants = vocabVowels, vocabConsonants
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

// TokenPool is a vocabulary of words that are one token each and how
// text is made of them (LMCache's TokenPool): with LeadingSpace, every
// word follows a space, the first one too (" ba kot mire"), as on most
// tokenizers, where a word's token carries its leading space; without
// it the words are only separated by spaces ("ba kot mire"), for
// tokenizers that charge for a leading space.
type TokenPool struct {
	Words        []string
	LeadingSpace bool
}

// Join makes the text of words: one token per word.
func (p TokenPool) Join(words []string) string {
	text := strings.Join(words, " ")
	if text != "" && p.LeadingSpace {
		return " " + text
	}
	return text
}

// LearnVocab finds up to n words that are one token each on the engine's
// tokenizer, in a seeded order, under LMCache's joining convention: each
// word after a space first; when that finds fewer than n words, the words
// separated by spaces, kept if it finds more. Candidates are checked in
// batches (a batch whose words tokenize to exactly one id each is
// accepted whole; one that does not is split in halves until its single
// words are judged), within a bounded number of calls per convention.
// Fewer than n words is not an error as long as there are enough to draw
// text from; the caller says how many it got.
func LearnVocab(ctx context.Context, tokenize TokenizeFunc, n int, seed int64) (TokenPool, error) {
	spaced, err := learnVocab(ctx, tokenize, n, seed, true)
	if err != nil {
		return TokenPool{}, err
	}
	pool := TokenPool{Words: spaced.words, LeadingSpace: true}
	calls := spaced.calls
	if len(pool.Words) < n {
		sep, err := learnVocab(ctx, tokenize, n, seed, false)
		if err != nil {
			return TokenPool{}, err
		}
		calls += sep.calls
		if len(sep.words) > len(pool.Words) {
			pool = TokenPool{Words: sep.words}
		}
	}
	if len(pool.Words) < min(n, vocabMin) {
		return TokenPool{}, &UnavailableError{Err: fmt.Errorf("the engine's /tokenize gave only %d one-token words in %d calls; cannot build text of exact length", len(pool.Words), calls)}
	}
	return pool, nil
}

type learned struct {
	words []string
	calls int
}

// learnVocab learns words under one convention: leading (" w1 w2") or
// separated ("w1 w2").
func learnVocab(ctx context.Context, tokenize TokenizeFunc, n int, seed int64, leading bool) (learned, error) {
	calls := 0
	count := func(words []string) (int, error) {
		calls++
		text := strings.Join(words, " ")
		if leading {
			text = " " + text
		}
		ids, err := tokenize(ctx, text)
		return len(ids), err
	}
	// Ids the engine adds to any text (a BOS). A leading space that costs
	// a token of its own counts against the words, as in LMCache.
	calls++
	ids, err := tokenize(ctx, "")
	if err != nil {
		return learned{}, err
	}
	base := len(ids)
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
	for len(out) < n && calls < vocabMaxCalls && !cands.exhausted() {
		batch := make([]string, 0, vocabBatch)
		for len(batch) < vocabBatch && !cands.exhausted() {
			batch = append(batch, cands.next())
		}
		if err := judge(batch); err != nil {
			return learned{}, err
		}
	}
	return learned{words: out, calls: calls}, nil
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
func (p Params) vocabulary(ctx context.Context, n int, seed int64) (TokenPool, error) {
	tk := p.tokenizeFunc()
	if tk == nil {
		return TokenPool{}, &UnavailableError{Err: errors.New("this workload needs the engine's /tokenize, and no engine is known")}
	}
	return LearnVocab(ctx, tk, n, seed)
}
