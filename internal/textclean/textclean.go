// Package textclean makes text from outside (engines, files, folder
// names) safe to print: no terminal control sequence survives it. It is
// applied once, where such text enters the program (spec/cli.md, "Text
// from outside is never a terminal command"), so no output has to
// remember to.
package textclean

import (
	"strings"
	"unicode/utf8"
)

// Replacement stands in for every byte or rune that is removed.
const Replacement = '\uFFFD'

// Clean replaces C0 controls other than tab and newline, DEL, the C1
// range (U+0080-U+009F) and bytes that are not UTF-8 with U+FFFD. Text
// that needs no change is returned as it is, without allocating.
func Clean(s string) string { return clean(s, false) }

// Line is Clean for text shown on one line (an error detail, a table
// cell): tab and newline become spaces too.
func Line(s string) string { return clean(s, true) }

// IsClean reports whether Clean would return s unchanged.
func IsClean(s string) bool { return firstBad(s, false) < 0 }

func clean(s string, oneLine bool) string {
	i := firstBad(s, oneLine)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case oneLine && (c == '\t' || c == '\n'):
				b.WriteByte(' ')
			case badASCII(c):
				b.WriteRune(Replacement)
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || isC1(r) {
			b.WriteRune(Replacement)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// firstBad is the index of the first byte that needs replacing, or -1.
func firstBad(s string, oneLine bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if badASCII(c) || oneLine && (c == '\t' || c == '\n') {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || isC1(r) {
			return i
		}
		i += n
	}
	return -1
}

func badASCII(c byte) bool { return c < 0x20 && c != '\t' && c != '\n' || c == 0x7f }

func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }
