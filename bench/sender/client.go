package sender

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kvbench/kvbench/bench/enginehttp"
	"github.com/kvbench/kvbench/internal/textclean"
)

// Defaults of Options.
const (
	DefaultRequestTimeout = 10 * time.Minute
	DefaultIdleTimeout    = 60 * time.Second
	modelsTimeout         = 30 * time.Second
	// After [DONE] the rest of the body (normally just the end of the
	// chunked encoding) is read for at most this long, so the connection
	// can be reused.
	drainTimeout = 500 * time.Millisecond
	maxDrain     = 1 << 20
)

// Options configure a Client.
type Options struct {
	BaseURL  string   // already normalised (NormalizeURL), ends in /v1
	Model    string   // the "model" field sent (served-model-name else model)
	Endpoint Endpoint // for requests that leave it empty (Chat if empty)
	// APIKey is sent as `Authorization: Bearer KEY` when not empty. It
	// never appears in any error, log or Result.
	APIKey string
	// UserInfo is the user-info given with the engine URL; it is sent as
	// HTTP Basic authentication when APIKey is empty. BaseURL itself never
	// holds credentials.
	UserInfo *url.Userinfo
	// ExtraBody is merged into every body; a request's own ExtraBody is
	// merged after it. Merging is per top-level key: a key also set by
	// kvbench (e.g. max_tokens) takes the extra value.
	ExtraBody map[string]any
	IgnoreEOS bool // send "ignore_eos": true
	// RequestTimeout bounds the whole request (default 10m, < 0: none).
	RequestTimeout time.Duration
	// IdleTimeout is the longest gap between two reads of the stream once
	// the response headers have arrived (default 60s, < 0: none); beyond
	// it the request fails as idle_timeout.
	IdleTimeout time.Duration
	// MaxLineBytes is the SSE line limit (default 16 MiB); longer lines
	// fail the request as line_too_long.
	MaxLineBytes int
	// MaxResponseBytes bounds one response body (default 256 MiB); a
	// stream that grows past it (an engine that never sends [DONE]) ends
	// as response_too_long.
	MaxResponseBytes int64
	// Transport replaces the shared HTTP transport (tests).
	Transport http.RoundTripper
}

// Client sends streaming requests to one engine and measures them. It is
// safe for concurrent use by thousands of goroutines.
type Client struct {
	opts      Options
	hc        *http.Client
	own       *http.Transport
	fresh     *http.Client    // one connection per request: retries
	freshT    *http.Transport // fresh's transport, when it has its own
	chatURL   string
	complURL  string
	modelsURL string
	extra     []field
	extraErr  error
	auth      []string // the Authorization header value, nil without a key
	red       *redactor
}

// Header values shared by every request (net/http only reads them).
var (
	headerJSON  = []string{"application/json"}
	headerSSE   = []string{"text/event-stream"}
	headerAgent = []string{"kvbench"}
)

// New returns a client for opts.BaseURL.
func New(opts Options) *Client {
	if opts.Endpoint == "" {
		opts.Endpoint = Chat
	}
	if opts.RequestTimeout == 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxLineBytes
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = DefaultMaxResponseBytes
	}
	base := strings.TrimRight(opts.BaseURL, "/")
	c := &Client{
		opts:      opts,
		chatURL:   base + "/chat/completions",
		complURL:  base + "/completions",
		modelsURL: base + "/models",
		red:       newRedactor(opts.APIKey, opts.UserInfo),
	}
	if h := (enginehttp.Auth{Key: opts.APIKey, User: opts.UserInfo}).Header(); h != "" {
		c.auth = []string{h}
	}
	c.extra, c.extraErr = encodeExtra(opts.ExtraBody)
	rt := opts.Transport
	if rt == nil {
		c.own = newTransport()
		rt = c.own
	}
	c.hc = &http.Client{Transport: rt}
	// Retries go out on connections of their own, never reused.
	c.fresh = c.hc
	if t, ok := rt.(*http.Transport); ok {
		ft := t.Clone()
		ft.DisableKeepAlives = true
		c.freshT = ft
		c.fresh = &http.Client{Transport: ft}
	}
	return c
}

