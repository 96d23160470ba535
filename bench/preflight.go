package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/kvbench/kvbench/bench/enginehttp"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/internal/errs"
	"github.com/kvbench/kvbench/internal/secret"
)

// PreflightTimeout bounds the preflight's GET /v1/models (spec/cli.md).
const PreflightTimeout = 10 * time.Second

// EngineError says the engine cannot be used before anything was sent:
// a failed preflight, or a cache reset nothing answered (exit code 3).
type EngineError struct{ Err error }

func (e *EngineError) Error() string { return e.Err.Error() }
func (e *EngineError) Unwrap() error { return e.Err }
func (e *EngineError) ExitCode() int { return errs.ExitEngine }

// IsEngineUnavailable reports whether err is an *EngineError.
func IsEngineUnavailable(err error) bool {
	var e *EngineError
	return errors.As(err, &e)
}

// Causes of a failed preflight (PreflightError.Cause).
const (
	CauseRefused   = "refused"
	CauseDNS       = "dns"
	CauseTLS       = "tls"
	CauseTimeout   = "timeout"
	CauseAuth      = "auth"
	CauseHTTP      = "http"
	CauseNotModels = "not_a_model_list"
	CauseNoModels  = "no_models"
	CauseNotListed = "model_not_listed"
	CauseConnect   = "connect"
)

// PreflightError is one failed preflight: the URL asked, the cause, and a
// one-line message naming both and what to check.
type PreflightError struct {
	URL   string // GET URL, credentials stripped
	Cause string
	Msg   string   // what happened and what to check
	IDs   []string // the served ids, for CauseNotListed
}

func (e *PreflightError) Error() string { return "preflight: GET " + e.URL + ": " + e.Msg }

// PreflightOptions say which engine to check.
type PreflightOptions struct {
	BaseURL  string // normalised API base, ends in /v1
	Model    string // the model a run sends; "" takes the first listed
	APIKey   string
	UserInfo *url.Userinfo // Basic auth when APIKey is empty
	Timeout  time.Duration // PreflightTimeout when 0
	// Transport replaces the default (tests); nil dials afresh.
	Transport http.RoundTripper
}

// ModelList is what GET /v1/models answered.
type ModelList struct {
	IDs     []string
	OwnedBy []string // owned_by of each entry of data, in order
	Server  string   // the Server response header
	// OllamaList is true when the answer also carries an ollama-style
	// `models` array (llama.cpp's server adds one).
	OllamaList bool
	// Model is the model a run would use: Options.Model, else IDs[0].
	Model string
}

