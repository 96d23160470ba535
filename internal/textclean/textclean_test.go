package textclean

import (
	"strings"
	"testing"
)

func TestClean(t *testing.T) {
	for _, tc := range []struct{ in, want, line string }{
		{"plain model-7b", "plain model-7b", "plain model-7b"},
		{"tab\tand\nnewline", "tab\tand\nnewline", "tab and newline"},
		{"clip\x1b]52;c;aGk=\x07x", "clip\uFFFD]52;c;aGk=\uFFFDx", "clip\uFFFD]52;c;aGk=\uFFFDx"},
		{"title\x1b]0;pwned\x1b\\", "title\uFFFD]0;pwned\uFFFD\\", "title\uFFFD]0;pwned\uFFFD\\"},
		{"\x1b[2Jclear", "\uFFFD[2Jclear", "\uFFFD[2Jclear"},
		{"c1 \xc2\x9b31m red", "c1 \uFFFD31m red", "c1 \uFFFD31m red"},
		{"raw \x9b31m", "raw \uFFFD31m", "raw \uFFFD31m"},
		{"del\x7f cr\r", "del\uFFFD cr\uFFFD", "del\uFFFD cr\uFFFD"},
		{"ünïcødé 日本 \u00a0ok", "ünïcødé 日本 \u00a0ok", "ünïcødé 日本 \u00a0ok"},
	} {
		if got := Clean(tc.in); got != tc.want {
			t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := Line(tc.in); got != tc.line {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.line)
		}
		if IsClean(tc.in) != (tc.in == tc.want) {
			t.Errorf("IsClean(%q) = %v", tc.in, IsClean(tc.in))
		}
	}
}

// Nothing Clean returns holds a byte a terminal would act on.
func FuzzClean(f *testing.F) {
	f.Add("\x1b]52;c;x\x07\xc2\x9b\x9b\x00ok")
	f.Fuzz(func(t *testing.T, s string) {
		out := Clean(s)
		for _, r := range out {
			if r < 0x20 && r != '\t' && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f {
				t.Fatalf("Clean(%q) kept %U", s, r)
			}
		}
		if strings.ContainsRune(Line(s), '\n') {
			t.Fatalf("Line(%q) kept a newline", s)
		}
		if Clean(out) != out {
			t.Fatalf("Clean is not idempotent on %q", s)
		}
	})
}

func BenchmarkCleanPlain(b *testing.B) {
	s := strings.Repeat("model-id ", 8)
	b.ReportAllocs()
	for b.Loop() {
		_ = Clean(s)
	}
}
