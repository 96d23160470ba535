package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
	"unsafe"
)

type endpoint int

const (
	endpointChat endpoint = iota
	endpointCompletions
)

// wireMessage is a chat message as sent. Its content is tokenized while
// the body is decoded (messageContent), so a request never holds its
// prompt as text beside the body and the ids.
type wireMessage struct {
	Role    string         `json:"role"`
	Content messageContent `json:"content"`
}

// messageContent is a message's content (a string, null or a list of
// parts whose text parts are joined with newlines) as token ids, or why
// it is not valid content.
type messageContent struct {
	ids []uint32
	err error
}

func (c *messageContent) UnmarshalJSON(raw []byte) error {
	*c = messageContent{}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	switch raw[0] {
	case '"':
		c.ids = tokenizeJSONString(withTemplateRoom(nil), raw)
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(raw, &parts); err != nil {
			c.err = err
			return nil
		}
		texts := make([]string, 0, len(parts))
		for _, p := range parts {
			if p.Type == "text" {
				texts = append(texts, p.Text)
			}
		}
		c.ids = tokenize(withTemplateRoom(nil), strings.Join(texts, "\n"))
	default:
		c.err = errors.New("must be a string, null or a list of parts")
	}
	return nil
}

// promptField is a completions prompt: a string or a list of token ids
// (each an unsigned 32-bit integer) used as is, read while the body is
// decoded.
type promptField struct {
	set bool
	ids []uint32
	err error
}

func (p *promptField) UnmarshalJSON(raw []byte) error {
	*p = promptField{set: true}
	p.ids, p.err = promptIDs(raw)
	return nil
}

// tokenizeJSONString appends the ids of a valid JSON string literal
// (quotes included) to dst. The common literal, valid UTF-8 with no
// escapes, is tokenized where it lies in the body: no copy of the text
// is made.
func tokenizeJSONString(dst []uint32, raw []byte) []uint32 {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		if len(inner) == 0 {
			return dst
		}
		// A view for the length of the call: tokenize keeps no piece.
		return tokenize(dst, unsafe.String(&inner[0], len(inner)))
	}
	var s string
	json.Unmarshal(raw, &s) // valid: the whole body was checked before decoding
	return tokenize(dst, s)
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// generateRequest holds the fields of both endpoints that the engine uses;
// everything else is accepted and ignored.
type generateRequest struct {
	Model               string         `json:"model"`
	Messages            []wireMessage  `json:"messages"`
	Prompt              promptField    `json:"prompt"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options"`
	MaxTokens           *int           `json:"max_tokens"`
	MaxCompletionTokens *int           `json:"max_completion_tokens"`
	MinTokens           int            `json:"min_tokens"`
	IgnoreEOS           bool           `json:"ignore_eos"`
	Temperature         *float64       `json:"temperature"`
	Seed                *int64         `json:"seed"`
	N                   *int           `json:"n"`
}

// badRequest is a client error answered with 400.
type badRequest struct{ msg string }

func (e badRequest) Error() string { return e.msg }

func badf(format string, a ...any) error { return badRequest{fmt.Sprintf(format, a...)} }

// parseMessages turns wire messages into roles and token ids.
func parseMessages(wire []wireMessage) ([]chatMessage, error) {
	if len(wire) == 0 {
		return nil, badf("messages must be a non-empty list")
	}
	msgs := make([]chatMessage, len(wire))
	for i, m := range wire {
		if m.Role == "" {
			return nil, badf("messages[%d].role is required", i)
		}
		if m.Content.err != nil {
			return nil, badf("messages[%d].content: %v", i, m.Content.err)
		}
		msgs[i] = chatMessage{Role: m.Role, IDs: m.Content.ids}
	}
	return msgs, nil
}

// promptIDs reads a completions prompt: a string, or a list of token ids
// (each an unsigned 32-bit integer) used as is.
func promptIDs(raw json.RawMessage) ([]uint32, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, badf("prompt is required")
	}
	switch raw[0] {
	case '"':
		return tokenizeJSONString(nil, raw), nil
	case '[':
		if ids, ok := parseIDList(raw); ok {
			return ids, nil
		}
		var ids []uint32
		if err := json.Unmarshal(raw, &ids); err != nil {
			return nil, badf("prompt must be a string or a list of token ids, each an integer in [0,4294967295] (batched prompts are not supported): %v", err)
		}
		return ids, nil
	}
	return nil, badf("prompt must be a string or a list of token ids")
}

// job is a validated request, ready to run.
type job struct {
	kind         endpoint
	ids          []uint32
	stream       bool
	includeUsage bool

	sampled   bool
	seed      *int64
	reasoning int
	maxTokens int
	minTokens int
	ignoreEOS bool
}

