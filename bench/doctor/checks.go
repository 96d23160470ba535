package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/enginehttp"
	"github.com/kvbench/kvbench/bench/metrics"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/internal/errs"
)

const maxBody = 16 << 20

// call sends one GET or POST to the engine (bounded by the check timeout)
// and returns the status, the headers and the body.
func (d *doctor) call(ctx context.Context, method, url string, body []byte) (int, http.Header, []byte, error) {
	resp, err := enginehttp.Do(ctx, d.hc, enginehttp.Request{Method: method, URL: url, Body: body,
		Auth: enginehttp.Auth{Key: d.o.APIKey, User: d.o.UserInfo}, Timeout: d.o.Timeout, Max: maxBody})
	if err != nil {
		var he *enginehttp.Error
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return 0, nil, nil, fmt.Errorf("no answer within %s", d.o.Timeout)
		case errors.Is(err, enginehttp.ErrTooLarge):
			return 0, nil, nil, fmt.Errorf("reading the answer: over %d MiB", maxBody>>20)
		case errors.As(err, &he) && he.Reading:
			return 0, nil, nil, fmt.Errorf("reading the answer: %s", errs.Root(err))
		}
		return 0, nil, nil, errors.New(errs.Root(err).Error())
	}
	return resp.Status, resp.Header, resp.Body, nil
}

// models is `GET /v1/models` through the preflight every run makes
// (bench.Preflight): reachable, which model a run would use, and the
// first clues to the engine. Unlike a run's preflight, an unlisted
// --model is a warning here: the doctor still tries it.
func (d *doctor) models(ctx context.Context) {
	ml, err := bench.Preflight(ctx, bench.PreflightOptions{BaseURL: d.base, APIKey: d.o.APIKey,
		UserInfo: d.o.UserInfo, Timeout: d.o.Timeout, Transport: d.hc.Transport})
	var pe *bench.PreflightError
	if err != nil && !errors.As(err, &pe) {
		pe = &bench.PreflightError{URL: metrics.Redact(d.base + "/models"), Cause: bench.CauseConnect, Msg: err.Error()}
	}
	if pe != nil {
		switch pe.Cause {
		case bench.CauseAuth:
			d.set(IDModels, Fail, pe.Error(), authHint(d.o.APIKey))
			return
		case bench.CauseHTTP, bench.CauseNotModels, bench.CauseNoModels:
			if ml != nil {
				d.eng = fromServerHeader(ml.Server)
			}
			if d.o.Model != "" {
				d.set(IDModels, Warn, fmt.Sprintf("%s; a run would use --model %q", pe.Error(), d.o.Model),
					"the engine lists no models here: check that --engine-url is its OpenAI API root")
			} else {
				d.set(IDModels, Fail, pe.Error(), "check --engine-url (the OpenAI API root; kvbench adds /v1), or pass --model")
			}
			return
		}
		d.unreachable = pe.Msg
		d.set(IDModels, Fail, "cannot reach "+metrics.Redact(d.base+"/models")+": "+pe.Msg,
			"start the engine, or fix --engine-url (kvbench adds /v1 to it)")
		return
	}
	d.eng = fromServerHeader(ml.Server)
	for _, o := range ml.OwnedBy {
		if d.eng == engineUnknown {
			d.eng = fromOwnedBy(o)
		}
	}
	if d.eng == engineUnknown && ml.OllamaList {
		d.eng = engineLlamaCpp
	}
	ids := ml.IDs
	listed := quoteList(ids, 3)
	switch {
	case d.o.Model != "" && !contains(ids, d.o.Model):
		d.model = d.o.Model
		d.set(IDModels, Warn, bench.NotListed(d.o.Model, ids),
			"pass one of the listed ids as --model, or --served-model-name when the engine serves an alias")
	case d.o.Model != "":
		d.model = d.o.Model
		d.set(IDModels, Pass, fmt.Sprintf("GET /v1/models lists %s; a run would use %q", listed, d.model), "")
	default:
		d.model = ids[0]
		d.set(IDModels, Pass, fmt.Sprintf("GET /v1/models lists %s; a run would use %q", listed, d.model), "")
	}
}

// probeOllama asks ollama's own API, the one clue ollama gives.
func (d *doctor) probeOllama(ctx context.Context) {
	status, _, body, err := d.call(ctx, http.MethodGet, d.root+"/api/version", nil)
	if err != nil || status != http.StatusOK {
		return
	}
	var v struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(body, &v) == nil && v.Version != "" {
		d.eng = engineOllama
	}
}

