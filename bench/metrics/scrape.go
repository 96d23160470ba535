// Package metrics reads an engine's Prometheus endpoint: it parses the
// text exposition format with the Prometheus project's own parser, knows
// the cache counters of vLLM, SGLang, llama.cpp and LMCache, and samples
// them during a run (metrics.jsonl and the summary's server_metrics,
// spec/record.md). It is the run's second, independent witness of what
// the cache did, beside the receipts the sender reads from each reply.
package metrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kvbench/kvbench/bench/enginehttp"
	"github.com/kvbench/kvbench/internal/errs"
	"github.com/kvbench/kvbench/internal/secret"
)

// maxBody bounds what one scrape reads: an engine's exposition is a few
// hundred kilobytes at most, and a runaway endpoint must not eat memory.
const maxBody = 32 << 20

// acceptHeader asks for the classic text format (0.0.4), which every
// engine's client library serves and expfmt's TextParser reads.
const acceptHeader = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// Scrape fetches url and returns every series it exposes, summed per name
// across labels (see Parse). A nil client means http.DefaultClient; the
// caller bounds the time with ctx.
func Scrape(ctx context.Context, client *http.Client, url string) (map[string]float64, error) {
	return ScrapeAuth(ctx, client, url, "")
}

// ScrapeAuth is Scrape with a bearer key (llama.cpp's --api-key also
// guards /metrics). Pass a key only to the engine's own host.
func ScrapeAuth(ctx context.Context, client *http.Client, url, apiKey string) (map[string]float64, error) {
	resp, err := enginehttp.Do(ctx, client, enginehttp.Request{URL: url, Accept: acceptHeader,
		Auth: enginehttp.Auth{Key: apiKey}, Max: maxBody})
	var he *enginehttp.Error
	switch {
	case errors.Is(err, enginehttp.ErrTooLarge):
		return nil, fmt.Errorf("GET %s: the answer is over %d MiB", Redact(url), maxBody>>20)
	case errors.As(err, &he) && he.Reading:
		return nil, fmt.Errorf("GET %s: reading the answer: %v", Redact(url), errs.Root(err))
	case err != nil:
		return nil, fmt.Errorf("GET %s: %v", Redact(url), errs.Root(err))
	case resp.Status != http.StatusOK:
		return nil, &StatusError{URL: Redact(url), Code: resp.Status}
	}
	vals, err := Parse(bytes.NewReader(resp.Body))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", Redact(url), err)
	}
	return vals, nil
}

// StatusError is a metrics endpoint answering something other than 200.
type StatusError struct {
	URL  string
	Code int
}

func (e *StatusError) Error() string { return fmt.Sprintf("GET %s answered HTTP %d", e.URL, e.Code) }

// Parse reads the Prometheus text format. Counters, gauges and untyped
// series are summed across their label sets under the family name (a
// counter split by model, engine or cache source is one figure for a
// benchmark); histograms and summaries give name_sum and name_count.
// Input that is not the text format is an error.
func Parse(r io.Reader) (map[string]float64, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("not Prometheus text format: %v", err)
	}
	out := make(map[string]float64, len(fams))
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[name] += m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[name] += m.GetGauge().GetValue()
			case dto.MetricType_UNTYPED:
				out[name] += m.GetUntyped().GetValue()
			case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
				out[name+"_sum"] += m.GetHistogram().GetSampleSum()
				out[name+"_count"] += float64(m.GetHistogram().GetSampleCount())
			case dto.MetricType_SUMMARY:
				out[name+"_sum"] += m.GetSummary().GetSampleSum()
				out[name+"_count"] += float64(m.GetSummary().GetSampleCount())
			}
		}
	}
	return out, nil
}

// DefaultURL is where an engine serves its metrics when no --metrics-url
// is given: /metrics at the root of the engine URL (its /v1 dropped).
func DefaultURL(engineURL string) string {
	s := strings.TrimRight(engineURL, "/")
	s = strings.TrimSuffix(s, "/v1")
	return s + "/metrics"
}

// NormalizeURL completes a --metrics-url value: `http://` is added when
// no scheme is given. The path is kept as given.
func NormalizeURL(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", fmt.Errorf("--metrics-url: empty URL")
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("--metrics-url %q: not a URL", Redact(raw))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("--metrics-url %q: scheme must be http or https", Redact(u.String()))
	}
	if u.Host == "" {
		return "", fmt.Errorf("--metrics-url %q: no host", Redact(u.String()))
	}
	return u.String(), nil
}

// SameHost reports whether two URLs have the same scheme and host, i.e.
// whether the engine's API key may be sent to the metrics endpoint.
func SameHost(engineURL, metricsURL string) bool {
	a, err1 := url.Parse(engineURL)
	b, err2 := url.Parse(metricsURL)
	return err1 == nil && err2 == nil && a.Host != "" && a.Scheme == b.Scheme && strings.EqualFold(a.Host, b.Host)
}

// Redact hides a URL's user-info (http://user:pass@host -> http://host),
// and any query string (metrics endpoints are sometimes protected by a
// token parameter). Text that is not a URL with a host keeps neither what
// stands before an '@' nor a query.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		// Not a URL with a host ("user:pass@host" without a scheme):
		// hide what stands before an '@' and after a '?'.
		raw = secret.Strip(raw)
		if k := strings.LastIndexByte(raw, '@'); k >= 0 {
			raw = raw[k+1:]
		}
		if k := strings.IndexByte(raw, '?'); k >= 0 {
			raw = raw[:k] + "?xxxxx"
		}
		return raw
	}
	if u.RawQuery != "" {
		u.RawQuery = "xxxxx"
	}
	u.User = nil
	return u.String()
}