// parseJob validates a decoded request against the engine's limits.
func (s *Server) parseJob(kind endpoint, req *generateRequest) (*job, error) {
	j := &job{kind: kind, stream: req.Stream}
	j.includeUsage = req.Stream && req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	where := "prompt"
	switch kind {
	case endpointChat:
		if req.Messages == nil {
			return nil, badf("messages is required")
		}
		msgs, err := parseMessages(req.Messages)
		if err != nil {
			return nil, err
		}
		j.ids = applyTemplate(msgs, true)
		where = "messages"
	case endpointCompletions:
		if !req.Prompt.set {
			return nil, badf("prompt is required")
		}
		if req.Prompt.err != nil {
			return nil, req.Prompt.err
		}
		j.ids = req.Prompt.ids
	}
	if len(j.ids) == 0 {
		return nil, badf("the prompt has no tokens")
	}
	if req.N != nil && *req.N != 1 {
		return nil, badf("n must be 1 (got %d)", *req.N)
	}
	maxTokens := req.MaxTokens
	if kind == endpointChat && req.MaxCompletionTokens != nil {
		maxTokens = req.MaxCompletionTokens
	}
	if maxTokens != nil && *maxTokens < 1 {
		return nil, badf("max_tokens must be at least 1, got %d.", *maxTokens)
	}
	if req.MinTokens < 0 {
		return nil, badf("min_tokens must be at least 0, got %d.", req.MinTokens)
	}
	if req.Temperature != nil && (*req.Temperature < 0 || math.IsNaN(*req.Temperature)) {
		return nil, badf("temperature must be non-negative, got %v.", *req.Temperature)
	}
	p, limit := len(j.ids), s.cfg.MaxModelLen
	if maxTokens == nil {
		if p >= limit {
			return nil, badf("This model's maximum context length is %d tokens. However, your request has %d input tokens. Please reduce the length of the input %s.", limit, p, where)
		}
		maxTokens = new(int)
		*maxTokens = limit - p
	} else if *maxTokens > limit-p { // not p+max_tokens: a huge max_tokens would overflow past the check
		return nil, badf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the %s, %d in the completion). Please reduce the length of the %s or completion.", limit, uint64(p)+uint64(*maxTokens), p, where, *maxTokens, where)
	}
	if req.MinTokens > *maxTokens {
		return nil, badf("min_tokens must be less than or equal to max_tokens=%d, got %d.", *maxTokens, req.MinTokens)
	}

	j.reasoning = 0
	if kind == endpointChat {
		j.reasoning = s.cfg.ReasoningTokens
	}
	j.sampled = req.Temperature == nil || *req.Temperature > 0
	j.seed = req.Seed
	j.maxTokens, j.minTokens, j.ignoreEOS = *maxTokens, req.MinTokens, req.IgnoreEOS
	return j, nil
}

// plan decides the reply once the request's draw is known: a sampled
// request without a seed uses the draw's nonce.
func (j *job) plan(d draw) reply {
	var key uint64
	if j.sampled {
		key = d.Nonce
		if j.seed != nil {
			key = uint64(*j.seed)
		}
	}
	r := planReply(hashIDs(j.ids), j.sampled, key, j.reasoning, j.maxTokens, j.minTokens, j.ignoreEOS)
	if d.Nondeterministic && r.content > 0 {
		r.flip = r.content / 2
	}
	return r
}

// parseIDList reads a JSON array of unsigned 32-bit integers written
// plainly (digits, commas, whitespace), as clients send token-id prompts
// of a hundred thousand ids, without encoding/json's reflection. ok is
// false for anything else (fractions, exponents, signs, overflow, an
// empty list): the caller then decodes with encoding/json, which accepts
// or refuses it with its own message.
func parseIDList(raw []byte) (ids []uint32, ok bool) {
	ids = make([]uint32, 0, len(raw)/6+1)
	i := 1 // past '['
	for {
		for i < len(raw) && isSpace(raw[i]) {
			i++
		}
		start := i
		var v uint64
		for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
			v = v*10 + uint64(raw[i]-'0')
			if v > math.MaxUint32 {
				return nil, false
			}
			i++
		}
		if i == start || (raw[start] == '0' && i-start > 1) {
			return nil, false
		}
		ids = append(ids, uint32(v))
		for i < len(raw) && isSpace(raw[i]) {
			i++
		}
		if i >= len(raw) {
			return nil, false
		}
		switch raw[i] {
		case ',':
			i++
		case ']':
			return ids, i == len(raw)-1
		default:
			return nil, false
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