func authHint(key string) string {
	if key == "" {
		return "the engine wants a key: pass --api-key-env NAME (the environment variable holding it)"
	}
	return "the engine refused the key: check the variable named by --api-key-env"
}

// prompt is the doctor's request: the nonce first, so no earlier request
// shares even its first block, then a paragraph long enough to fill a few
// cache blocks of any engine (vLLM 16 tokens, SGLang pages, TRT-LLM 64).
func (d *doctor) prompt() string {
	const para = "A cache benchmark only means something when the engine reports what it reused. " +
		"This paragraph is sent twice by kvbench doctor: first on its own, then again word for word, " +
		"so that the second request can be served from the prefix cache of the first one. "
	var b strings.Builder
	b.WriteString("kvbench doctor " + d.nonce + ". ")
	for i := 0; i < 4; i++ {
		b.WriteString(para)
	}
	b.WriteString("Reply with one short sentence.")
	return b.String()
}

// halfPrompt shares exactly the first half of prompt() (the nonce and
// the first half of the paragraphs) and then differs: a prefix cache can
// serve that half and no more.
func (d *doctor) halfPrompt() string {
	p := d.prompt()
	n := len(p) / 2
	var b strings.Builder
	b.WriteString(p[:n])
	b.WriteString(" Second half replaced: ")
	for b.Len() < len(p) {
		b.WriteString("an unrelated sentence that no earlier request contained. ")
	}
	return b.String()
}

// generate sends the unique prompt twice and derives stream, usage,
// cached_tokens, prefix_cache and reasoning from the two replies.
func (d *doctor) generate(ctx context.Context) {
	msg := []sender.Message{{Role: "user", Content: d.prompt()}}
	cold := d.client.Do(ctx, &sender.Request{ID: "doctor-cold", Messages: msg, MaxTokens: 8})
	if !d.streamCheck(cold) {
		for _, id := range []string{IDUsage, IDCachedTokens, IDPrefixCache} {
			d.set(id, Fail, "skipped: the stream check failed", "see the stream check")
		}
		d.set(IDReasoning, Info, "unknown: the stream check failed", "")
		return
	}
	before := d.hitCounters(ctx)
	warm := d.client.Do(ctx, &sender.Request{ID: "doctor-repeat", Messages: msg, MaxTokens: 8})
	after := d.hitCounters(ctx)

	half := d.client.Do(ctx, &sender.Request{ID: "doctor-half", Messages: []sender.Message{{Role: "user", Content: d.halfPrompt()}}, MaxTokens: 8})

	d.usageCheck(cold)
	d.cachedTokensCheck(cold, warm)
	d.cachedTokensLies(cold, warm, half)
	d.prefixCacheCheck(warm, before, after)
	d.reasoningCheck(cold, warm)
}

func (d *doctor) streamCheck(r sender.Result) bool {
	if r.Error != nil {
		d.set(IDStream, Fail, "POST /v1/chat/completions: "+describe(r), d.errorHint(r, "/v1/chat/completions"))
		return false
	}
	if !r.Successful {
		d.set(IDStream, Fail, "POST /v1/chat/completions: the stream ended with [DONE] but carried no content and no completion tokens",
			"the engine produced nothing: check --model and that the model generates text")
		return false
	}
	ttft := 0.0
	if r.TTFT != nil {
		ttft = *r.TTFT * 1000
	}
	d.set(IDStream, Pass, fmt.Sprintf("a streaming chat request ended with [DONE] (%d chunks, TTFT %.0f ms)", r.Chunks, ttft), "")
	return true
}

func (d *doctor) usageCheck(r sender.Result) {
	switch {
	case r.PromptTokens != nil && r.CompletionTokens != nil:
		d.set(IDUsage, Pass, fmt.Sprintf("the final usage has integer counts (prompt %d, completion %d tokens)", *r.PromptTokens, *r.CompletionTokens), "")
	case reason(r) == sender.ReasonUsageMissing:
		d.set(IDUsage, Fail, "no usage in the stream, although stream_options.include_usage was sent", hintNoUsage.For(d.eng))
	default:
		d.set(IDUsage, Fail, fmt.Sprintf("usage counts are not JSON integers (prompt_tokens %s, completion_tokens %s)", intOr(r.PromptTokens), intOr(r.CompletionTokens)),
			"kvbench accepts only integer counts (8.0 or \"8\" are invalid): the engine or a proxy rewrites usage")
	}
}