// newTransport is sized for thousands of concurrent streams to one host:
// no per-host connection cap, every connection kept for reuse, dials in
// parallel, HTTP/1.1 only, no gzip (it would delay chunks). A
// connection's write buffer only carries the request line, the headers and
// the start of the body (net/http copies the rest of a longer body to the
// socket past it), so 1 KiB rather than 4 costs at most one more write per
// request, never per chunk, and saves 3 MB at 1000 connections.
func newTransport() *http.Transport {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	protos := new(http.Protocols)
	protos.SetHTTP1(true)
	return &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         d.DialContext,
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: 1 << 16,
		MaxConnsPerHost:     0,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 30 * time.Second,
		DisableCompression:  true,
		Protocols:           protos,
		WriteBufferSize:     1 << 10,
	}
}

// Close releases idle connections.
func (c *Client) Close() {
	if c.own != nil {
		c.own.CloseIdleConnections()
	} else {
		c.hc.CloseIdleConnections()
	}
	if c.freshT != nil {
		c.freshT.CloseIdleConnections()
	}
}

var (
	errRequestTimeout = errors.New("request timeout")
	errIdleTimeout    = errors.New("idle timeout")
	errDrained        = errors.New("drained")
)

// Do sends req, reads its stream to the end and returns what was measured.
// It never panics: every failure is in Result.Error and ErrorDetail.
func (c *Client) Do(ctx context.Context, req *Request) (res Result) {
	if req == nil {
		req = &Request{}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	defer func() {
		if p := recover(); p != nil {
			now := time.Now()
			c.failed(&res, req, now, now, 0, ErrInternal, fmt.Sprint("panic: ", p), "")
		}
	}()
	c.do(ctx, req, &res)
	return res
}

// do is Do filling res in place: the request goroutine's stack holds one
// Result, not one per return path (thousands of goroutines, each stack
// sized by its deepest call).
func (c *Client) do(ctx context.Context, req *Request, res *Result) {

	ep := req.Endpoint
	if ep == "" {
		ep = c.opts.Endpoint
	}
	var target string
	switch ep {
	case Chat:
		target = c.chatURL
	case Completions:
		target = c.complURL
	default:
		now := time.Now()
		c.failed(res, req, now, now, 0, ErrInvalidRequest, fmt.Sprintf("unknown endpoint %q", ep), "")
		return
	}
	extra := c.extra
	err := c.extraErr
	if err == nil && len(req.ExtraBody) > 0 {
		var own []field
		if own, err = encodeExtra(req.ExtraBody); err == nil {
			extra = mergeExtra(extra, own)
		}
	}
	bb := getBodyBuf()
	// Do's hold on the body ends once the transport has returned the
	// response (retries and redirects happen inside hc.Do); the reader
	// the transport writes from keeps its own hold until it is closed, so
	// thousands of streams in flight hold no request body.
	held := true
	defer func() {
		if held {
			bb.release()
		}
	}()
	if err == nil {
		bb.b, err = c.appendBody(bb.b, req, ep, extra)
	}
	if err != nil {
		now := time.Now()
		c.failed(res, req, now, now, 0, ErrInvalidRequest, err.Error(), "")
		return
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if d := c.opts.RequestTimeout; d > 0 {
		t := time.AfterFunc(d, func() { cancel(errRequestTimeout) })
		defer t.Stop()
	}
	ct := getConnTrace()
	defer putConnTrace(ct)
	hreq, err := c.newPost(httptrace.WithClientTrace(ctx, &ct.trace), target, bb)
	if err != nil {
		now := time.Now()
		c.failed(res, req, now, now, 0, ErrInvalidRequest, err.Error(), "")
		return
	}

	submit := time.Now()
	resp, err := c.hc.Do(hreq)
	retries := 0
	if err != nil && ct.reused.Load() && !ct.responded.Load() && context.Cause(ctx) == nil && staleConn(err) {
		// The engine closed a kept-alive connection under the request
		// before answering: send it once more, on a fresh connection.
		// TTFT and latency still count from the first submit.
		retries = 1
		if hreq, err = c.newPost(ctx, target, bb); err == nil {
			resp, err = c.fresh.Do(hreq)
		}
	}
	// Every path below overwrites *res; the retry count goes on last.
	defer func() { res.Retries = retries }()
	held = false
	bb.release()
	if err != nil {
		now := time.Now()
		code, detail := c.classify(ctx, err)
		if code == "" {
			code, detail = ErrConnect, "POST "+redactURL(target)+": "+unwrapURLError(err).Error()
		}
		c.failed(res, req, submit, now, 0, code, detail, "")
		return
	}
	defer resp.Body.Close()

	if resp.StatusCode >= 400 {
		raw := c.red.readWindow(resp.Body, maxDetailScanLen)
		now := time.Now()
		detail := errorDetail(raw, "HTTP "+resp.Status)
		c.failed(res, req, submit, now, resp.StatusCode, fmt.Sprintf("http_%d", resp.StatusCode), detail, c.authHint(resp.StatusCode))
		return
	}

	s := getStream(submit, time.Now, c.opts.MaxLineBytes, req.KeepText)
	defer putStream(s)
	s.maxResp, s.red = c.opts.MaxResponseBytes, c.red
	s.reserve(req.MaxTokens)
	var wd *watchdog
	if d := c.opts.IdleTimeout; d > 0 {
		wd = startWatchdog(submit, d, cancel)
		s.lastRead = &wd.last
	}
	readErr := s.consume(resp.Body)
	if wd != nil {
		wd.stopWatch()
	}
	if readErr != nil {
		now := time.Now()
		code, detail := c.classify(ctx, readErr)
		if code == "" {
			code, detail = ErrIncomplete, "read: "+readErr.Error()
		}
		s.fail(code, detail, now)
	}
	if ct := resp.Header.Get("Content-Type"); s.errCode == ErrIncomplete && !isEventStream(ct) {
		if ct == "" {
			ct = "no Content-Type"
		}
		s.errDetail = s.red.detail(s.errDetail + "; the response is " + ct + ", not text/event-stream")
	}
	if s.complete {
		// Let the transport reuse the connection: read the end of the
		// chunked body, briefly.
		t := time.AfterFunc(drainTimeout, func() { cancel(errDrained) })
		io.CopyN(io.Discard, resp.Body, maxDrain)
		t.Stop()
	}
	s.fill(res, req, resp.StatusCode)
}

// smallBody is the largest body sent from a copy of its own rather than
// from the pooled buffer.
const smallBody = 4 << 10

// newPost builds the POST of the body in bb; the transport's reader holds
// its own reference to bb until it closes it. A small body goes out as a
// *bytes.Reader over a copy instead: net/http writes the headers and such
// a body in one write, where it flushes the headers in a write of their
// own before any body it does not know to be in memory (a tiny request
// then costs two writes and, often, two reads at the engine).
func (c *Client) newPost(ctx context.Context, target string, bb *bodyBuf) (*http.Request, error) {
	var hreq *http.Request
	var err error
	if len(bb.b) <= smallBody {
		if hreq, err = http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(bytes.Clone(bb.b))); err != nil {
			return nil, err
		}
	} else {
		body := bb.reader()
		if hreq, err = http.NewRequestWithContext(ctx, http.MethodPost, target, body); err != nil {
			body.Close()
			return nil, err
		}
		hreq.ContentLength = int64(len(bb.b))
		hreq.GetBody = func() (io.ReadCloser, error) { return bb.reader(), nil }
	}
	hreq.Header["Content-Type"] = headerJSON
	hreq.Header["Accept"] = headerSSE
	hreq.Header["User-Agent"] = headerAgent
	if c.auth != nil {
		hreq.Header["Authorization"] = c.auth
	}
	return hreq, nil
}

// staleConn reports whether err is how a connection the server had
// already closed fails a request: the write fails, or the read meets EOF
// or a reset before the status line. Timeouts and anything else are not.
func staleConn(err error) bool {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, net.ErrClosed):
		return true
	}
	// net/http's errServerClosedIdle is not exported.
	return strings.Contains(err.Error(), "server closed idle connection")
}