// Preflight asks GET {base}/models and checks that the model to be used
// is listed. Nothing else is sent. The error is a *PreflightError inside
// an *EngineError: one line naming the URL and the cause (refused, DNS,
// TLS, timeout, 401/403, not a model list, or the ids served). Run,
// doctor and the form's summary share it.
func Preflight(ctx context.Context, o PreflightOptions) (*ModelList, error) {
	if o.Timeout <= 0 {
		o.Timeout = PreflightTimeout
	}
	target := strings.TrimRight(o.BaseURL, "/") + "/models"
	shown := secret.Strip(target)
	fail := func(cause, msg string, ids []string) error {
		return &EngineError{Err: &PreflightError{URL: shown, Cause: cause, Msg: msg, IDs: ids}}
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	rt := o.Transport
	if rt == nil {
		d := &net.Dialer{Timeout: o.Timeout}
		rt = &http.Transport{Proxy: http.ProxyFromEnvironment, DialContext: d.DialContext,
			TLSHandshakeTimeout: o.Timeout, DisableKeepAlives: true}
	}
	resp, err := enginehttp.Do(ctx, &http.Client{Transport: rt}, enginehttp.Request{URL: target,
		Auth: enginehttp.Auth{Key: o.APIKey, User: o.UserInfo}})
	var he *enginehttp.Error
	switch {
	case errors.Is(err, enginehttp.ErrTooLarge):
		return nil, fail(CauseNotModels, "the answer is over 16 MiB: not an OpenAI model list", nil)
	case errors.As(err, &he):
		u, perr := url.Parse(shown)
		if perr != nil {
			return nil, fail(CauseConnect, errs.Root(perr).Error(), nil)
		}
		cause, msg := classifyDial(ctx, he.Err, u, o.Timeout)
		if he.Reading {
			msg = "reading the answer: " + msg
		}
		return nil, fail(cause, redactKey(msg, o.APIKey), nil)
	case err != nil:
		return nil, fail(CauseConnect, errs.Root(err).Error(), nil)
	}
	body := resp.Body
	if resp.Status == http.StatusUnauthorized || resp.Status == http.StatusForbidden {
		hint := "the engine wants a key: pass --api-key-env NAME (the environment variable holding it)"
		if o.APIKey != "" || o.UserInfo != nil {
			hint = "the engine refused the credentials: check the variable named by --api-key-env"
		}
		return nil, fail(CauseAuth, fmt.Sprintf("HTTP %d: %s", resp.Status, hint), nil)
	}
	if resp.Status >= 400 {
		return nil, fail(CauseHTTP, fmt.Sprintf("HTTP %d: check that --engine-url is the engine's OpenAI API root (kvbench adds /v1)", resp.Status), nil)
	}
	var doc struct {
		Data []struct {
			ID      string `json:"id"`
			OwnedBy string `json:"owned_by"`
		} `json:"data"`
		Models json.RawMessage `json:"models"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fail(CauseNotModels, "not an OpenAI model list: check that --engine-url is the engine's OpenAI API root (kvbench adds /v1)", nil)
	}
	// Text from the engine is cleaned where it enters: ids and owners may
	// carry terminal escapes or the echoed key.
	ml := &ModelList{Server: sender.CleanModelID(resp.Header.Get("Server"), o.APIKey, o.UserInfo), OllamaList: len(doc.Models) > 0 && doc.Models[0] == '['}
	for _, m := range doc.Data {
		if id := sender.CleanModelID(m.ID, o.APIKey, o.UserInfo); id != "" {
			ml.IDs = append(ml.IDs, id)
			ml.OwnedBy = append(ml.OwnedBy, sender.CleanModelID(m.OwnedBy, o.APIKey, o.UserInfo))
		}
	}
	switch {
	case len(ml.IDs) == 0:
		return ml, fail(CauseNoModels, "the engine lists no model", nil)
	case o.Model == "":
		ml.Model = ml.IDs[0]
	default:
		ml.Model = o.Model
		if !contains(ml.IDs, o.Model) {
			return ml, fail(CauseNotListed, NotListed(o.Model, ml.IDs), ml.IDs)
		}
	}
	return ml, nil
}

// NotListed says that model is not among the served ids, naming them.
func NotListed(model string, ids []string) string {
	const show = 8
	q := make([]string, 0, min(len(ids), show))
	for i, id := range ids {
		if i == show {
			break
		}
		q = append(q, fmt.Sprintf("%q", id))
	}
	list := strings.Join(q, ", ")
	if len(ids) > show {
		list += fmt.Sprintf(" and %d more", len(ids)-show)
	}
	return fmt.Sprintf("model %q is not served; the engine serves %s: pass one of them as --model (or --served-model-name for an alias)", model, list)
}

// classifyDial names why a request got no answer.
func classifyDial(ctx context.Context, err error, u *url.URL, timeout time.Duration) (cause, msg string) {
	host := u.Host
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var recErr tls.RecordHeaderError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || isTimeout(err):
		return CauseTimeout, fmt.Sprintf("no answer within %s: is the engine at %s up and reachable (firewall, port)?", timeout, host)
	case errors.As(err, &dnsErr):
		return CauseDNS, fmt.Sprintf("cannot resolve host %q (DNS): check the host name in --engine-url", u.Hostname())
	case errors.Is(err, syscall.ECONNREFUSED):
		return CauseRefused, fmt.Sprintf("connection refused: is the engine running and listening on %s?", host)
	case errors.As(err, &recErr), strings.Contains(err.Error(), "HTTP response to HTTPS client"):
		return CauseTLS, "TLS handshake failed: the engine does not speak TLS here; use http:// in --engine-url"
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr), errors.As(err, &invalid),
		strings.Contains(err.Error(), "tls: "):
		return CauseTLS, fmt.Sprintf("TLS error (%s): check the engine's certificate, or use http:// for a plain-HTTP engine", oneLineErr(errs.Root(err)))
	}
	return CauseConnect, oneLineErr(errs.Root(err))
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func oneLineErr(err error) string {
	s := strings.TrimSpace(err.Error())
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func redactKey(s, key string) string {
	if key != "" {
		s = strings.ReplaceAll(s, key, "[redacted]")
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