func (d *doctor) cachedTokensCheck(cold, warm sender.Result) {
	switch {
	case cold.CachedTokens != nil && *cold.CachedTokens == 0:
		d.set(IDCachedTokens, Pass, fmt.Sprintf("cached_tokens is an explicit 0 on a unique prompt (%s prompt tokens): cold requests will be provably cold", intOr(cold.PromptTokens)), "")
	case cold.CachedTokens != nil:
		d.set(IDCachedTokens, Warn, fmt.Sprintf("cached_tokens is reported, but a unique prompt already had %d of %s tokens cached: chat requests will never read cold", *cold.CachedTokens, intOr(cold.PromptTokens)),
			"the engine caches the chat template's shared start (a system prompt or header); cold receipts need --endpoint completions, or accept those tokens as reused")
	case reason(cold) == sender.ReasonUsageMissing:
		d.set(IDCachedTokens, Fail, "skipped: no usage in the stream", "see the usage check")
	case reason(cold) == sender.ReasonInvalidCount && cold.PromptTokens != nil:
		d.set(IDCachedTokens, Warn, "prompt_tokens_details.cached_tokens is not a JSON integer, so receipts will be unverified (invalid_count)",
			"kvbench accepts only integer counts: the engine or a proxy rewrites usage")
	case warm.CachedTokens != nil:
		d.set(IDCachedTokens, Warn, fmt.Sprintf("cached_tokens is absent on a unique prompt but reported on the repeat (%d): a zero is left out, so cold requests will be unverified (details_absent)", *warm.CachedTokens),
			hintDetailsOmitZero.For(d.eng))
	default:
		d.set(IDCachedTokens, Warn, "usage carries no prompt_tokens_details.cached_tokens, so receipts will be unverified (details_absent)",
			hintDetailsNever.For(d.eng))
	}
}

// cachedTokensLies warns about counts no prefix cache can produce, as
// seen behind disaggregated prefill/decode and some gateways (vLLM
// #47136 and #43370, SGLang #25972): 0 on an identical repeat, a count
// equal to the whole prompt (the last prompt token is always computed),
// or more than the shared half of a half-shared prompt (more than 3/4 of
// its tokens: the half plus the chat template's start, with room for
// tokenizer boundaries).
func (d *doctor) cachedTokensLies(cold, warm, half sender.Result) {
	var lies []string
	if warm.Successful && warm.CachedTokens != nil && *warm.CachedTokens == 0 && cold.CachedTokens != nil {
		lies = append(lies, "an identical repeat reported cached_tokens 0")
	}
	for _, r := range []sender.Result{cold, warm, half} {
		if r.CachedTokens != nil && r.PromptTokens != nil && *r.PromptTokens > 0 && *r.CachedTokens == *r.PromptTokens {
			lies = append(lies, fmt.Sprintf("%s reported all %d prompt tokens cached (a prefix cache always computes the last one)", r.RequestID, *r.PromptTokens))
			break
		}
	}
	if half.Successful && half.CachedTokens != nil && half.PromptTokens != nil && 4**half.CachedTokens > 3**half.PromptTokens {
		lies = append(lies, fmt.Sprintf("a prompt sharing only its first half reported %d of %d tokens cached", *half.CachedTokens, *half.PromptTokens))
	}
	if len(lies) == 0 {
		return
	}
	prev := d.checks[IDCachedTokens]
	d.set(IDCachedTokens, Warn, "cached_tokens looks wrong: "+strings.Join(lies, "; ")+"; receipts from this engine cannot be trusted",
		"the count is lost or rewritten on the way: behind disaggregated prefill/decode or a gateway, engines report 0, the whole prompt, or more than was cached "+
			"(vLLM #47136, #43370; SGLang #25972); ask the engine directly, or compare with its Prometheus cache counters (--metrics-url); a 0 on a repeat may also mean prefix caching is off (see prefix_cache)")
	if prev.Status == Fail {
		d.checks[IDCachedTokens] = prev
	}
}

