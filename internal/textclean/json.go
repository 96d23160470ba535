package textclean

import "unicode/utf8"

// JSON cleans every string of the JSON text b, keys and values, as Clean
// cleans text: a character Clean replaces, written raw (DEL, C1 in
// UTF-8, a byte that is not UTF-8) or as an escape (\u001b, \b, \f, \r,
// \u009b), becomes U+FFFD. Nothing else changes (key order, numbers,
// spacing, the other escapes), so a document decodes as before but for
// its text; a file read through JSON needs no cleaning field by field.
// What a decoder refuses (a raw control character inside a string,
// anything outside one) is left for it to refuse. b is returned as it is,
// without allocating, when it needs no change.
func JSON(b []byte) []byte {
	var out []byte
	changed := false
	last := 0 // b[last:i] is not copied to out yet
	replace := func(i, n int, with string) {
		if !changed {
			out = make([]byte, 0, len(b)+8)
			changed = true
		}
		out = append(out, b[last:i]...)
		out = append(out, with...)
		last = i + n
	}
	in := false
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case !in:
			in = c == '"'
			i++
		case c == '"':
			in = false
			i++
		case c == '\\':
			n, bad := escape(b[i:])
			if bad {
				replace(i, n, `\ufffd`)
			}
			i += n
		case c == 0x7f:
			replace(i, 1, string(Replacement))
			i++
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 || isC1(r) {
				replace(i, n, string(Replacement))
			}
			i += n
		}
	}
	if !changed {
		return b
	}
	return append(out, b[last:]...)
}

// escape reads the escape at the start of b (a backslash): its length,
// and whether it stands for a character Clean replaces.
func escape(b []byte) (n int, bad bool) {
	if len(b) < 2 {
		return len(b), false
	}
	switch b[1] {
	case 'b', 'f', 'r':
		return 2, true
	case 'u':
		if len(b) < 6 {
			return 2, false
		}
		r := rune(0)
		for _, h := range b[2:6] {
			var d byte
			switch {
			case '0' <= h && h <= '9':
				d = h - '0'
			case 'a' <= h && h <= 'f':
				d = h - 'a' + 10
			case 'A' <= h && h <= 'F':
				d = h - 'A' + 10
			default:
				return 2, false
			}
			r = r<<4 | rune(d)
		}
		return 6, r < 0x20 && r != '\t' && r != '\n' || r == 0x7f || isC1(r)
	}
	return 2, false
}
