// Package doctor checks, before any GPU hour is spent, what an engine
// reports that a cache benchmark needs: a model list, streams that end
// with [DONE], usage with integer counts, an explicit cached_tokens 0 on a
// cold prompt, cache hits on a repeat, token-id prompts, and Prometheus
// cache counters (spec/cli.md, `kvbench doctor`). It owns the checks and
// their hints; the command only prints the Report.
package doctor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kvbench/kvbench/bench/metrics"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/internal/secret"
	"github.com/kvbench/kvbench/internal/textclean"
)

// Check ids, in report order.
const (
	IDModels       = "models"
	IDStream       = "stream"
	IDUsage        = "usage"
	IDCachedTokens = "cached_tokens"
	IDPrefixCache  = "prefix_cache"
	IDCompletions  = "completions"
	IDReasoning    = "reasoning"
	IDTokenize     = "tokenize"
	IDMetrics      = "metrics"
	IDLMCache      = "lmcache"
)

// IDs are every check, in the order a Report lists them.
var IDs = []string{IDModels, IDStream, IDUsage, IDCachedTokens, IDPrefixCache,
	IDCompletions, IDReasoning, IDTokenize, IDMetrics, IDLMCache}

// Statuses of a check.
const (
	Pass = "pass"
	Warn = "warn"
	Fail = "fail"
	Info = "info"
)

// DefaultTimeout bounds each check when Options.Timeout is 0.
const DefaultTimeout = 15 * time.Second

// Check is one line of the report. Hint says what to change on the
// engine or in the flags; it is empty for a pass.
type Check struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Message string `json:"message"`
	Hint    string `json:"hint"`
}

// Report is the doctor's answer; its JSON is `--format json`.
type Report struct {
	EngineURL string  `json:"engine_url"`
	Model     string  `json:"model"`
	Checks    []Check `json:"checks"`
}

// Failed reports whether any check failed (exit 1).
func (r Report) Failed() bool { return r.Count(Fail) > 0 }

// Count is how many checks have a status.
func (r Report) Count(status string) int {
	n := 0
	for _, c := range r.Checks {
		if c.Status == status {
			n++
		}
	}
	return n
}

// Options say which engine to check and how.
type Options struct {
	EngineURL       string // as given to --engine-url; /v1 is added as for run
	Model           string // empty: the first of /v1/models
	ServedModelName string // the "model" sent, when the engine serves an alias
	APIKey          string // bearer key; never appears in the report
	// UserInfo is sent as Basic authentication when APIKey is empty. A
	// user-info part of EngineURL is split off into it when it is nil;
	// neither ever appears in the report.
	UserInfo   *url.Userinfo
	LMCacheURL string // empty: the lmcache check is skipped (info)
	MetricsURL string // empty: {engine root}/metrics
	Timeout    time.Duration
}

// doctor is one run of the checks.
type doctor struct {
	o      Options
	base   string // normalised engine URL, ends in /v1
	root   string // base without /v1
	hc     *http.Client
	client *sender.Client
	nonce  string

	eng         engine
	lmcacheSeen bool
	model       string
	unreachable string // why the engine cannot be used; "" when it can

	metricsURL  string
	metricsAll  map[string]float64
	metricsErr  error
	metricsAuth bool // the key may be sent to the metrics endpoint
	tokenIDs    []uint32

	checks map[string]Check
}

// Run performs every check. Each one is bounded by o.Timeout; when the
// engine cannot be reached the first check says so, naming the URL, and
// the checks that need the engine fail at once as skipped.
func Run(ctx context.Context, o Options) Report {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	var user *url.Userinfo
	o.EngineURL, user = secret.SplitURL(o.EngineURL)
	if o.UserInfo == nil {
		o.UserInfo = user
	}
	d := &doctor{o: o, checks: map[string]Check{}, nonce: nonce()}
	d.hc = &http.Client{Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     10 * time.Second,
	}}
	defer d.hc.CloseIdleConnections()

	rep := Report{EngineURL: textclean.Line(metrics.Redact(o.EngineURL))}
	base, err := sender.NormalizeURL(o.EngineURL)
	if err != nil {
		d.unreachable = "no valid --engine-url"
		d.set(IDModels, Fail, err.Error(), "pass the engine's base URL, e.g. --engine-url http://localhost:8000")
	} else {
		d.base = base
		d.root = strings.TrimSuffix(base, "/v1")
		rep.EngineURL = textclean.Line(metrics.Redact(base))
		d.models(ctx)
	}
	d.model = firstNonEmpty(d.model, o.Model)
	// The report is where the engine's answers (model ids, error bodies,
	// headers) become text to show: it is cleaned here, while the
	// requests go on sending the id exactly as the engine listed it.
	rep.Model = textclean.Line(d.model)

	d.scrapeMetrics(ctx)
	if d.unreachable == "" {
		if d.eng == engineUnknown {
			d.probeOllama(ctx)
		}
		d.client = sender.New(sender.Options{
			BaseURL:        d.base,
			Model:          firstNonEmpty(o.ServedModelName, d.model),
			APIKey:         o.APIKey,
			UserInfo:       o.UserInfo,
			RequestTimeout: o.Timeout,
			IdleTimeout:    o.Timeout,
		})
		defer d.client.Close()
		d.generate(ctx)
		d.tokenize(ctx)
		d.completions(ctx)
	} else {
		for _, id := range []string{IDStream, IDUsage, IDCachedTokens, IDPrefixCache, IDCompletions, IDReasoning, IDTokenize} {
			d.set(id, Fail, "skipped: engine unreachable", "see the models check")
		}
	}
	d.metricsCheck()
	d.lmcache(ctx)

	if c, ok := d.checks[IDModels]; ok && c.Status != Fail && d.eng != engineUnknown {
		c.Message += "; the engine looks like " + d.eng.String()
		if d.lmcacheSeen {
			c.Message += " with LMCache"
		}
		d.checks[IDModels] = c
	}
	for _, id := range IDs {
		c := d.checks[id]
		c.ID = id
		c.Message, c.Hint = textclean.Line(d.scrub(c.Message)), textclean.Line(d.scrub(c.Hint))
		rep.Checks = append(rep.Checks, c)
	}
	return rep
}

func (d *doctor) set(id, status, msg, hint string) {
	if status == Pass {
		hint = ""
	}
	d.checks[id] = Check{ID: id, Status: status, Message: msg, Hint: hint}
}

// scrub keeps the API key and the URL's password out of every line,
// whatever an engine echoed.
func (d *doctor) scrub(s string) string {
	if k := d.o.APIKey; k != "" {
		s = strings.ReplaceAll(s, k, "[redacted]")
	}
	if d.o.UserInfo != nil {
		if p, ok := d.o.UserInfo.Password(); ok && p != "" {
			s = strings.ReplaceAll(s, p, "[redacted]")
		}
	}
	return s
}

// nonce makes the doctor's prompt unique, so even a warm engine owes it
// an explicit 0 cached tokens.
func nonce() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
