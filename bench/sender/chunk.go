package sender

import "github.com/kvbench/kvbench/internal/jsonscan"

// States of a token count read from usage or timings.
const (
	countAbsent  = iota // the field is not there
	countNull           // JSON null
	countInvalid        // anything but a JSON integer >= 0
	countValid
)

// MaxCount is the largest valid token count (spec/record.md): 2^40.
// Larger integers are invalid counts, so that no sum of counts over a
// run (2^23 requests of 2^40 tokens) can overflow and no rate derived
// from them can go negative.
const MaxCount = 1 << 40

// count is a token count as the server reported it. Only a JSON integer
// in [0, MaxCount] is valid: booleans, floats (8.0), numeric strings,
// negatives and larger integers are not.
type count struct {
	v  int
	st uint8
}

func (c count) valid() bool { return c.st == countValid }

// ptr returns the count for the record: nil unless valid.
func (c count) ptr(slot *int) *int {
	if c.st != countValid {
		return nil
	}
	*slot = c.v
	return slot
}

// usage is the part of one `usage` object the receipts need.
type usage struct {
	prompt, completion count
	// cached is usage.prompt_tokens_details.cached_tokens. Absent or null
	// (also when prompt_tokens_details itself is absent or null) means the
	// engine gave no details; a prompt_tokens_details that is not an object
	// makes it invalid.
	cached count
}

// chunk is what one `data:` JSON object carries. Its byte slices are
// scratch owned by the chunk and valid until the next parse.
type chunk struct {
	choice    bool   // a non-empty choices array
	content   []byte // choices[].delta.content and choices[].text, in order
	reasoning []byte // per delta: reasoning_content if non-empty, else reasoning
	// reasoningField is the field the first reasoning text came from.
	reasoningField string
	alt            []byte // delta.reasoning, while its delta is read
	text           []byte // choices[].text, while its choice is read
	finish         []byte // the last non-null finish_reason
	hasFinish      bool
	usage          usage
	hasUsage       bool // a non-null usage
	cacheN         count
	hasTimings     bool // a non-null timings
	tokenSHA       []byte
	hasTokenSHA    bool
	// isError: a non-null top-level "error", or vLLM's `"object": "error"`.
	isError        bool
	errKey, objErr bool

	// Shape counters that decide whether the chunk can serve as a
	// template (see stream.fastChunk): how many choices arrays, choices,
	// deltas, content-source keys (delta.content, text) and reasoning
	// keys it had, and where the last content string lies.
	nChoicesKeys, nChoices, nDeltas, nSrcKeys, nReasonKeys int
	srcStr                                                 bool
	srcStart, srcEnd                                       int
}

// templateOK reports whether the chunk's only text is one content string
// and it carries nothing else the record reads, so that a later chunk
// identical but for that string's value decodes the same but for it.
func (c *chunk) templateOK() bool {
	return c.nChoicesKeys == 1 && c.nChoices == 1 && c.nDeltas <= 1 && c.nSrcKeys == 1 && c.srcStr &&
		c.nReasonKeys == 0 && !c.hasFinish && !c.hasUsage && !c.hasTimings && !c.hasTokenSHA && !c.isError &&
		!c.errKey && !c.objErr
}

// parseChunk decodes the fields kvbench needs from one event's data and
// validates the rest. It reports false for anything that is not a valid
// JSON object. A member repeated in one object counts once, the last one
// winning, as in Python's json module.
func parseChunk(s *jsonscan.Scanner, c *chunk, data []byte) bool {
	s.Reset(data)
	c.choice, c.hasFinish, c.hasUsage, c.hasTimings, c.hasTokenSHA = false, false, false, false, false
	c.isError, c.errKey, c.objErr = false, false, false
	c.nChoicesKeys, c.nChoices, c.nDeltas, c.nSrcKeys, c.nReasonKeys, c.srcStr = 0, 0, 0, 0, 0, false
	c.content, c.reasoning, c.reasoningField = c.content[:0], c.reasoning[:0], ""
	if s.Peek() != '{' {
		return false
	}
	ok := s.Object(func(k []byte) bool {
		switch string(k) {
		case "choices":
			c.nChoicesKeys++
			return parseChoices(s, c)
		case "usage":
			return parseUsage(s, c)
		case "timings":
			return parseTimings(s, c)
		case "tensorfold":
			return parseTensorfold(s, c)
		case "error":
			c.errKey = s.Peek() != 'n'
			return s.Skip()
		case "object":
			c.objErr = false
			if s.Peek() != '"' {
				return s.Skip()
			}
			raw, _, ok := s.Str()
			c.objErr = string(raw) == "error"
			return ok
		}
		return s.Skip()
	})
	if !ok {
		return false
	}
	c.isError = c.errKey || c.objErr
	return s.End()
}

func parseChoices(s *jsonscan.Scanner, c *chunk) bool {
	c.choice, c.hasFinish = false, false
	c.content, c.reasoning, c.reasoningField = c.content[:0], c.reasoning[:0], ""
	if s.Peek() != '[' {
		return s.Skip()
	}
	return s.Array(func() bool {
		c.choice = true
		c.nChoices++
		if s.Peek() == '{' {
			return parseChoice(s, c)
		}
		return s.Skip()
	})
}