// connTrace records, through httptrace, whether a request went out on a
// reused connection and whether any response byte came back. Pooled with
// its hooks bound once, so tracing costs no allocation per request beyond
// the context value.
type connTrace struct {
	trace     httptrace.ClientTrace
	reused    atomic.Bool
	responded atomic.Bool
}

var connTracePool = sync.Pool{New: func() any {
	ct := new(connTrace)
	ct.trace.GotConn = func(info httptrace.GotConnInfo) { ct.reused.Store(info.Reused) }
	ct.trace.GotFirstResponseByte = func() { ct.responded.Store(true) }
	return ct
}}

func getConnTrace() *connTrace {
	ct := connTracePool.Get().(*connTrace)
	ct.reused.Store(false)
	ct.responded.Store(false)
	return ct
}

func putConnTrace(ct *connTrace) { connTracePool.Put(ct) }

// classify names an error caused by a timeout or by the caller's context.
func (c *Client) classify(ctx context.Context, err error) (code, detail string) {
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, errIdleTimeout):
		return ErrIdleTimeout, "no data for " + c.opts.IdleTimeout.String()
	case errors.Is(cause, errRequestTimeout):
		return ErrTimeout, "request took longer than " + c.opts.RequestTimeout.String()
	case errors.Is(cause, context.DeadlineExceeded):
		return ErrTimeout, "the caller's deadline passed"
	case errors.Is(cause, context.Canceled):
		return ErrCanceled, "canceled by the caller"
	case cause != nil:
		return ErrCanceled, "canceled: " + cause.Error()
	}
	return "", ""
}

