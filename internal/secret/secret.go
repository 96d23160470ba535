// Package secret splits credentials off URLs where they enter the
// program, so everything downstream (records, summaries, logs, screens,
// errors) only ever holds the credential-free form.
package secret

import (
	"net/url"
	"strings"
)

// SplitURL returns raw without its user-info ("http://user:pass@host/x"
// -> "http://host/x") and the user-info it held, nil when none. It works
// on text that is not a valid URL too (no scheme, bad escapes): whatever
// stands between the scheme and the last '@' of the authority is dropped.
func SplitURL(raw string) (clean string, user *url.Userinfo) {
	start := 0
	if i := strings.Index(raw, "://"); i >= 0 {
		start = i + 3
	}
	end := len(raw)
	if i := strings.IndexAny(raw[start:], "/?#"); i >= 0 {
		end = start + i
	}
	at := strings.LastIndexByte(raw[start:end], '@')
	if at < 0 {
		return raw, nil
	}
	info := raw[start : start+at]
	clean = raw[:start] + raw[start+at+1:]
	return clean, parseUserinfo(info)
}

// Strip is SplitURL's credential-free form.
func Strip(raw string) string {
	clean, _ := SplitURL(raw)
	return clean
}

// parseUserinfo reads "user[:password]" with percent-escapes; text that
// does not unescape is taken literally.
func parseUserinfo(s string) *url.Userinfo {
	name, pass, hasPass := strings.Cut(s, ":")
	if u, err := url.PathUnescape(name); err == nil {
		name = u
	}
	if !hasPass {
		return url.User(name)
	}
	if p, err := url.PathUnescape(pass); err == nil {
		pass = p
	}
	return url.UserPassword(name, pass)
}
