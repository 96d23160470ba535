// Package jsonscan is kvbench's one hand-written JSON reader, shared by
// the client's stream parser (bench/sender: every SSE chunk, on the hot
// path) and the runs explorer's requests.jsonl index (bench/runs). It
// validates exactly what encoding/json accepts (same nesting limit, no
// UTF-8 check on skipped strings) but decodes only what the caller asks
// for and never allocates: strings come back as slices of the input when
// they need no decoding. FuzzScanner holds it to encoding/json.
//
// A caller walks one document: Peek at the next byte, then read the value
// it announces (Str or AppendStr, Num, Lit, Object, Array) or Skip it.
package jsonscan

import (
	"encoding/binary"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Scanner reads one JSON document; the zero value is ready after Reset.
type Scanner struct {
	b      []byte
	i      int
	depth  int
	keyBuf []byte // decoded keys that held escapes
}

// MaxDepth is encoding/json's nesting limit.
const MaxDepth = 10000

// Classes of bytes inside a JSON string.
const (
	sPlain = iota
	sQuote
	sEscape
	sControl
	sHigh
)

var strClass = func() (t [256]uint8) {
	for c := 0; c < 0x20; c++ {
		t[c] = sControl
	}
	t['"'] = sQuote
	t['\\'] = sEscape
	for c := 0x80; c < 0x100; c++ {
		t[c] = sHigh
	}
	return t
}()

// Flags say what a string's raw bytes need before they are its value.
type Flags uint8

const (
	Escaped Flags = 1 << iota // holds backslash escapes
	High                      // holds bytes >= 0x80 (UTF-8 to check)
)

// Reset starts reading b from its first byte.
func (s *Scanner) Reset(b []byte) {
	s.b, s.i, s.depth = b, 0, 0
}

// Pos is the offset in the document of the next byte to read.
func (s *Scanner) Pos() int { return s.i }

// Seek moves to offset i, which must start a value (or be where a value
// just ended) at the current nesting depth.
func (s *Scanner) Seek(i int) { s.i = i }

func (s *Scanner) ws() {
	i := s.i
	for i < len(s.b) && s.b[i] <= ' ' {
		switch s.b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			s.i = i
			return
		}
	}
	s.i = i
}

// Peek skips whitespace and returns the next byte, 0 at the end. Engines
// send compact JSON, so the first test nearly always settles it.
func (s *Scanner) Peek() byte {
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return s.b[s.i]
	}
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// Str reads the string at Pos (a quote) and returns its raw bytes between
// the quotes, a slice of the input, with flags saying whether they need
// decoding (AppendDecoded).
func (s *Scanner) Str() (raw []byte, flags Flags, ok bool) {
	b := s.b
	i := s.i + 1
	start := i
	for {
		// Eight bytes at a time while none is a quote, a backslash, a
		// control character or non-ASCII.
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			if special8(x) != 0 {
				break
			}
			i += 8
		}
		for i < len(b) && strClass[b[i]] == sPlain {
			i++
		}
		if i >= len(b) {
			return nil, 0, false
		}
		switch strClass[b[i]] {
		case sQuote:
			s.i = i + 1
			return b[start:i], flags, true
		case sEscape:
			flags |= Escaped
			if i+1 >= len(b) {
				return nil, 0, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex4(b[i+2:i+6]) {
					return nil, 0, false
				}
				i += 6
			default:
				return nil, 0, false
			}
		case sControl:
			return nil, 0, false
		default: // sHigh
			flags |= High
			i++
		}
	}
}

const (
	lsb8 = 0x0101010101010101
	msb8 = 0x8080808080808080
)

// special8 is non-zero when one of the eight bytes of x is '"', '\\',
// below 0x20 or above 0x7f (the classic has-zero-byte and has-less-than
// word tricks; exact, without false positives, when only zero is asked).
func special8(x uint64) uint64 {
	q := x ^ (lsb8 * '"')
	bs := x ^ (lsb8 * '\\')
	return ((q-lsb8) & ^q | (bs-lsb8) & ^bs | (x-lsb8*0x20) & ^x | x) & msb8
}

// AppendStr reads the string at Pos and appends its decoded value to dst.
func (s *Scanner) AppendStr(dst []byte) ([]byte, bool) {
	raw, flags, ok := s.Str()
	if !ok {
		return dst, false
	}
	return AppendDecoded(dst, raw, flags), true
}

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if hexVal(c) < 0 {
			return false
		}
	}
	return true
}

func hexVal(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func getu4(b []byte) rune {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' || !isHex4(b[2:]) {
		return -1
	}
	var r rune
	for _, c := range b[2:6] {
		r = r<<4 | rune(hexVal(c))
	}
	return r
}