func (d *doctor) prefixCacheCheck(warm sender.Result, before, after map[string]float64) {
	if warm.Error != nil {
		d.set(IDPrefixCache, Fail, "the repeated request failed: "+describe(warm), d.errorHint(warm, "/v1/chat/completions"))
		return
	}
	if warm.CachedTokens != nil {
		if *warm.CachedTokens > 0 {
			d.set(IDPrefixCache, Pass, fmt.Sprintf("an identical repeat reported %d of %s prompt tokens cached", *warm.CachedTokens, intOr(warm.PromptTokens)), "")
		} else {
			d.set(IDPrefixCache, Warn, "an identical repeat reported 0 cached tokens", hintPrefixOff.For(d.eng))
		}
		return
	}
	if warm.CacheN != nil && *warm.CacheN > 0 {
		d.set(IDPrefixCache, Pass, fmt.Sprintf("an identical repeat reused %d tokens (timings.cache_n; cached_tokens is not reported)", *warm.CacheN), "")
		return
	}
	if hits, name, ok := hitsDelta(before, after); ok {
		if hits > 0 {
			d.set(IDPrefixCache, Pass, fmt.Sprintf("the replies do not report cached tokens, but %s grew by %.0f on an identical repeat", name, hits), "")
		} else {
			d.set(IDPrefixCache, Warn, fmt.Sprintf("the replies do not report cached tokens, and %s did not grow on an identical repeat", name), hintPrefixOff.For(d.eng))
		}
		return
	}
	d.set(IDPrefixCache, Warn, "cannot tell: the replies do not report cached tokens and no metrics show cache hits",
		"to see hits in the replies: "+hintDetailsNever.For(d.eng))
}

// hitCounters samples the metrics endpoint's hit counters (nil when it
// has none), to see a repeat hit the cache when replies do not say so.
func (d *doctor) hitCounters(ctx context.Context) map[string]float64 {
	if d.metricsAll == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, d.o.Timeout)
	defer cancel()
	all, err := metrics.ScrapeAuth(ctx, d.hc, d.metricsURL, d.metricsKey())
	if err != nil {
		return nil
	}
	return metrics.Pick(all)
}

func hitsDelta(before, after map[string]float64) (float64, string, bool) {
	if before == nil || after == nil {
		return 0, "", false
	}
	for _, p := range metrics.HitRatePairs {
		b, ok1 := before[p.Hits]
		a, ok2 := after[p.Hits]
		if ok1 && ok2 {
			return a - b, p.Hits, true
		}
	}
	return 0, "", false
}

func (d *doctor) reasoningCheck(rs ...sender.Result) {
	for _, r := range rs {
		if r.ReasoningField != "" {
			d.set(IDReasoning, Info, "replies carry delta."+r.ReasoningField+" (reasoning is hashed and counts as the first token)", hintReasoning)
			return
		}
	}
	d.set(IDReasoning, Info, "replies carry no reasoning fields", "")
}

// tokenize looks for a /tokenize endpoint (vLLM: prompt; llama.cpp:
// content). Its ids, when it answers, make the completions check's
// token-id prompt valid for the model's vocabulary.
func (d *doctor) tokenize(ctx context.Context) {
	text := "kvbench doctor tokenize check"
	body, _ := json.Marshal(map[string]any{"model": firstNonEmpty(d.o.ServedModelName, d.model), "prompt": text, "content": text})
	status, _, resp, err := d.call(ctx, http.MethodPost, d.root+"/tokenize", body)
	if err != nil {
		d.set(IDTokenize, Info, "POST /tokenize: "+err.Error(), "nothing to change: kvbench does not need it")
		return
	}
	if status != http.StatusOK {
		d.set(IDTokenize, Info, fmt.Sprintf("no /tokenize endpoint (HTTP %d)", status), "nothing to change: kvbench does not need it")
		return
	}
	var doc struct {
		Tokens []json.RawMessage `json:"tokens"`
	}
	if json.Unmarshal(resp, &doc) != nil || len(doc.Tokens) == 0 {
		d.set(IDTokenize, Info, "POST /tokenize answers, but not with a token list", "nothing to change: kvbench does not need it")
		return
	}
	for _, t := range doc.Tokens {
		var id uint32
		if json.Unmarshal(t, &id) != nil {
			d.tokenIDs = nil
			break
		}
		d.tokenIDs = append(d.tokenIDs, id)
	}
	d.set(IDTokenize, Info, fmt.Sprintf("POST /tokenize answers (%d tokens for a test prompt)", len(doc.Tokens)), "")
}

// fallbackIDs is a token-id prompt for engines without /tokenize: ids
// in every real vocabulary (all have tens of thousands), clear of the
// special tokens at either end.
var fallbackIDs = []uint32{1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 1015}

