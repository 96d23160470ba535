// Package cleantest holds the hostile text of the tests that check text
// from outside never reaches an output as a terminal command
// (spec/cli.md), and the check itself.
package cleantest

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// Text is what a hostile engine or a hand-edited file puts in a name, a
// note or a model id: a clipboard write (OSC 52), a title (OSC 0) and a
// screen clear (CSI 2J) with their BELs, a C1 CSI in UTF-8 and as a raw
// byte, DEL and NUL.
const Text = "evil\x1b]52;c;SE9TVElMRQ==\x07\x1b]0;pwned\x07\x1b[2J\u009b31m\x9b\x7f\x00end"

// Folder is Text as a folder name can hold it (no NUL, no slash).
const Folder = "evil\x1b]52;c;SE9TVElMRQ==\x07\x1b]0;pwned\x07\x1b[2J\u009b31m\x9b\x7fend"

// JSON is Text inside a JSON string as a hand-edited file holds it: the
// C0 characters escaped (raw they are not JSON), DEL, C1 and the byte
// 0x9b raw, and a C1 escaped once more. It goes between quotes.
const JSON = `evil\u001b]52;c;SE9TVElMRQ==\u0007\u001b]0;pwned\u0007\u001b[2J` + "\u009b31m\x9b\x7f" + `\u0000\u009b\r\bend`

// Bad is the byte offset of the first character of s a terminal could
// act on (C0 but tab and newline, DEL, C1, a byte that is not UTF-8) and
// what it is; -1 when there is none.
func Bad(s string) (int, string) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			return i, fmt.Sprintf("raw byte %#x", s[i])
		case r < 0x20 && r != '\t' && r != '\n', r == 0x7f, r >= 0x80 && r <= 0x9f:
			return i, fmt.Sprintf("%U", r)
		}
		i += n
	}
	return -1, ""
}

// Shown is how the start of Text looks once cleaned: an output that
// shows the hostile field holds it.
const Shown = "evil\uFFFD]52;c;"

// Check fails t when out (an output: a screen, a table, a file) holds a
// character a terminal could act on, showing where, or when it does not
// show the hostile text at all (cleaned): a check of an output that left
// the field out proves nothing.
func Check(t testing.TB, what, out string) {
	t.Helper()
	Clean(t, what, out)
	if !strings.Contains(out, Shown) {
		t.Errorf("%s does not show the hostile text (cleaned, %q):\n%s", what, Shown, out)
	}
}

// Clean fails t when out holds a character a terminal could act on.
func Clean(t testing.TB, what, out string) {
	t.Helper()
	if i, desc := Bad(out); i >= 0 {
		from, to := max(i-40, 0), min(i+40, len(out))
		t.Errorf("%s holds %s at byte %d: %q", what, desc, i, out[from:to])
	}
}
