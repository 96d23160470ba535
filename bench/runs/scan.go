package runs

import (
	"encoding/json"
	"strconv"

	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/internal/jsonscan"
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

	// The figures compare tests (samples.go).
	RequestLatency   float64  `json:"request_latency_s"`
	ITLP50ms         *float64 `json:"itl_p50_ms"`
	DecodeUnmeasured *string  `json:"decode_unmeasured"`

	hasID bool // the fast scanner saw a non-empty request_id
}

// scratch holds the values the pointers of an indexLine point to when
// the fast scanner filled it, so a line costs no allocation, and the
// scanner with its buffers, reused from line to line.
type scratch struct {
	ttft, itl                  float64
	unmeasured                 string
	prompt, cached, completion int
	s                          jsonscan.Scanner
	str                        []byte // a decoded string value
}

// parseLine reads one line into l as encoding/json would: the fast
// scanner, or encoding/json itself for what the scanner leaves to it (a
// key that only matches case-insensitively, a value of the wrong type).
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
	scanSlow // valid so far, but the full decoder must decide
)

// scanLine reads one line with the validating scanner of
// internal/jsonscan and picks the index's fields without allocating (but
// for the strings it keeps); everything else is validated and skipped.
// ttft_s and the token counts are stored in sc when they are numbers (l's
// pointers then point there).
func scanLine(b []byte, l *indexLine, sc *scratch) scanResult {
	s := &sc.s
	s.Reset(b)
	if s.Peek() != '{' {
		// encoding/json refuses anything but an object (null leaves the
		// line without a request_id).
		return scanBad
	}
	slow := false
	ok := s.Object(func(key []byte) bool {
		if !exactKey(key) {
			slow = true
			return false
		}
		var ok bool
		switch string(key) {
		case "request_id", "phase", "cache_state", "decode_unmeasured":
			switch s.Peek() {
			case 'n':
				if string(key) == "decode_unmeasured" {
					l.DecodeUnmeasured = nil
				}
				return s.Lit("null") // null leaves a string as it is
			case '"':
			default:
				slow = true
				return false
			}
			if sc.str, ok = s.AppendStr(sc.str[:0]); !ok {
				return false
			}
			switch string(key) {
			case "request_id":
				l.hasID = len(sc.str) > 0
			case "phase":
				l.Phase = intern(sc.str, phases)
			case "decode_unmeasured":
				sc.unmeasured = intern(sc.str, unmeasuredReasons)
				l.DecodeUnmeasured = &sc.unmeasured
			default:
				l.CacheState = intern(sc.str, cacheStates)
			}
			return true
		case "successful":
			switch s.Peek() {
			case 't':
				l.Successful = true
				return s.Lit("true")
			case 'f':
				l.Successful = false
				return s.Lit("false")
			case 'n':
				return s.Lit("null")
			}
		case "submit_time", "finish_time", "ttft_s", "request_latency_s", "itl_p50_ms":
			if s.Peek() == 'n' {
				switch string(key) {
				case "ttft_s":
					l.TTFT = nil
				case "itl_p50_ms":
					l.ITLP50ms = nil
				}
				return s.Lit("null")
			}
			raw, isNum := number(s)
			if !isNum {
				break
			}
			if raw == nil {
				return false
			}
			v, err := strconv.ParseFloat(string(raw), 64)
			if err != nil {
				break // out of range: the decoder refuses it
			}
			switch string(key) {
			case "submit_time":
				l.SubmitTime = v
			case "finish_time":
				l.FinishTime = v
			case "request_latency_s":
				l.RequestLatency = v
			case "itl_p50_ms":
				sc.itl = v
				l.ITLP50ms = &sc.itl
			default:
				sc.ttft = v
				l.TTFT = &sc.ttft
			}
			return true
		case "prompt_tokens", "cached_tokens", "completion_tokens", "chunks":
			var dst **int
			switch string(key) {
			case "prompt_tokens":
				dst = &l.PromptTokens
			case "cached_tokens":
				dst = &l.CachedTokens
			case "completion_tokens":
				dst = &l.CompletionTokens
			}
			if s.Peek() == 'n' {
				if dst != nil {
					*dst = nil
				}
				return s.Lit("null")
			}
			raw, isNum := number(s)
			if !isNum {
				break
			}
			if raw == nil {
				return false
			}
			v, err := strconv.Atoi(string(raw))
			if err != nil {
				break // 8.0, 1e3 or too large: the decoder refuses it
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
			return true
		default:
			return s.Skip()
		}
		// A value of the wrong type for its field: the decoder refuses
		// the line if it is JSON at all.
		if !s.Skip() {
			return false
		}
		slow = true
		return false
	})
	switch {
	case slow:
		return scanSlow
	case !ok || !s.End():
		return scanBad
	}
	return scanOK
}

// number reads the number at the scanner's position and returns its
// text; isNum is false (nothing read) when the value is not a number, raw
// nil when it is a malformed one.
func number(s *jsonscan.Scanner) (raw []byte, isNum bool) {
	if c := s.Peek(); c != '-' && (c < '0' || c > '9') {
		return nil, false
	}
	raw, _ = s.NumText()
	return raw, true
}

// exactKey reports whether key can only match a field by exact
// comparison: encoding/json also matches names case-insensitively
// (Unicode folding included), which only matters for keys with
// upper-case or non-ASCII letters.
func exactKey(key []byte) bool {
	for _, c := range key {
		if 'A' <= c && c <= 'Z' || c >= 0x80 {
			return false
		}
	}
	return true
}

var (
	phases = []string{sender.PhaseMeasured, sender.PhaseWarmup, sender.PhaseFirst, sender.PhaseRepeated,
		sender.PhaseConcurrent, sender.PhaseReference}
	cacheStates       = []string{sender.StateCold, sender.StateReused, sender.StateUnverified}
	unmeasuredReasons = []string{"one_read"}
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
