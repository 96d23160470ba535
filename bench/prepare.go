package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/bench/enginehttp"
	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/workload"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/debuglog"
	"github.com/kvbench/kvbench/internal/secret"
	"github.com/kvbench/kvbench/sim"
)

// Prepared is a run's resolved setup: the engine URL (a started built-in
// engine when asked), the model, tokens-per-GB, and the API key read from
// the variable --api-key-env names.
type Prepared struct {
	// Config is the run's config: the one given to Prepare, with what
	// preparation derived (the model, tokens per GB, the built-in
	// engine's budget) put in, as the record stores it. The config given
	// to Prepare is left as it was.
	Config *config.Config
	// Settings are Config's general settings, decoded once.
	Settings  config.Settings
	EngineURL string // normalised, ends in /v1
	// Derived is what preparation worked out that the user did not give.
	Derived     config.Derived
	TokensPerGB int
	// ModelErr is set when the model could not be auto-detected with
	// --no-preflight (the run goes on and records the failures).
	ModelErr error
	// PreflightErr is the failed preflight (an *EngineError, exit 3):
	// New refuses to start the run.
	PreflightErr error
	// Now is the runner's clock; nil means time.Now.
	Now func() time.Time
	// RunFolder, when set, is the run folder's exact name under the
	// output directory (a sweep's cells); else the usual dated name.
	RunFolder string

	log *slog.Logger // the debug log (--log-file); discards when none
	// L1GB is the LMCache server's first tier in GB, read from its /status
	// for a workload that sizes itself from it (workload.NeedsL1; 0 when
	// unknown).
	L1GB float64
	// Budget is the KV cache the workload's expectation is judged
	// against: the built-in engine's own, else (zero value) the
	// configured budget.
	Budget workload.KVBudget

	apiKey  string
	user    *url.Userinfo // from the engine URL: Basic auth (see docs/cli.md)
	builtin *sim.Running
}

// logger is the debug log, one that discards for a Prepared built by
// hand (tests).
func (p *Prepared) logger() *slog.Logger {
	if p.log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.log
}

// Builtin reports whether the engine is the in-process simulator.
func (p *Prepared) Builtin() bool { return p.builtin != nil }

// DisplayURL is the engine URL as shown and recorded: `builtin` for the
// in-process engine (its port changes every run).
func (p *Prepared) DisplayURL() string {
	if p.builtin != nil {
		return "builtin"
	}
	return p.EngineURL
}

// RequestModel is the `model` field sent with every request.
func (p *Prepared) RequestModel() string { return p.Settings.RequestModel() }

// APIKey returns the bearer key (never to be printed or stored).
func (p *Prepared) APIKey() string { return p.apiKey }

func (p *Prepared) extraBody() (map[string]any, error) {
	s := p.Settings.ExtraBody
	if s == "" {
		return nil, nil
	}
	return config.ParseObject(s)
}

// builtinsRunning counts the built-in engines that preparations started
// and have not closed.
var builtinsRunning atomic.Int64

// BuiltinsRunning is how many built-in engines prepared runs hold open
// (a prepared run that is never run nor closed leaves one behind).
func BuiltinsRunning() int64 { return builtinsRunning.Load() }

// Close stops the built-in engine, if one was started.
func (p *Prepared) Close() {
	if p.builtin != nil {
		p.builtin.Close()
		p.builtin = nil
		builtinsRunning.Add(-1)
	}
}

