package bench

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/kvbench/kvbench/bench/sender"
)

// Prompt salt values (--prompt-salt); anything else is a fixed text.
const (
	SaltAuto = "auto"
	SaltNone = "none"
)

// saltKeyBytes is how much of a prompt's start decides its salt line.
const saltKeyBytes = 64

// PromptSalt keeps one run's prompts apart from every earlier run's cache
// (spec/load.md, Cache isolation). Each salted prompt starts with one
// line: an 8-hex-digit tag, then the run's label. The tag hashes the run's
// secret with the prompt's first 64 bytes, so two prompts of a run get
// the same line exactly when they begin alike: requests that were meant
// to share a prefix (a document and its questions, a session's turns,
// identical probes) still share it whole, and prompts that diverge
// early diverge at the salt's first token, adding no shared prefix of
// their own. A sweep makes one PromptSalt per cell.
type PromptSalt struct {
	mode   string // SaltAuto, SaltNone, or the fixed text
	secret []byte
	label  string
	tail   string // " " + the label on one line + "\n": what follows the tag
}

// NewPromptSalt makes the salt for value (auto, none, or a fixed text).
// runID labels an auto salt. runKey, when not empty (a sharded run:
// config.RunKey), replaces the random nonce and labels the salt instead
// of runID, so every shard of one run salts alike, byte for byte, and a
// run with another key (a rerun given a new --run-key or --start-at)
// salts differently.
func NewPromptSalt(value, runID, runKey string) *PromptSalt {
	s := &PromptSalt{mode: value}
	switch value {
	case SaltNone:
	case SaltAuto, "":
		s.mode = SaltAuto
		var nonce [16]byte
		s.label = "kvbench run " + runID
		if runKey != "" {
			sum := sha256.Sum256([]byte("kvbench prompt salt|" + runKey))
			copy(nonce[:], sum[:])
			s.label = "kvbench run " + runKey
		} else {
			rand.Read(nonce[:])
		}
		s.secret = nonce[:]
	default:
		s.secret = []byte(value)
		s.label = value
	}
	s.tail = " " + oneLineLabel(s.label) + "\n"
	return s
}

// Mode is what the summary records as prompt_salt: auto, none or the text.
func (s *PromptSalt) Mode() string { return s.mode }

// Line is the salt line for a prompt beginning with start ("" for none).
func (s *PromptSalt) Line(start string) string {
	if s == nil || s.mode == SaltNone {
		return ""
	}
	if len(start) > saltKeyBytes {
		start = start[:saltKeyBytes]
	}
	// secret, a zero byte, start: hashed from the stack when it fits
	// (every auto salt), with no allocation per request.
	var in [64 + 1 + saltKeyBytes]byte
	msg := append(append(append(in[:0], s.secret...), 0), start...)
	sum := sha256.Sum256(msg)
	var tag [8]byte
	hex.Encode(tag[:], sum[:4])
	return string(tag[:]) + s.tail
}

// Apply puts the salt line at the very start of req's prompt: the first
// message of a chat and the text of a completion. A request may carry
// both (a workload's messages, joined into the prompt for --endpoint
// completions): each is salted, with the same line when they begin alike.
// Token-id prompts and verbatim ones (the user's own) are left alone. The
// messages are copied, never changed in place (workloads reuse them turn
// after turn).
func (s *PromptSalt) Apply(req *sender.Request) {
	if s == nil || s.mode == SaltNone || req.Verbatim || len(req.PromptIDs) > 0 {
		return
	}
	if len(req.Messages) > 0 {
		msgs := make([]sender.Message, len(req.Messages))
		copy(msgs, req.Messages)
		msgs[0].Content = s.Line(msgs[0].Content) + msgs[0].Content
		req.Messages = msgs
	}
	if req.Prompt != "" {
		req.Prompt = s.Line(req.Prompt) + req.Prompt
	}
}

func oneLineLabel(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