func parseChoice(s *jsonscan.Scanner, c *chunk) bool {
	cm, rm, field := len(c.content), len(c.reasoning), c.reasoningField
	c.text = c.text[:0]
	ok := s.Object(func(k []byte) bool {
		switch string(k) {
		case "delta":
			c.nDeltas++
			c.content, c.reasoning, c.reasoningField = c.content[:cm], c.reasoning[:rm], field
			if s.Peek() == '{' {
				return parseDelta(s, c)
			}
		case "text":
			c.text = c.text[:0]
			c.nSrcKeys++
			c.srcStr = s.Peek() == '"'
			if c.srcStr {
				var ok bool
				c.srcStart = s.Pos() + 1
				c.text, ok = s.AppendStr(c.text)
				c.srcEnd = s.Pos() - 1
				return ok
			}
		case "finish_reason":
			if s.Peek() == '"' {
				var ok bool
				c.finish, ok = s.AppendStr(c.finish[:0])
				c.hasFinish = true
				return ok
			}
		}
		return s.Skip()
	})
	if !ok {
		return false
	}
	c.content = append(c.content, c.text...)
	return true
}

// parseDelta reads content, and one reasoning field per delta:
// reasoning_content when it is a non-empty string, else reasoning.
func parseDelta(s *jsonscan.Scanner, c *chunk) bool {
	cm, mark := len(c.content), len(c.reasoning)
	c.alt = c.alt[:0]
	ok := s.Object(func(k []byte) bool {
		var ok bool
		switch string(k) {
		case "content":
			c.content = c.content[:cm]
			c.nSrcKeys++
			c.srcStr = s.Peek() == '"'
			if c.srcStr {
				c.srcStart = s.Pos() + 1
				c.content, ok = s.AppendStr(c.content)
				c.srcEnd = s.Pos() - 1
				return ok
			}
		case "reasoning_content":
			c.nReasonKeys++
			c.reasoning = c.reasoning[:mark]
			if s.Peek() == '"' {
				c.reasoning, ok = s.AppendStr(c.reasoning)
				return ok
			}
		case "reasoning":
			c.nReasonKeys++
			c.alt = c.alt[:0]
			if s.Peek() == '"' {
				c.alt, ok = s.AppendStr(c.alt[:0])
				return ok
			}
		}
		return s.Skip()
	})
	if !ok {
		return false
	}
	switch {
	case len(c.reasoning) > mark:
		if c.reasoningField == "" {
			c.reasoningField = "reasoning_content"
		}
	case len(c.alt) > 0:
		c.reasoning = append(c.reasoning, c.alt...)
		if c.reasoningField == "" {
			c.reasoningField = "reasoning"
		}
	}
	return true
}

// parseUsage keeps the usage object of this chunk; a null usage is no
// usage, any other non-object makes every count invalid.
func parseUsage(s *jsonscan.Scanner, c *chunk) bool {
	c.hasUsage = false
	switch s.Peek() {
	case 'n':
		return s.Lit("null")
	case '{':
	default:
		c.hasUsage = true
		c.usage = usage{count{st: countInvalid}, count{st: countInvalid}, count{st: countInvalid}}
		return s.Skip()
	}
	c.hasUsage = true
	c.usage = usage{}
	return s.Object(func(k []byte) bool {
		var ok bool
		switch string(k) {
		case "prompt_tokens":
			c.usage.prompt, ok = readCount(s)
		case "completion_tokens":
			c.usage.completion, ok = readCount(s)
		case "prompt_tokens_details":
			ok = parseDetails(s, c)
		default:
			ok = s.Skip()
		}
		return ok
	})
}

func parseDetails(s *jsonscan.Scanner, c *chunk) bool {
	c.usage.cached = count{}
	switch s.Peek() {
	case 'n':
		return s.Lit("null")
	case '{':
	default:
		c.usage.cached.st = countInvalid
		return s.Skip()
	}
	return s.Object(func(k []byte) bool {
		if string(k) != "cached_tokens" {
			return s.Skip()
		}
		var ok bool
		c.usage.cached, ok = readCount(s)
		return ok
	})
}

// parseTimings reads llama.cpp's timings.cache_n.
func parseTimings(s *jsonscan.Scanner, c *chunk) bool {
	c.hasTimings = false
	if s.Peek() != '{' {
		return s.Skip()
	}
	c.hasTimings = true
	c.cacheN = count{}
	return s.Object(func(k []byte) bool {
		if string(k) != "cache_n" {
			return s.Skip()
		}
		var ok bool
		c.cacheN, ok = readCount(s)
		return ok
	})
}

// parseTensorfold reads tensorfold.token_sha.
func parseTensorfold(s *jsonscan.Scanner, c *chunk) bool {
	c.hasTokenSHA = false
	if s.Peek() != '{' {
		return s.Skip()
	}
	return s.Object(func(k []byte) bool {
		if string(k) != "token_sha" {
			return s.Skip()
		}
		c.hasTokenSHA = s.Peek() == '"'
		if !c.hasTokenSHA {
			return s.Skip()
		}
		var ok bool
		c.tokenSHA, ok = s.AppendStr(c.tokenSHA[:0])
		return ok
	})
}

// readCount reads a token count value of any JSON type.
func readCount(s *jsonscan.Scanner) (count, bool) {
	switch c := s.Peek(); {
	case c == 'n':
		return count{st: countNull}, s.Lit("null")
	case c == '-' || ('0' <= c && c <= '9'):
		neg, integer, v, overflow, ok := s.Num()
		if !ok {
			return count{}, false
		}
		if !integer || overflow || (neg && v != 0) || v > MaxCount {
			return count{st: countInvalid}, true
		}
		return count{v: int(v), st: countValid}, true
	default:
		return count{st: countInvalid}, s.Skip()
	}
}

const maxInt = int(^uint(0) >> 1)

// validTokenSHA: 12 or 64 lowercase hex characters.
func validTokenSHA(b []byte) bool {
	if len(b) != 12 && len(b) != 64 {
		return false
	}
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