// Prepare resolves what a run needs before anything is measured: it
// validates the config, starts the built-in engine for `builtin`, reads
// the API key, auto-detects the model and resolves tokens-per-GB. The
// config is updated in place with the resolved model and tokens-per-GB.
// Unless --no-preflight, the engine must answer GET /v1/models and list
// the model (Preflight); a failure is kept in PreflightErr and returned
// by New before the run folder exists. Configuration problems are
// *UsageError (exit 2).
func Prepare(ctx context.Context, cfg *config.Config) (*Prepared, error) {
	if err := cfg.Validate(); err != nil {
		return nil, &UsageError{Err: err}
	}
	if _, err := load.FromConfig(cfg); err != nil {
		return nil, &UsageError{Err: err}
	}
	if missing := cfg.Missing(); len(missing) > 0 {
		return nil, &UsageError{Err: config.MissingError(missing, "--no-interactive")}
	}
	if err := cfg.CheckStartAt(time.Now()); err != nil {
		return nil, &UsageError{Err: err}
	}
	given := cfg.Settings()
	p := &Prepared{Config: cfg, Settings: given, log: LoggerFrom(ctx)}
	// derive records what is worked out below: the run's config and
	// settings hold it from then on.
	derive := func(d config.Derived) {
		p.Derived = d
		p.Config = cfg.WithDerived(d)
		p.Settings = p.Config.Settings()
	}
	if name := given.APIKeyEnv; name != "" {
		key, ok := os.LookupEnv(name)
		if !ok || key == "" {
			return nil, &UsageError{Err: fmt.Errorf("--api-key-env: environment variable %s is not set", name)}
		}
		p.apiKey = key
		debuglog.Hide(p.log, key)
	}
	raw := given.EngineURL
	p.user = cfg.UserInfo("engine_url")
	if raw == BuiltinURL {
		run, err := startBuiltin(given.Model, given.BuiltinSpeed, builtinCPUGB(given.Workload))
		if err != nil {
			return nil, err
		}
		p.builtin = run
		builtinsRunning.Add(1)
		raw = run.URL()
		// Size the workload to the cache the built-in engine really has,
		// unless a budget was given: the run then takes seconds, not the
		// minutes 100 GB of documents would.
		if !given.KVCacheGBGiven {
			derive(config.Derived{KVCacheGB: BuiltinKVGB()})
		}
		p.Budget = builtinBudget(given.Workload)
	}
	u, err := sender.NormalizeURL(raw)
	if err != nil {
		p.Close()
		return nil, &UsageError{Err: err}
	}
	p.EngineURL = u

	d := p.Derived
	if !given.NoPreflight {
		// The preflight's answer is kept for New: the workload's own
		// settings are checked first (exit 2 before exit 3).
		ml, err := Preflight(ctx, PreflightOptions{BaseURL: u, Model: p.RequestModel(), APIKey: p.apiKey, UserInfo: p.user})
		switch {
		case err != nil:
			p.PreflightErr = err
		case given.Model == "":
			d.Model = ml.Model
		}
	} else if given.Model == "" {
		c := sender.New(sender.Options{BaseURL: u, APIKey: p.apiKey, UserInfo: p.user, RequestTimeout: 10 * time.Second, IdleTimeout: 10 * time.Second})
		mctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		ids, err := c.Models(mctx)
		cancel()
		c.Close()
		switch {
		case err != nil:
			p.ModelErr = err
		case len(ids) == 0:
			p.ModelErr = fmt.Errorf("GET %s/models lists no model; pass --model", u)
		default:
			d.Model = ids[0]
		}
	}
	derive(d)

	tpg := given.TokensPerGB
	// A workload that does not need a budget may still predict with one
	// when it can be known (trace replay's LRU hits).
	if tpg <= 0 && config.UsesTokensPerGB(given.Workload) {
		statusURL := cfg.ConnURL("lmcache_url")
		if statusURL == "" && p.builtin != nil {
			statusURL = p.builtin.URL()
		}
		if statusURL != "" {
			n, err := TokensPerGB(ctx, statusURL, p.Settings.Model)
			if err != nil {
				p.Close()
				return nil, &UsageError{Err: err}
			}
			tpg = n
			d.TokensPerGB = n
			derive(d)
		}
	}
	p.TokensPerGB = tpg

	if workload.NeedsL1(cfg) {
		statusURL := cfg.ConnURL("lmcache_url")
		if statusURL == "" && p.builtin != nil {
			statusURL = p.builtin.URL()
		}
		if statusURL != "" {
			gb, err := LMCacheL1GB(ctx, statusURL)
			if err != nil {
				p.Close()
				return nil, &UsageError{Err: err}
			}
			p.L1GB = gb
		}
	}
	p.log.Info("prepared", "engine", p.DisplayURL(), "builtin", p.builtin != nil, "model", p.RequestModel(),
		"workload", given.Workload, "tokens_per_gb", tpg, "preflight_error", errText(p.PreflightErr), "model_error", errText(p.ModelErr))
	return p, nil
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// builtinCPUGB is the CPU tier the built-in engine starts with for cfg.
// builtinBudget is the built-in engine's cache, known exactly: its GPU
// tier and, for the workloads that get one, its CPU tier.
func builtinBudget(wl string) workload.KVBudget {
	sc := sim.DefaultConfig()
	b := workload.KVBudget{
		Tokens: int(sc.GPUKVGB * float64(sc.TokensPerGB)),
		What:   "the built-in engine's GPU cache",
		Size:   fmt.Sprintf("%g GB", sc.GPUKVGB),
		Engine: true,
	}
	if cpu := builtinCPUGB(wl); cpu > 0 {
		b.LowerTokens = int(cpu * float64(sc.TokensPerGB))
		b.Lower = true
	}
	return b
}

func builtinCPUGB(wl string) float64 { return workload.BuiltinLowerTierGB(wl) }

// TokensPerGB reads LMCache's GET {url}/status and computes tokens per GB
// for model: 1073741824 / (cache_size_per_token * world_size).
//
// A user-info part of lmcacheURL is sent as Basic authentication and
// appears in no message.
func TokensPerGB(ctx context.Context, lmcacheURL, model string) (int, error) {
	url, body, err := lmcacheStatus(ctx, lmcacheURL)
	if err != nil {
		return 0, err
	}
	return tokensPerGBFromStatus(url, body, model)
}

// lmcacheStatus fetches LMCache's GET {url}/status (10 s), returning the
// credential-free URL it asked and the body.
func lmcacheStatus(ctx context.Context, lmcacheURL string) (string, []byte, error) {
	url := enginehttp.Join(secret.Strip(lmcacheURL), "/status")
	resp, err := enginehttp.Do(ctx, nil, enginehttp.Request{URL: enginehttp.Join(lmcacheURL, "/status"), Timeout: 10 * time.Second})
	if err != nil {
		return url, nil, fmt.Errorf("--lmcache-url: %v", err)
	}
	if resp.Status != http.StatusOK {
		return url, nil, fmt.Errorf("--lmcache-url: GET %s answered HTTP %d", url, resp.Status)
	}
	return url, resp.Body, nil
}

// LMCacheL1GB reads the LMCache server's first-tier capacity from GET
// {url}/status: storage_manager.l1_manager.memory_total_bytes, else
// storage_manager.memory_total_bytes, in GB of 2^30 bytes.
func LMCacheL1GB(ctx context.Context, lmcacheURL string) (float64, error) {
	url, body, err := lmcacheStatus(ctx, lmcacheURL)
	if err != nil {
		return 0, err
	}
	var st struct {
		SM struct {
			Total *json.Number `json:"memory_total_bytes"`
			L1    struct {
				Total *json.Number `json:"memory_total_bytes"`
			} `json:"l1_manager"`
		} `json:"storage_manager"`
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if err := dec.Decode(&st); err != nil {
		return 0, fmt.Errorf("--lmcache-url: %s is not LMCache status JSON: %v", url, err)
	}
	n := st.SM.L1.Total
	if n == nil {
		n = st.SM.Total
	}
	if n == nil {
		return 0, nil
	}
	bytes, err := n.Float64()
	if err != nil || bytes < 0 {
		return 0, fmt.Errorf("--lmcache-url: %s: storage_manager memory_total_bytes %q is not a byte count", url, n.String())
	}
	return bytes / (1 << 30), nil
}

type statusEntry struct {
	ModelName     string `json:"model_name"`
	KVCacheLayout struct {
		CacheSizePerToken json.Number `json:"cache_size_per_token"`
	} `json:"kv_cache_layout"`
	WorldSize *json.Number `json:"world_size"`
}

func tokensPerGBFromStatus(url string, body []byte, model string) (int, error) {
	var st struct {
		Cache map[string]statusEntry `json:"cache_context_meta"`
		GPU   map[string]statusEntry `json:"cb_gpu_context_meta"`
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if err := dec.Decode(&st); err != nil {
		return 0, fmt.Errorf("--lmcache-url: %s is not LMCache status JSON: %v", url, err)
	}
	meta := st.Cache
	if len(meta) == 0 {
		meta = st.GPU
	}
	ids := make([]string, 0, len(meta))
	for id := range meta {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var names []string
	for _, id := range ids {
		e := meta[id]
		names = append(names, e.ModelName)
		if e.ModelName != model {
			continue
		}
		size, err := e.KVCacheLayout.CacheSizePerToken.Int64()
		if err != nil || size <= 0 {
			return 0, fmt.Errorf("--lmcache-url: %s: model %q has no valid kv_cache_layout.cache_size_per_token", url, model)
		}
		world := int64(1)
		if e.WorldSize != nil {
			if w, err := e.WorldSize.Int64(); err == nil && w > 0 {
				world = w
			}
		}
		return int(1073741824 / (size * world)), nil
	}
	if len(names) == 0 {
		return 0, fmt.Errorf("--lmcache-url: %s lists no model in cache_context_meta (looking for %q)", url, model)
	}
	return 0, fmt.Errorf("--lmcache-url: model %q not found at %s; available: %s", model, url, strings.Join(names, ", "))
}
