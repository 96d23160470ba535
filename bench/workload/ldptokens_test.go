package workload

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kvbench/kvbench/sim/simtest"
)

// TestLDPTokensPerWord: the factor the form and the sizing line use is
// what the built-in engine's tokenizer gives for 5000-word contexts, on
// more than one seed; MeasureLDPTokensPerWord finds it through /tokenize.
func TestLDPTokensPerWord(t *testing.T) {
	url := simtest.Start(t, nil)
	e := &Engine{BaseURL: url + "/v1", Model: "kvbench-sim"}
	tk := newTokenizer(e)
	for _, seed := range []int64{1, 7, 42} {
		pool := LongDocPermutatorPool(LDPVocabSize, seed)
		ids, err := tk.tokenize(context.Background(), LongDocPermutatorContext(pool, 0, 5000, seed))
		if err != nil {
			t.Fatal(err)
		}
		if got := float64(len(ids)) / 5000; math.Abs(got-LDPBuiltinTokensPerWord) > 0.02 {
			t.Errorf("seed %d: %.4f tokens per word on the built-in engine, LDPBuiltinTokensPerWord is %.2f", seed, got, LDPBuiltinTokensPerWord)
		}
		f, err := MeasureLDPTokensPerWord(context.Background(), e, seed)
		if err != nil || math.Abs(f-LDPBuiltinTokensPerWord) > 0.03 {
			t.Errorf("seed %d: measured %.4f, %v", seed, f, err)
		}
	}
	if n := LDPContextTokens(5000, LDPBuiltinTokensPerWord); n != 12900 {
		t.Errorf("5000 words: %d tokens", n)
	}
	// An engine without /tokenize says so.
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	if _, err := MeasureLDPTokensPerWord(context.Background(), &Engine{BaseURL: srv.URL + "/v1"}, 42); err == nil {
		t.Error("no error from an engine without /tokenize")
	}
}
