package workload

import (
	"strings"
	"unicode"
)

// RAGFinalAnswer is the text of the last <final_answer> region of a
// reply; ok is false when there is none or the last one is unterminated.
func RAGFinalAnswer(reply string) (answer string, ok bool) {
	const open, close = "<final_answer>", "</final_answer>"
	i := strings.LastIndex(reply, open)
	if i < 0 {
		return "", false
	}
	rest := reply[i+len(open):]
	j := strings.Index(rest, close)
	if j < 0 {
		return "", false
	}
	return strings.TrimSpace(rest[:j]), true
}

// RAGNormalize lowercases, drops ASCII punctuation and the words a, an
// and the, and collapses whitespace (SQuAD's normalisation).
func RAGNormalize(s string) string {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if r < 128 && unicode.IsPunct(r) || r < 128 && unicode.IsSymbol(r) {
			return -1
		}
		return r
	}, s)
	words := strings.Fields(s)
	out := words[:0]
	for _, w := range words {
		if w != "a" && w != "an" && w != "the" {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// RAGTokenF1 is the token F1 of a prediction against one gold answer,
// both normalised: 2PR/(P+R) over the multiset of shared tokens; 1 when
// both are empty, 0 when only one is.
func RAGTokenF1(prediction, gold string) float64 {
	p, g := strings.Fields(RAGNormalize(prediction)), strings.Fields(RAGNormalize(gold))
	if len(p) == 0 || len(g) == 0 {
		if len(p) == len(g) {
			return 1
		}
		return 0
	}
	counts := map[string]int{}
	for _, t := range g {
		counts[t]++
	}
	same := 0
	for _, t := range p {
		if counts[t] > 0 {
			counts[t]--
			same++
		}
	}
	if same == 0 {
		return 0
	}
	precision := float64(same) / float64(len(p))
	recall := float64(same) / float64(len(g))
	return 2 * precision * recall / (precision + recall)
}

// RAGBestF1 is the best F1 of prediction over the gold answers.
func RAGBestF1(prediction string, golds []string) float64 {
	best := 0.0
	for _, g := range golds {
		best = max(best, RAGTokenF1(prediction, g))
	}
	return best
}