func (c *Client) authHint(status int) string {
	if status != http.StatusUnauthorized && status != http.StatusForbidden {
		return ""
	}
	if c.opts.APIKey == "" {
		return "; the engine wants a key: pass --api-key-env NAME (the environment variable holding it)"
	}
	return "; the engine refused the key: check the variable named by --api-key-env NAME"
}

func isEventStream(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "text/event-stream"
}

// failed fills res for a request that produced no stream. The detail
// goes through the redactor (stream.fail); hint, kvbench's own advice, is
// appended after it.
func (c *Client) failed(res *Result, req *Request, submit, finish time.Time, status int, code, detail, hint string) {
	s := getStream(submit, nil, 0, false)
	defer putStream(s)
	s.red = c.red
	s.fail(code, detail, finish)
	s.errDetail += hint
	s.fill(res, req, status)
}

// watchdog fails a stream whose reads stop for longer than idle. Reads
// only store a timestamp; the timer wakes once per idle period and re-arms
// itself for the remaining time, so nothing is reset per chunk.
type watchdog struct {
	base    time.Time
	idle    time.Duration
	last    atomic.Int64 // nanoseconds since base of the latest read
	stopped atomic.Bool
	timer   atomic.Pointer[time.Timer]
	cancel  context.CancelCauseFunc
}

func startWatchdog(base time.Time, idle time.Duration, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{base: base, idle: idle, cancel: cancel}
	w.last.Store(int64(time.Since(base)))
	t := time.AfterFunc(time.Duration(1<<62), w.fire)
	w.timer.Store(t)
	t.Reset(idle)
	return w
}

func (w *watchdog) fire() {
	if w.stopped.Load() {
		return
	}
	gap := time.Since(w.base) - time.Duration(w.last.Load())
	if gap >= w.idle {
		w.cancel(errIdleTimeout)
		return
	}
	w.timer.Load().Reset(w.idle - gap)
}

func (w *watchdog) stopWatch() {
	w.stopped.Store(true)
	w.timer.Load().Stop()
}

