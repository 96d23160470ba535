package runs

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/kvbench/kvbench/bench/sender"
)

// indexLine is the part of a requests.jsonl line the index needs.
type indexLine struct {
	RequestID  string   `json:"request_id"`
	Phase      string   `json:"phase"`
	Successful bool     `json:"successful"`
	SubmitTime float64  `json:"submit_time"`
	FinishTime float64  `json:"finish_time"`
	TTFT       *float64 `json:"ttft_s"`
	CacheState string   `json:"cache_state"`

	PromptTokens     *int `json:"prompt_tokens"`
	CachedTokens     *int `json:"cached_tokens"`
	CompletionTokens *int `json:"completion_tokens"`
	Chunks           int  `json:"chunks"`

	hasID bool // the fast scanner saw a non-empty request_id
}

// scratch holds the values the pointers of an indexLine point to when
// the fast scanner filled it, so a line costs no allocation.
type scratch struct {
	ttft                       float64
	prompt, cached, completion int
}

// parseLine reads one line into l: the fast scanner first, encoding/json
// when the line needs more than it handles (escapes in a field it reads).
// ok is false for a line that is not a JSON object with a request_id.
func parseLine(b []byte, l *indexLine, sc *scratch) bool {
	*l = indexLine{}
	switch scanLine(b, l, sc) {
	case scanOK:
		return l.hasID
	case scanBad:
		return false
	}
	*l = indexLine{}
	return json.Unmarshal(b, l) == nil && l.RequestID != ""
}

type scanResult int

const (
	scanOK scanResult = iota
	scanBad
	scanSlow // valid-looking, but needs the full decoder
)

// scanLine is a single-pass reader of a flat JSON object that picks the
// index's fields without allocating (but for the strings it keeps). Values
// it does not need are skipped, nested ones included. ttft is where ttft_s
// and the token counts are stored in sc when they are numbers (l's
// pointers then point there).
func scanLine(b []byte, l *indexLine, sc *scratch) scanResult {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return scanBad
	}
	i++
	first := true
	for {
		i = skipWS(b, i)
		if i >= len(b) {
			return scanBad
		}
		if b[i] == '}' {
			if skipWS(b, i+1) != len(b) {
				return scanBad
			}
			return scanOK
		}
		if !first {
			if b[i] != ',' {
				return scanBad
			}
			i = skipWS(b, i+1)
		}
		first = false
		key, next, esc, ok := scanString(b, i)
		if !ok {
			return scanBad
		}
		if esc {
			return scanSlow
		}
		i = skipWS(b, next)
		if i >= len(b) || b[i] != ':' {
			return scanBad
		}
		i = skipWS(b, i+1)
		if i >= len(b) {
			return scanBad
		}
		start := i
		var r scanResult
		if i, r = skipValue(b, i); r != scanOK {
			return r
		}
		val := b[start:i]
		switch string(key) {
		case "request_id", "phase", "cache_state":
			s, ok := stringValue(val)
			if !ok {
				return scanSlow
			}
			switch string(key) {
			case "request_id":
				l.hasID = len(s) > 0
			case "phase":
				l.Phase = intern(s, phases)
			default:
				l.CacheState = intern(s, cacheStates)
			}
		case "successful":
			l.Successful = string(val) == "true"
		case "submit_time", "finish_time", "ttft_s":
			if string(val) == "null" {
				if string(key) == "ttft_s" {
					l.TTFT = nil
				}
				continue
			}
			v, err := strconv.ParseFloat(string(val), 64)
			if err != nil {
				return scanSlow
			}
			switch string(key) {
			case "submit_time":
				l.SubmitTime = v
			case "finish_time":
				l.FinishTime = v
			default:
				sc.ttft = v
				l.TTFT = &sc.ttft
			}
		case "prompt_tokens", "cached_tokens", "completion_tokens", "chunks":
			var dst **int
			switch string(key) {
			case "prompt_tokens":
				dst, sc.prompt = &l.PromptTokens, 0
			case "cached_tokens":
				dst, sc.cached = &l.CachedTokens, 0
			case "completion_tokens":
				dst, sc.completion = &l.CompletionTokens, 0
			}
			if string(val) == "null" {
				if dst != nil {
					*dst = nil
				}
				continue
			}
			v, err := strconv.Atoi(string(val))
			if err != nil {
				// Not an integer: the decoder decides (it refuses the line).
				return scanSlow
			}
			switch string(key) {
			case "prompt_tokens":
				sc.prompt, l.PromptTokens = v, &sc.prompt
			case "cached_tokens":
				sc.cached, l.CachedTokens = v, &sc.cached
			case "completion_tokens":
				sc.completion, l.CompletionTokens = v, &sc.completion
			default:
				l.Chunks = v
			}
		}
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// scanString reads the string starting at b[i] == '"': its raw content,
// the index after the closing quote, whether it holds an escape.
func scanString(b []byte, i int) (raw []byte, next int, esc, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, i, false, false
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			esc = true
			j++
		case '"':
			return b[i+1 : j], j + 1, esc, true
		}
	}
	return nil, len(b), esc, false
}

// stringValue is the content of a JSON string value without escapes
// (null is empty); ok is false for anything else.
func stringValue(v []byte) ([]byte, bool) {
	if string(v) == "null" {
		return nil, true
	}
	if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v[1:len(v)-1], '\\') >= 0 {
		return nil, false
	}
	return v[1 : len(v)-1], true
}

var (
	phases = []string{sender.PhaseMeasured, sender.PhaseWarmup, sender.PhaseFirst, sender.PhaseRepeated,
		sender.PhaseConcurrent, sender.PhaseReference}
	cacheStates = []string{sender.StateCold, sender.StateReused, sender.StateUnverified}
)

// intern returns the known string equal to raw without allocating, else
// a copy.
func intern(raw []byte, known []string) string {
	for _, k := range known {
		if string(raw) == k {
			return k
		}
	}
	return string(raw)
}

// skipValue moves past the value at b[i].
func skipValue(b []byte, i int) (int, scanResult) {
	switch c := b[i]; {
	case c == '"':
		_, next, _, ok := scanString(b, i)
		if !ok {
			return i, scanBad
		}
		return next, scanOK
	case c == '{' || c == '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				_, next, _, ok := scanString(b, j)
				if !ok {
					return j, scanBad
				}
				j = next - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, scanOK
				}
			}
		}
		return len(b), scanBad
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(b[i:], []byte(lit)) {
				return i + len(lit), scanOK
			}
		}
		return i, scanBad
	case c == '-' || c >= '0' && c <= '9':
		j := i + 1
		for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == '.' || b[j] == 'e' || b[j] == 'E' || b[j] == '+' || b[j] == '-') {
			j++
		}
		return j, scanOK
	}
	return i, scanBad
}