func (d *doctor) completions(ctx context.Context) {
	ids := d.tokenIDs
	if len(ids) < 2 {
		ids = fallbackIDs
	}
	r := d.client.Do(ctx, &sender.Request{ID: "doctor-completions", Endpoint: sender.Completions, PromptIDs: ids, MaxTokens: 4})
	if r.Error == nil && r.Successful {
		d.set(IDCompletions, Pass, fmt.Sprintf("/v1/completions streamed a token-id prompt (%d tokens) to [DONE]", len(ids)), "")
		return
	}
	what := describe(r)
	if r.Error == nil {
		what = "the stream carried no content and no completion tokens"
	}
	hint := "cache-probe (--cp-prompt-file), concurrent-exactness and --endpoint completions need it; chat workloads do not"
	if r.HTTPStatus >= 400 && r.HTTPStatus < 500 && r.HTTPStatus != 401 && r.HTTPStatus != 403 {
		text := d.client.Do(ctx, &sender.Request{ID: "doctor-completions-text", Endpoint: sender.Completions, Prompt: "kvbench doctor " + d.nonce, MaxTokens: 4})
		if text.Error == nil && text.Successful {
			d.set(IDCompletions, Warn, "/v1/completions refuses a token-id prompt ("+what+") but streams a text prompt",
				"prompt files of token ids (cache-probe --cp-prompt-file) will fail on this engine; text prompts work")
			return
		}
	}
	d.set(IDCompletions, Warn, "/v1/completions with a token-id prompt: "+what, hint)
}

// scrapeMetrics reads the metrics endpoint once, early, so the engine
// can be recognised by its metric names before the hints are written.
func (d *doctor) scrapeMetrics(ctx context.Context) {
	if d.o.MetricsURL != "" {
		u, err := metrics.NormalizeURL(d.o.MetricsURL)
		if err != nil {
			d.metricsErr = err
			return
		}
		d.metricsURL = u
	} else if d.base != "" {
		d.metricsURL = metrics.DefaultURL(d.base)
	}
	if d.metricsURL == "" || (d.unreachable != "" && d.o.MetricsURL == "") {
		return
	}
	d.metricsAuth = d.base != "" && metrics.SameHost(d.base, d.metricsURL)
	ctx, cancel := context.WithTimeout(ctx, d.o.Timeout)
	defer cancel()
	all, err := metrics.ScrapeAuth(ctx, d.hc, d.metricsURL, d.metricsKey())
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("GET %s: no answer within %s", metrics.Redact(d.metricsURL), d.o.Timeout)
		}
		d.metricsErr = err
		return
	}
	d.metricsAll = all
	e, lm := fromMetricNames(all)
	d.lmcacheSeen = lm
	if e != engineUnknown && (d.eng == engineUnknown || e == engineSim) {
		d.eng = e
	}
}

func (d *doctor) metricsKey() string {
	if d.metricsAuth {
		return d.o.APIKey
	}
	return ""
}

func (d *doctor) metricsCheck() {
	explicit := d.o.MetricsURL != ""
	bad := Warn
	if explicit {
		bad = Fail // asked for by name: a run would sample nothing
	}
	switch {
	case d.metricsURL == "" && d.metricsErr == nil:
		d.set(IDMetrics, Fail, "skipped: engine unreachable", "see the models check")
	case d.metricsAll == nil && d.metricsErr == nil:
		d.set(IDMetrics, Fail, "skipped: engine unreachable", "pass --metrics-url to check a metrics endpoint elsewhere")
	case d.metricsErr != nil:
		var se *metrics.StatusError
		hint := hintNoMetrics.For(d.eng)
		if explicit {
			hint = "check --metrics-url: it should be the Prometheus text endpoint (usually {engine}/metrics)"
		}
		if errors.As(d.metricsErr, &se) && (se.Code == 401 || se.Code == 403) {
			hint = "the metrics endpoint wants a key; kvbench sends --api-key-env's key only to the engine's own host"
		}
		d.set(IDMetrics, bad, oneLine(d.metricsErr.Error()), hint)
	default:
		known := metrics.Pick(d.metricsAll)
		var cache []string
		for _, k := range metrics.Known {
			if _, ok := known[k.Name]; ok && k.Cache {
				cache = append(cache, k.Name)
			}
		}
		where := metrics.Redact(d.metricsURL)
		if len(cache) == 0 {
			d.set(IDMetrics, bad, fmt.Sprintf("%s parses (%d series) but has no known cache counter", where, len(d.metricsAll)), hintNoCacheCounters.For(d.eng))
			return
		}
		msg := fmt.Sprintf("%s parses (%d series); cache counters: %s", where, len(d.metricsAll), strings.Join(cache, ", "))
		if _, ok := hitPair(known); !ok {
			d.set(IDMetrics, bad, msg+"; but no hits/queries pair for a hit rate", hintNoCacheCounters.For(d.eng))
			return
		}
		d.set(IDMetrics, Pass, msg, "")
	}
}

