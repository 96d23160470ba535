package sender

import (
	"encoding/binary"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// scanner is a validating JSON reader over one SSE event's data. It
// accepts exactly what encoding/json accepts (same nesting limit, no UTF-8
// check on skipped strings) but decodes only what the caller asks for and
// never allocates: strings come back as slices of the input when they need
// no decoding.
type scanner struct {
	b      []byte
	i      int
	depth  int
	keyBuf []byte // decoded keys that held escapes
}

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

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

// Flags of a scanned string.
const (
	strEscaped = 1 << iota // holds backslash escapes
	strHigh                // holds bytes >= 0x80 (UTF-8 to check)
)

func (s *scanner) reset(b []byte) {
	s.b, s.i, s.depth = b, 0, 0
}

func (s *scanner) ws() {
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

// peek skips whitespace and returns the next byte, 0 at the end. Engines
// send compact JSON, so the first test nearly always settles it.
func (s *scanner) peek() byte {
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return s.b[s.i]
	}
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// str reads the string starting at s.i (a quote) and returns its raw bytes
// between the quotes with flags saying whether they need decoding.
func (s *scanner) str() (raw []byte, flags uint8, ok bool) {
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
			flags |= strEscaped
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
			flags |= strHigh
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

// appendStr reads a string and appends its decoded value to dst.
func (s *scanner) appendStr(dst []byte) ([]byte, bool) {
	raw, flags, ok := s.str()
	if !ok {
		return dst, false
	}
	return appendDecoded(dst, raw, flags), true
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

// appendDecoded appends the value of a validated string body: escapes
// resolved, invalid UTF-8 and lone surrogates replaced by U+FFFD as
// encoding/json does.
func appendDecoded(dst, raw []byte, flags uint8) []byte {
	if flags == 0 || (flags == strHigh && utf8.Valid(raw)) {
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

// num reads a number. integer is false when it has a fraction or an
// exponent; v is its magnitude when integer and not overflowed.
func (s *scanner) num() (neg, integer bool, v uint64, overflow, ok bool) {
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

func (s *scanner) lit(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// skip validates and steps over one value.
func (s *scanner) skip() bool {
	switch c := s.peek(); c {
	case '"':
		_, _, ok := s.str()
		return ok
	case '{':
		return s.object(func([]byte) bool { return s.skip() })
	case '[':
		return s.array(s.skip)
	case 't':
		return s.lit("true")
	case 'f':
		return s.lit("false")
	case 'n':
		return s.lit("null")
	default:
		if c == '-' || ('0' <= c && c <= '9') {
			_, _, _, _, ok := s.num()
			return ok
		}
		return false
	}
}

// object reads the object at s.i (a '{'), calling member with the name of
// each member in turn, valid only during the call; member reads the value
// and reports whether it was valid.
func (s *scanner) object(member func(key []byte) bool) bool {
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

// array reads the array at s.i (a '['), calling elem for each element in
// turn; elem reads the element and reports whether it was valid.
func (s *scanner) array(elem func() bool) bool {
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

// open consumes the '{' or '[' at s.i and reports an empty object or
// array: closing is its '}' or ']'.
func (s *scanner) open(closing byte) (empty, ok bool) {
	if s.depth++; s.depth > maxDepth {
		return false, false
	}
	s.i++
	if s.peek() == closing {
		s.i++
		s.depth--
		return true, true
	}
	return false, true
}

// key reads a member name and its colon; the name is valid until the next
// call.
func (s *scanner) key() ([]byte, bool) {
	if s.peek() != '"' {
		return nil, false
	}
	raw, flags, ok := s.str()
	if !ok {
		return nil, false
	}
	if flags != 0 {
		s.keyBuf = appendDecoded(s.keyBuf[:0], raw, flags)
		raw = s.keyBuf
	}
	if s.peek() != ':' {
		return nil, false
	}
	s.i++
	return raw, true
}

// next consumes the ',' or the closing '}' or ']' after a member or an
// element.
func (s *scanner) next(closing byte) (more, ok bool) {
	switch s.peek() {
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

// end reports whether only whitespace is left.
func (s *scanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}
