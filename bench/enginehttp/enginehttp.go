// Package enginehttp is the one place a request to an engine is built
// outside the measured stream: model lists, probes, metrics scrapes,
// cache resets, /tokenize, status pages. It joins the URL, sets the
// credentials (the bearer key from the variable --api-key-env names,
// else a URL's user-info as HTTP Basic), carries the caller's context,
// and reads a bounded answer; its errors name the URL without
// credentials. The measured request path (bench/sender) stays its own,
// allocation-light, and shares only Auth.
package enginehttp

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kvbench/kvbench/internal/errs"
	"github.com/kvbench/kvbench/internal/secret"
)

// Auth is how requests to an engine authenticate: a bearer key first,
// else user-info (from --engine-url's user:pass@) as HTTP Basic.
type Auth struct {
	Key  string
	User *url.Userinfo
}

// Header is the Authorization header's value, "" without credentials.
func (a Auth) Header() string {
	switch {
	case a.Key != "":
		return "Bearer " + a.Key
	case a.User != nil:
		pass, _ := a.User.Password()
		return Basic(a.User.Username(), pass)
	}
	return ""
}

// Set puts the Authorization header on h; nothing without credentials.
func (a Auth) Set(h http.Header) {
	if v := a.Header(); v != "" {
		h.Set("Authorization", v)
	}
}

// Basic is the Authorization header value of HTTP Basic authentication.
func Basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// Join is base and path with one slash between them; a base without a
// scheme is taken as http://.
func Join(base, path string) string {
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	if path == "" {
		return base
	}
	return strings.TrimRight(base, "/") + "/" + strings.TrimLeft(path, "/")
}

// DefaultMax bounds an answer when Request.Max is 0.
const DefaultMax = 16 << 20

// Request is one request to an engine.
type Request struct {
	Method string // GET when empty
	// URL is the whole URL. User-info in it is split off and sent as
	// Basic auth when Auth has no credentials of its own.
	URL    string
	Body   []byte // sent as application/json when not nil
	Accept string // application/json when empty
	Auth   Auth
	// Timeout bounds the request and the read of its answer (none when
	// 0: the caller's context alone).
	Timeout time.Duration
	// Max is the most of the answer read (DefaultMax when 0); a longer
	// answer is an error (ErrTooLarge).
	Max int64
}

// Response is an engine's whole answer, whatever its status.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// ErrTooLarge is an answer longer than Request.Max.
var ErrTooLarge = errors.New("answer too large")

// Error is a request that got no whole answer. Its text is the method,
// the URL without credentials and the root cause, on one line; Unwrap
// gives the transport's error for callers that classify it (timeouts,
// DNS, TLS, refused).
type Error struct {
	Method, URL string
	// Reading is true when the answer began and its body failed.
	Reading bool
	Err     error
}

func (e *Error) Error() string {
	what := errs.Root(e.Err).Error()
	if errors.Is(e.Err, ErrTooLarge) {
		what = e.Err.Error()
	}
	if i := strings.IndexByte(what, '\n'); i >= 0 {
		what = what[:i]
	}
	if e.Reading {
		what = "reading the answer: " + what
	}
	return e.Method + " " + e.URL + ": " + what
}

func (e *Error) Unwrap() error { return e.Err }

// New builds r's *http.Request: URL without user-info, Accept,
// User-Agent, Content-Type for a body, Authorization.
func New(ctx context.Context, r Request) (*http.Request, error) {
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	target, user := secret.SplitURL(r.URL)
	auth := r.Auth
	if auth.Key == "" && auth.User == nil {
		auth.User = user
	}
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, &Error{Method: method, URL: target, Err: err}
	}
	accept := r.Accept
	if accept == "" {
		accept = "application/json"
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", "kvbench")
	if r.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	auth.Set(req.Header)
	return req, nil
}

// Do sends r with client (http.DefaultClient when nil) and reads the
// answer, at most r.Max bytes. Any status is a Response; no answer, a
// failed read or a longer answer is an *Error.
func Do(ctx context.Context, client *http.Client, r Request) (*Response, error) {
	if client == nil {
		client = http.DefaultClient
	}
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	req, err := New(ctx, r)
	if err != nil {
		return nil, err
	}
	fail := func(reading bool, err error) error {
		return &Error{Method: req.Method, URL: req.URL.String(), Reading: reading, Err: err}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fail(false, err)
	}
	defer resp.Body.Close()
	limit := r.Max
	if limit <= 0 {
		limit = DefaultMax
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fail(true, err)
	}
	if int64(len(b)) > limit {
		return nil, fail(true, fmt.Errorf("%w: over %s", ErrTooLarge, size(limit)))
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