func hitPair(known map[string]float64) (metrics.HitRatePair, bool) {
	for _, p := range metrics.HitRatePairs {
		ok := true
		for _, n := range append([]string{p.Hits}, p.Queries...) {
			if _, has := known[n]; !has {
				ok = false
				break
			}
		}
		if ok {
			return p, true
		}
	}
	return metrics.HitRatePair{}, false
}

func (d *doctor) lmcache(ctx context.Context) {
	if d.o.LMCacheURL == "" {
		hint := "pass --lmcache-url to check the tokens-per-GB lookup the LMCache workloads can use"
		if d.lmcacheSeen {
			hint = "LMCache metrics are present: pass --lmcache-url (LMCache's internal API server) to check tokens-per-GB"
		}
		d.set(IDLMCache, Info, "skipped: no --lmcache-url", hint)
		return
	}
	if d.model == "" {
		d.set(IDLMCache, Fail, "skipped: no model to look up", "pass --model")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, d.o.Timeout)
	defer cancel()
	n, err := bench.TokensPerGB(ctx, d.o.LMCacheURL, d.model)
	if err != nil {
		d.set(IDLMCache, Fail, oneLine(err.Error()),
			"check --lmcache-url (LMCache's internal API server, not the engine) and that --model matches its model_name")
		return
	}
	d.set(IDLMCache, Pass, fmt.Sprintf("model %q found at %s/status: %d tokens per GB", d.model, metrics.Redact(strings.TrimRight(d.o.LMCacheURL, "/")), n), "")
}

// describe is a failed result in one line: code and detail.
func describe(r sender.Result) string {
	s := ""
	if r.Error != nil {
		s = *r.Error
	}
	if r.ErrorDetail != nil && *r.ErrorDetail != "" {
		s += ": " + *r.ErrorDetail
	}
	return oneLine(s)
}

// errorHint says what to change for a failed request.
func (d *doctor) errorHint(r sender.Result, path string) string {
	code := ""
	if r.Error != nil {
		code = *r.Error
	}
	detail := ""
	if r.ErrorDetail != nil {
		detail = strings.ToLower(*r.ErrorDetail)
	}
	switch {
	case code == sender.ErrConnect:
		return "the engine stopped answering: is it still running at --engine-url?"
	case r.HTTPStatus == 401 || r.HTTPStatus == 403:
		return authHint(d.o.APIKey)
	case (r.HTTPStatus == 404 || r.HTTPStatus == 400) && strings.Contains(detail, "model"):
		return "check --model and --served-model-name against the models check"
	case r.HTTPStatus == 404:
		return "no POST " + path + " at this URL: check --engine-url"
	case r.HTTPStatus >= 400 && r.HTTPStatus < 500:
		return "the engine refused the request: check --model, --served-model-name and the engine's log"
	case r.HTTPStatus >= 500:
		return "the engine failed: see its log"
	case code == sender.ErrIdleTimeout || code == sender.ErrTimeout:
		return fmt.Sprintf("no answer within %s: is the engine still loading the model, or busy?", d.o.Timeout)
	case code == sender.ErrIncomplete:
		return "the stream ended without data: [DONE]: a proxy may be buffering or cutting streams; try the engine directly"
	}
	return "the engine's stream is not shaped like OpenAI's: see the message"
}

func reason(r sender.Result) string {
	if r.UnverifiedReason == nil {
		return ""
	}
	return *r.UnverifiedReason
}

func intOr(p *int) string {
	if p == nil {
		return "invalid"
	}
	return fmt.Sprint(*p)
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// quoteList is `1 model ("a")` or `5 models ("a", "b", "c", ...)`.
func quoteList(ids []string, max int) string {
	q := make([]string, 0, max+1)
	for i, id := range ids {
		if i == max {
			q = append(q, "...")
			break
		}
		q = append(q, fmt.Sprintf("%q", id))
	}
	noun := "models"
	if len(ids) == 1 {
		noun = "model"
	}
	if len(ids) == 0 {
		return "no model"
	}
	return fmt.Sprintf("%d %s (%s)", len(ids), noun, strings.Join(q, ", "))
}
