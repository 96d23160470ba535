package sim

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The tokenizer is deliberately simple and fully documented (docs/sim.md),
// so that a workload author can predict counts exactly:
//   - whitespace only separates and is never a token;
//   - every punctuation or symbol character is one token;
//   - every other run of characters is a word: one token per started 4
//     bytes (hi, tell, help: 1; hello: 2; document: 2; Document: 2);
//   - a token's id is derived from its bytes with FNV-1a, so equal text
//     always gives equal ids and block hashes can work on ids alone.
const (
	// Ids below firstPieceID are the chat template's special tokens.
	tokStart     = 1 // <|start|>
	tokSep       = 2 // <|sep|> between the role and the content
	tokEnd       = 3 // <|end|>
	firstPieceID = 16
	pieceIDSpan  = 1<<31 - firstPieceID

	wordBytes = 4 // bytes per word token

	// messageOverhead is what the chat template adds per message:
	// <|start|> role <|sep|> ... <|end|>.
	messageOverhead = 4
	// requestOverhead is the generation prompt at the end of every chat
	// request: <|start|> assistant <|sep|>.
	requestOverhead = 3
)

// pieceID is the id of a token's bytes.
func pieceID[T string | []byte](p T) uint32 {
	// FNV-1a, 32 bits, inline: no allocation per token.
	h := uint32(2166136261)
	for i := 0; i < len(p); i++ {
		h ^= uint32(p[i])
		h *= 16777619
	}
	return firstPieceID + h%pieceIDSpan
}

// roleID is the id of a role name inside the chat template.
func roleID(role string) uint32 {
	return pieceID([]byte("<|" + role + "|>"))
}

// tokenize appends the ids of text's tokens to dst.
func tokenize(dst []uint32, text string) []uint32 {
	// Count first: one allocation of the right size instead of a chain
	// of growing copies (a 30 MB prompt is 10 million tokens).
	n := 0
	splitPieces(text, func(string) { n++ })
	// Room for the chat template's end and generation prompt too.
	dst = slices.Grow(dst, n+1+requestOverhead)
	splitPieces(text, func(p string) { dst = append(dst, pieceID(p)) })
	return dst
}

// splitPieces calls fn with each of text's tokens, in order (substrings
// of text: no copy).
func splitPieces(text string, fn func(p string)) {
	b := text
	wordStart := -1
	flushWord := func(end int) {
		if wordStart < 0 {
			return
		}
		for i := wordStart; i < end; i += wordBytes {
			fn(b[i:min(i+wordBytes, end)])
		}
		wordStart = -1
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRuneInString(b[i:])
		switch {
		case unicode.IsSpace(r):
			flushWord(i)
		case unicode.IsPunct(r) || unicode.IsSymbol(r):
			flushWord(i)
			fn(b[i : i+size])
		default:
			if wordStart < 0 {
				wordStart = i
			}
		}
		i += size
	}
	flushWord(len(b))
}

// maxPieces bounds the table /detokenize answers from.
const maxPieces = 1 << 20

// pieceTable remembers the text of the ids /tokenize produced, so that
// /detokenize can mirror it. Ids are hashes of their bytes, so an id the
// server never produced cannot be turned back into text.
type pieceTable struct {
	mu sync.RWMutex
	m  map[uint32]string
}

func (t *pieceTable) learn(text string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = make(map[uint32]string)
	}
	splitPieces(text, func(p string) {
		id := pieceID(p)
		if _, ok := t.m[id]; !ok && len(t.m) < maxPieces {
			t.m[id] = strings.Clone(p) // not a view that keeps the prompt alive
		}
	})
}

// detokenize joins the pieces of ids with single spaces: tokenizing the
// result gives ids back exactly (whitespace only separates).
func (t *pieceTable) detokenize(ids []uint32) (string, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var b strings.Builder
	for i, id := range ids {
		p, ok := t.m[id]
		if !ok {
			return "", fmt.Errorf("token id %d is unknown: only ids /tokenize produced can be detokenized", id)
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p)
	}
	return b.String(), nil
}

// chatMessage is one message after parsing: its role and its content's
// token ids (from withTemplateRoom).
type chatMessage struct {
	Role string
	IDs  []uint32
}

// withTemplateRoom starts a content's ids with room for the chat
// template around it: the message header in front, the end and the
// generation prompt behind, so a one-message request becomes its prompt
// in place (a 30 MB prompt is ten million ids: no second copy).
func withTemplateRoom(dst []uint32) []uint32 {
	return append(dst[:0], 0, 0, 0)
}

// applyTemplate returns the ids of a chat request: every message as
// <|start|> role <|sep|> content <|end|>, then the generation prompt
// <|start|> assistant <|sep|> when addGenerationPrompt is set. The
// messages' ids are used up: a single message's become the prompt.
func applyTemplate(msgs []chatMessage, addGenerationPrompt bool) []uint32 {
	if len(msgs) == 1 && len(msgs[0].IDs) >= messageOverhead-1 {
		ids := msgs[0].IDs
		ids[0], ids[1], ids[2] = tokStart, roleID(msgs[0].Role), tokSep
		ids = append(ids, tokEnd)
		if addGenerationPrompt {
			ids = append(ids, tokStart, roleID("assistant"), tokSep)
		}
		msgs[0].IDs = nil
		return ids
	}
	n := requestOverhead
	for _, m := range msgs {
		n += len(m.IDs) + 1
	}
	ids := make([]uint32, 0, n)
	for i, m := range msgs {
		ids = append(ids, tokStart, roleID(m.Role), tokSep)
		ids = append(ids, contentIDs(m.IDs)...)
		ids = append(ids, tokEnd)
		msgs[i].IDs = nil
	}
	if addGenerationPrompt {
		ids = append(ids, tokStart, roleID("assistant"), tokSep)
	}
	return ids
}

// contentIDs is a content's ids without the template room in front.
func contentIDs(ids []uint32) []uint32 {
	if len(ids) < messageOverhead-1 {
		return nil // null content: no room was made
	}
	return ids[messageOverhead-1:]
}

// FNV-1a, 64 bits, over little-endian uint64/uint32 words, inlined so
// hashing a long prompt allocates nothing.
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

func fnvAdd32(h uint64, v uint32) uint64 {
	for i := 0; i < 4; i++ {
		h ^= uint64(byte(v >> (8 * i)))
		h *= fnvPrime64
	}
	return h
}

// hashIDs is a 64-bit fingerprint of a token sequence.
func hashIDs(ids []uint32) uint64 {
	h := uint64(fnvOffset64)
	for _, id := range ids {
		h = fnvAdd32(h, id)
	}
	return h
}