// AppendDecoded appends the value of a validated string body: escapes
// resolved, invalid UTF-8 and lone surrogates replaced by U+FFFD as
// encoding/json does.
func AppendDecoded(dst, raw []byte, flags Flags) []byte {
	if flags == 0 || (flags == High && utf8.Valid(raw)) {
		return append(dst, raw...)
	}
	for r := 0; r < len(raw); {
		c := raw[r]
		switch {
		case c == '\\':
			switch e := raw[r+1]; e {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				rr := getu4(raw[r:])
				r += 6
				if utf16.IsSurrogate(rr) {
					if rr1 := getu4(raw[r:]); rr1 >= 0 {
						if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
							r += 6
							dst = utf8.AppendRune(dst, dec)
							continue
						}
					}
					rr = unicode.ReplacementChar
				}
				dst = utf8.AppendRune(dst, rr)
				continue
			default: // '"', '\\', '/'
				dst = append(dst, e)
			}
			r += 2
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			r++
		default:
			rr, size := utf8.DecodeRune(raw[r:])
			if rr == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, unicode.ReplacementChar)
			} else {
				dst = append(dst, raw[r:r+size]...)
			}
			r += size
		}
	}
	return dst
}

// Num reads a number. integer is false when it has a fraction or an
// exponent; v is its magnitude when integer and not overflowed (beyond
// 2^63-1). Its text is the input from the Pos before the call to the Pos
// after it.
func (s *Scanner) Num() (neg, integer bool, v uint64, overflow, ok bool) {
	b := s.b
	i := s.i
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	if i >= len(b) {
		return
	}
	integer = true
	switch c := b[i]; {
	case c == '0':
		i++
	case '1' <= c && c <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			d := uint64(b[i] - '0')
			if v > (1<<63-1-d)/10 {
				overflow = true
			} else if !overflow {
				v = v*10 + d
			}
			i++
		}
	default:
		return
	}
	if i < len(b) && b[i] == '.' {
		integer = false
		i++
		j := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == j {
			return
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		integer = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == j {
			return
		}
	}
	s.i = i
	ok = true
	return
}

// NumText reads a number and returns its text, a slice of the input.
func (s *Scanner) NumText() ([]byte, bool) {
	start := s.i
	if _, _, _, _, ok := s.Num(); !ok {
		return nil, false
	}
	return s.b[start:s.i], true
}

// Since is the input from offset start to Pos: the text of the value
// just read when start was its Pos.
func (s *Scanner) Since(start int) []byte { return s.b[start:s.i] }

// Lit reads the literal word (true, false or null) at Pos.
func (s *Scanner) Lit(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// Skip validates and steps over one value.
func (s *Scanner) Skip() bool {
	switch c := s.Peek(); c {
	case '"':
		_, _, ok := s.Str()
		return ok
	case '{':
		return s.Object(func([]byte) bool { return s.Skip() })
	case '[':
		return s.Array(s.Skip)
	case 't':
		return s.Lit("true")
	case 'f':
		return s.Lit("false")
	case 'n':
		return s.Lit("null")
	default:
		if c == '-' || ('0' <= c && c <= '9') {
			_, _, _, _, ok := s.Num()
			return ok
		}
		return false
	}
}

// Object reads the object at Pos (a '{'), calling member with the name of
// each member in turn, valid only during the call; member reads the value
// and reports whether it was valid.
func (s *Scanner) Object(member func(key []byte) bool) bool {
	empty, ok := s.open('}')
	if !ok {
		return false
	}
	for !empty {
		k, ok := s.key()
		if !ok || !member(k) {
			return false
		}
		more, ok := s.next('}')
		if !ok {
			return false
		}
		empty = !more
	}
	return true
}

// Array reads the array at Pos (a '['), calling elem for each element in
// turn; elem reads the element and reports whether it was valid.
func (s *Scanner) Array(elem func() bool) bool {
	empty, ok := s.open(']')
	if !ok {
		return false
	}
	for !empty {
		if !elem() {
			return false
		}
		more, ok := s.next(']')
		if !ok {
			return false
		}
		empty = !more
	}
	return true
}

// open consumes the '{' or '[' at Pos and reports an empty object or
// array: closing is its '}' or ']'.
func (s *Scanner) open(closing byte) (empty, ok bool) {
	if s.depth++; s.depth > MaxDepth {
		return false, false
	}
	s.i++
	if s.Peek() == closing {
		s.i++
		s.depth--
		return true, true
	}
	return false, true
}

// key reads a member name and its colon; the name is valid until the next
// call.
func (s *Scanner) key() ([]byte, bool) {
	if s.Peek() != '"' {
		return nil, false
	}
	raw, flags, ok := s.Str()
	if !ok {
		return nil, false
	}
	if flags != 0 {
		s.keyBuf = AppendDecoded(s.keyBuf[:0], raw, flags)
		raw = s.keyBuf
	}
	if s.Peek() != ':' {
		return nil, false
	}
	s.i++
	return raw, true
}

// next consumes the ',' or the closing '}' or ']' after a member or an
// element.
func (s *Scanner) next(closing byte) (more, ok bool) {
	switch s.Peek() {
	case ',':
		s.i++
		return true, true
	case closing:
		s.i++
		s.depth--
		return false, true
	}
	return false, false
}

// End reports whether only whitespace is left.
func (s *Scanner) End() bool {
	s.ws()
	return s.i == len(s.b)
}
