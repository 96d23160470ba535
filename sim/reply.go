package sim

// The reply model. A reply is a sequence of short lowercase words, each one
// token under the simulator's tokenizer, so completion_tokens is exactly the
// number of words sent. Greedy replies (temperature 0) depend only on the
// prompt's token ids; sampled replies also on the request's seed, or on a
// per-request draw when there is none.

var replyWords = [...]string{
	"the", "a", "of", "and", "to", "in", "is", "it", "that", "for",
	"on", "with", "as", "was", "at", "by", "this", "from", "or", "an",
	"are", "be", "not", "but", "all", "can", "has", "one", "more", "when",
	"will", "each", "than", "they", "what", "so", "some", "into", "time", "only",
	"data", "page", "key", "code", "test", "fast", "slow", "warm", "cold", "hit",
	"miss", "tier", "disk", "gpu", "row", "text", "line", "node", "task", "step",
	"next", "last", "same", "new",
}

var reasoningWords = [...]string{
	"hmm", "so", "the", "user", "asks", "let", "me", "see", "ok", "then",
	"we", "need", "to", "look", "at", "it", "now", "step", "one", "two",
	"next", "i", "will", "say", "that", "this", "fine", "yes", "no", "but",
	"and", "also",
}

// EOS rule: without ignore_eos a greedy reply ends by itself after
// eosMin + (h mod eosSpan) content tokens, h a hash of the prompt.
const (
	eosMin  = 32
	eosSpan = 480
)

const (
	saltWord      = 0x5157
	saltReasoning = 0x5245
	saltEOS       = 0x454f
)

// reply is one planned completion.
type reply struct {
	key       uint64 // what the text depends on
	reasoning int    // reasoning tokens, sent first
	content   int    // content tokens
	finish    string // "stop" or "length"
	flip      int    // content index whose word is changed (nondeterminism), -1 for none
}

// Tokens is completion_tokens: reasoning plus content.
func (r reply) Tokens() int { return r.reasoning + r.content }

// planReply decides a reply's length and text key.
//   - key: the prompt's hash, mixed with the sampling seed (or nonce) when
//     temperature > 0;
//   - natural length: reasoningTokens of reasoning, then eosMin + h mod
//     eosSpan content tokens (at least minTokens in total);
//   - ignoreEOS: always exactly maxTokens;
//   - maxTokens caps the total, reasoning first; finish is "length" when
//     the cap cut the reply (or ignoreEOS), "stop" when it ended by itself.
func planReply(promptHash uint64, sampled bool, sampleKey uint64, reasoningTokens, maxTokens, minTokens int, ignoreEOS bool) reply {
	key := promptHash
	if sampled {
		key = mix(key ^ mix(sampleKey+0x73616d70))
	}
	natural := reasoningTokens + eosMin + int(mix(key^saltEOS)%eosSpan)
	natural = max(natural, minTokens)
	total := natural
	finish := "stop"
	if ignoreEOS || natural > maxTokens {
		total = maxTokens
		finish = "length"
	}
	r := reply{key: key, finish: finish, flip: -1}
	r.reasoning = min(reasoningTokens, total)
	r.content = total - r.reasoning
	return r
}

// word returns content token i.
func (r reply) word(i int) string {
	w := int(mix(r.key^saltWord+uint64(i)*0x9e3779b97f4a7c15) % uint64(len(replyWords)))
	if i == r.flip {
		w = (w + 1) % len(replyWords)
	}
	return replyWords[w]
}

// reasoningWord returns reasoning token i.
func (r reply) reasoningWord(i int) string {
	w := mix(r.key^saltReasoning+uint64(i)*0x9e3779b97f4a7c15) % uint64(len(reasoningWords))
	return reasoningWords[w]
}

// mix is SplitMix64's finaliser: a cheap, well-spread 64-bit hash.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
