package config

import (
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Settings are the general settings of a run decoded into types, once,
// where a config enters the code that runs it (Config.Settings): the code
// past that edge reads fields, never a setting by its key. The table of
// Fields stays the one schema (flags, config JSON, the form); each
// field's tag names its row.
type Settings struct {
	EngineURL  string `setting:"engine_url"` // without credentials (ConnURL has them)
	LMCacheURL string `setting:"lmcache_url"`
	MetricsURL string `setting:"metrics_url"`
	Workload   string `setting:"workload"`
	Model      string `setting:"model"`
	// ServedModelName is the model sent in requests when the engine
	// serves an alias ("" means Model).
	ServedModelName string  `setting:"served_model_name"`
	KVCacheGB       float64 `setting:"kv_cache_volume"`
	KVCacheGBGiven  bool    `setting:"kv_cache_volume,given"`
	TokensPerGB     int     `setting:"tokens_per_gb_kvcache"`
	Seed            int     `setting:"seed"`
	IgnoreEOS       bool    `setting:"ignore_eos"`
	NoWarmup        bool    `setting:"no_warmup"`

	APIKeyEnv        string        `setting:"api_key_env"`
	Endpoint         string        `setting:"endpoint"`
	ExtraBody        string        `setting:"extra_body"`
	RequestTimeout   time.Duration `setting:"request_timeout"`
	IdleTimeout      time.Duration `setting:"idle_timeout"`
	MaxResponseBytes int           `setting:"max_response_bytes"`
	NoPreflight      bool          `setting:"no_preflight"`
	PromptSalt       string        `setting:"prompt_salt"`
	ResetCache       bool          `setting:"reset_cache"`
	BuiltinSpeed     float64       `setting:"builtin_speed"`
	StartAt          string        `setting:"start_at"`
	RunKey           string        `setting:"run_key"`

	OutputDir     string `setting:"output_dir"`
	NoCSV         bool   `setting:"no_csv"`
	Format        string `setting:"format"`
	Name          string `setting:"name"`
	Repeat        int    `setting:"repeat"`
	Percentiles   string `setting:"percentiles"`
	Quiet         bool   `setting:"quiet"`
	NoInteractive bool   `setting:"no_interactive"`

	Load LoadSettings
}

// LoadSettings are the load-shaping settings as given (bench/load reads
// them into its schedule).
type LoadSettings struct {
	RequestRate         string        `setting:"request_rate"`
	RequestRateGiven    bool          `setting:"request_rate,given"`
	Arrival             string        `setting:"arrival"`
	ArrivalGiven        bool          `setting:"arrival,given"`
	Burstiness          float64       `setting:"burstiness"`
	BurstinessGiven     bool          `setting:"burstiness,given"`
	MaxConcurrency      int           `setting:"max_concurrency"`
	MaxConcurrencyGiven bool          `setting:"max_concurrency,given"`
	RampUp              time.Duration `setting:"ramp_up"`
	SLO                 string        `setting:"slo"`
}

// Settings decodes the general settings.
func (c *Config) Settings() Settings {
	var s Settings
	c.Decode(&s)
	return s
}

// RequestModel is the `model` field sent with every request: the served
// name when there is one, else the model.
func (s Settings) RequestModel() string {
	if s.ServedModelName != "" {
		return s.ServedModelName
	}
	return s.Model
}

// Decode fills the fields of the struct v points to (and of the structs
// it holds) that carry a `setting:"key"` tag with key's value; a bool
// tagged `setting:"key,given"` says whether the user gave key. A
// workload decodes its own options so, once. A tag naming no setting,
// or a field of another type than its setting's, is a programming error
// and panics (the tests decode every such struct).
func (c *Config) Decode(v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("config: Decode needs a pointer to a struct, got %T", v))
	}
	c.decode(rv.Elem())
}

// DecodeAs is a T decoded from c (Config.Decode).
func DecodeAs[T any](c *Config) (v T) {
	c.Decode(&v)
	return v
}

func (c *Config) decode(sv reflect.Value) {
	st := sv.Type()
	for i := range st.NumField() {
		sf, fv := st.Field(i), sv.Field(i)
		tag, ok := sf.Tag.Lookup("setting")
		if !ok {
			if sf.Type.Kind() == reflect.Struct && sf.Type != reflect.TypeOf(time.Time{}) {
				c.decode(fv)
			}
			continue
		}
		key, opt, _ := strings.Cut(tag, ",")
		if _, known := c.values[key]; !known {
			panic("config: " + st.Name() + "." + sf.Name + " names no setting " + key)
		}
		var val any
		if opt == "given" {
			val = c.set[key]
		} else {
			val = c.Value(key)
		}
		x := reflect.ValueOf(val)
		if !x.Type().AssignableTo(fv.Type()) {
			panic(fmt.Sprintf("config: %s.%s is %s, setting %s is %s", st.Name(), sf.Name, fv.Type(), key, x.Type()))
		}
		fv.Set(x)
	}
}

// Derived are the values preparation works out when the user gave none:
// the model the engine lists, tokens per GB from LMCache or the built-in
// engine, the built-in engine's budget. Zero values derived nothing.
type Derived struct {
	Model       string
	TokensPerGB int
	KVCacheGB   float64
}

// WithDerived is a copy of c holding what preparation derived, as the
// run's record stores it; c itself is left as the user gave it.
func (c *Config) WithDerived(d Derived) *Config {
	r := c.Clone()
	if d.Model != "" {
		r.Set("model", d.Model)
	}
	if d.TokensPerGB > 0 {
		r.Set("tokens_per_gb_kvcache", d.TokensPerGB)
	}
	if d.KVCacheGB > 0 {
		r.Set("kv_cache_volume", d.KVCacheGB)
	}
	return r
}

// Setters of the general settings that code past the edge changes on a
// copy of the user's config (a sweep's cell, a series' run, the form's
// estimate), typed as their rows are.

// SetOutputDir sets --output-dir.
func (c *Config) SetOutputDir(dir string) error { return c.Set("output_dir", dir) }

// SetPromptSalt sets --prompt-salt.
func (c *Config) SetPromptSalt(salt string) error { return c.Set("prompt_salt", salt) }

// SetRequestRate sets --request-rate from its text ("inf" or a number).
func (c *Config) SetRequestRate(rate string) error { return c.SetString("request_rate", rate) }

// SetMaxConcurrency sets --max-concurrency.
func (c *Config) SetMaxConcurrency(n int) error { return c.Set("max_concurrency", n) }

// SetKVCacheGB sets --kv-cache-volume.
func (c *Config) SetKVCacheGB(gb float64) error { return c.Set("kv_cache_volume", gb) }

// SetLMCacheURL sets --lmcache-url.
func (c *Config) SetLMCacheURL(url string) error { return c.Set("lmcache_url", url) }

// SetSLO sets --slo from its text.
func (c *Config) SetSLO(slo string) error { return c.SetString("slo", slo) }