// Prewarm opens up to n connections to the engine before the run needs
// them, so a burst of n streams does not dial, and grow n connection
// goroutines, inside the requests it measures: n concurrent GET
// {base}/models each keep their response open until all have one, then
// leave their connections idle for the requests. It returns how many
// connections it opened; failures only leave fewer (the requests dial
// their own). A connection the engine closes meanwhile is retried once
// by the request that finds it closed (spec/record.md, Connections).
func (c *Client) Prewarm(ctx context.Context, n int) int {
	if n <= 1 {
		return 0
	}
	ctx, cancel := context.WithTimeout(ctx, prewarmTimeout)
	defer cancel()
	var (
		wg     sync.WaitGroup
		opened atomic.Int64
	)
	all := make(chan struct{})
	var arrived sync.WaitGroup
	arrived.Add(n)
	for range n {
		wg.Go(func() {
			once := sync.OnceFunc(arrived.Done)
			defer once()
			hreq, err := c.newModelsGet(ctx)
			if err != nil {
				return
			}
			resp, err := c.hc.Do(hreq)
			if err != nil {
				return
			}
			opened.Add(1)
			// Hold the connection until every request has one of its own.
			once()
			select {
			case <-all:
			case <-ctx.Done():
			}
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
		})
	}
	go func() { arrived.Wait(); close(all) }()
	wg.Wait()
	return int(opened.Load())
}

// newModelsGet is GET {base}/models with the client's headers and key.
func (c *Client) newModelsGet(ctx context.Context) (*http.Request, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, c.modelsURL, nil)
	if err != nil {
		return nil, err
	}
	hreq.Header["Accept"] = headerJSON
	hreq.Header["User-Agent"] = headerAgent
	if c.auth != nil {
		hreq.Header["Authorization"] = c.auth
	}
	return hreq, nil
}

// maxModelID: a model id is a name or a path; longer text is not one.
const maxModelID = 1 << 10

// modelID is an id of GET /models as the rest of kvbench sees it: one
// clean line (textclean.Line) with no secret in it, or "" (left out of
// the list) when empty or longer than maxModelID.
func (c *Client) modelID(id string) string { return c.red.modelID(id) }

func (r *redactor) modelID(id string) string {
	if len(id) > maxModelID {
		return ""
	}
	return textclean.Line(r.redact(id))
}

// CleanModelID is what Client.Models does to each id an engine lists, for
// other readers of GET /models (the preflight): the API key and the URL's
// credentials replaced, cleaned to one line, "" when over 1 KiB. Engines
// may echo the request's Authorization header and lace ids with terminal
// escapes; an id is written to config.json and shown on screens.
func CleanModelID(id, apiKey string, user *url.Userinfo) string {
	return newRedactor(apiKey, user).modelID(id)
}

// prewarmTimeout bounds Prewarm.
const prewarmTimeout = 10 * time.Second

// Models lists the engine's model ids (GET {base}/models), in order. It
// gives up after 30s unless ctx ends sooner; errors name the URL, never
// the key, and an empty list is an error.
func (c *Client) Models(ctx context.Context) ([]string, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, modelsTimeout)
	defer cancel()
	where := "GET " + redactURL(c.modelsURL)
	hreq, err := c.newModelsGet(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", where, c.red.detail(unwrapURLError(err).Error()))
	}
	resp, err := c.hc.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", where, c.red.detail(unwrapURLError(err).Error()))
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		raw := c.red.readWindow(resp.Body, maxDetailScanLen)
		detail := "HTTP " + resp.Status
		if len(bytes.TrimSpace(raw)) > 0 {
			detail += ": " + errorDetail(raw, "")
		}
		return nil, fmt.Errorf("%s: %s%s", where, c.red.detail(detail), c.authHint(resp.StatusCode))
	}
	var doc struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: not an OpenAI model list: %s", where, c.red.detail(err.Error()))
	}
	ids := make([]string, 0, len(doc.Data))
	for _, m := range doc.Data {
		if id := c.modelID(m.ID); id != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%s: the engine lists no models", where)
	}
	return ids, nil
}
