package sender

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	cred "github.com/kvbench/kvbench/internal/secret"
)

// NormalizeURL turns an --engine-url value into the API base the client
// uses: `http://` is added when no scheme is given, trailing slashes are
// dropped and `/v1` is appended unless the path already ends with it.
func NormalizeURL(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", fmt.Errorf("--engine-url: empty URL")
	}
	schemeless := !strings.Contains(s, "://")
	if schemeless {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("--engine-url %q: %v", redactURL(raw), unwrapURLError(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("--engine-url %q: scheme must be http or https", cred.Strip(u.String()))
	}
	if u.Host == "" {
		return "", fmt.Errorf("--engine-url %q: no host", cred.Strip(u.String()))
	}
	if schemeless && !looksLikeAddress(u) {
		// A bare word is far more often a slip (a flag value in the
		// wrong place) than a host on the default port.
		return "", fmt.Errorf("--engine-url %q: not an engine URL; give a scheme and host, e.g. http://%s:8000", redactURL(raw), u.Hostname())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("--engine-url %q: a base URL takes no query or fragment", cred.Strip(u.String()))
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	if !strings.HasSuffix(u.Path, "/v1") {
		u.Path += "/v1"
	}
	return u.String(), nil
}

// unwrapURLError drops url.Error's repetition of the input.
func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// redactURL hides any password in a URL that may not parse.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return cred.Strip(u.String())
	}
	if i := strings.Index(raw, "@"); i >= 0 {
		if j := strings.Index(raw, "://"); j >= 0 && j < i {
			return raw[:j+3] + "xxxxx" + raw[i:]
		}
	}
	return raw
}

// looksLikeAddress reports whether a URL given without a scheme names a
// host plausibly: with a port, localhost, an IP address, or a dotted name,
// each made of host-name characters.
func looksLikeAddress(u *url.URL) bool {
	h := u.Hostname()
	if h == "" {
		return false
	}
	if net.ParseIP(h) != nil {
		return true
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return false
		}
	}
	return u.Port() != "" || strings.EqualFold(h, "localhost") || strings.Contains(h, ".")
}
