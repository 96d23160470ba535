package sender

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kvbench/kvbench/internal/textclean"
)

// redactor turns text from outside (an engine's error body, an error
// event, a malformed chunk, a status line, a transport error) into the
// one-line error detail of the record. Engines echo what they were sent,
// the Authorization header included, so every detail passes through it:
// stream.fail applies it to every error, whatever its path.
//
// A nil redactor knows no secret (Measure) and only cleans.
type redactor struct {
	// secrets are the texts that never leave the client: the API key, the
	// URL's password and the credential of the Authorization header as
	// sent (Basic's base64), longest first.
	secrets []string
}

const redacted = "[redacted]"

func newRedactor(apiKey string, user *url.Userinfo) *redactor {
	r := &redactor{}
	add := func(s string) {
		if s != "" && !slices.Contains(r.secrets, s) {
			r.secrets = append(r.secrets, s)
		}
	}
	add(apiKey)
	if user != nil {
		if p, ok := user.Password(); ok {
			add(p)
			add(base64.StdEncoding.EncodeToString([]byte(user.Username() + ":" + p)))
		}
	}
	// Longest first: a secret containing another is replaced whole.
	slices.SortStableFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
	return r
}

// redact replaces every secret in s.
func (r *redactor) redact(s string) string {
	if r == nil {
		return s
	}
	for _, k := range r.secrets {
		if strings.Contains(s, k) {
			s = strings.ReplaceAll(s, k, redacted)
		}
	}
	return s
}

// detail is s as an error detail: secrets replaced, cleaned with
// textclean.Line (no terminal control survives), whitespace runs
// collapsed to one space, secrets replaced again (collapsing could join
// one), and truncated to maxDetailLen bytes on a rune boundary. Every
// step before the truncation sees the whole text, so a truncation never
// leaves the start of a secret behind.
func (r *redactor) detail(s string) string {
	s = r.redact(s)
	s = textclean.Line(collapse(s))
	s = r.redact(s)
	return truncate(s, maxDetailLen)
}

// window is b cut to at most n bytes for a detail, without leaving at its
// end the start of a secret that the cut split: what a secret begins
// with is dropped from the end of the window.
func (r *redactor) window(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	b = b[:n]
	if r == nil {
		return b
	}
	for _, k := range r.secrets {
		for i := min(len(k)-1, len(b)); i > 0; i-- {
			if bytes.HasSuffix(b, []byte(k[:i])) {
				b = b[:len(b)-i]
				break
			}
		}
	}
	return b
}

// readWindow reads at most n bytes of body for a detail (window's rule
// at the cut).
func (r *redactor) readWindow(body io.Reader, n int) []byte {
	raw, _ := io.ReadAll(io.LimitReader(body, int64(n)+1))
	return r.window(raw, n)
}

// collapse turns every run of ASCII whitespace (newlines, CR, tab, form
// feed, vertical tab) into one space and trims both ends.
func collapse(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; isSpace(c) && (c != ' ' || i == 0 || i == len(s)-1 || s[i+1] == ' ') {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isSpace(c) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f'
}

// truncate cuts s to at most max bytes on a rune boundary, marking the
// cut with "...".
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}
