package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/internal/secret"
	"github.com/kvbench/kvbench/internal/textclean"
)

// Config holds one value per Field plus which keys the user set
// explicitly (a flag, the config JSON, the form), so layers can be merged.
type Config struct {
	values map[string]any
	set    map[string]bool
	// auth holds the user-info split off a URL-valued setting where it
	// entered (see scrubURLs); values only ever hold the clean URL.
	auth map[string]credential
}

// Default returns a config holding every field's default.
func Default() *Config {
	c := &Config{values: map[string]any{}, set: map[string]bool{}}
	for _, f := range Fields {
		c.values[f.Key] = cloneValue(f.Default)
	}
	return c
}

func cloneValue(v any) any {
	if l, ok := v.([]int); ok {
		return append([]int(nil), l...)
	}
	if l, ok := v.([]string); ok {
		return append([]string{}, l...)
	}
	return v
}

// Clone returns an independent copy.
func (c *Config) Clone() *Config {
	d := &Config{values: map[string]any{}, set: map[string]bool{}}
	for k, v := range c.values {
		d.values[k] = cloneValue(v)
	}
	for k, v := range c.set {
		d.set[k] = v
	}
	for k, v := range c.auth {
		if d.auth == nil {
			d.auth = map[string]credential{}
		}
		d.auth[k] = v
	}
	return d
}

func (c *Config) get(key string) any {
	v, ok := c.values[key]
	if !ok {
		panic("config: unknown key " + key)
	}
	return v
}

// Int returns an Int field's value.
func (c *Config) Int(key string) int { return c.get(key).(int) }

// Float returns a Float field's value.
func (c *Config) Float(key string) float64 { return c.get(key).(float64) }

// String returns a String field's value.
func (c *Config) String(key string) string { return c.get(key).(string) }

// Bool returns a Bool field's value.
func (c *Config) Bool(key string) bool { return c.get(key).(bool) }

// Duration returns a Duration field's value.
func (c *Config) Duration(key string) time.Duration { return c.get(key).(time.Duration) }

// IntList returns an IntList field's value.
func (c *Config) IntList(key string) []int { return append([]int(nil), c.get(key).([]int)...) }

// StringList returns a StringList field's value.
func (c *Config) StringList(key string) []string {
	return append([]string{}, c.get(key).([]string)...)
}

// Value is key's value as its kind's Go type (int, float64, string,
// bool, time.Duration, []int, []string); lists are copies.
func (c *Config) Value(key string) any {
	switch v := c.get(key).(type) {
	case []int:
		return append([]int(nil), v...)
	case []string:
		return append([]string{}, v...)
	default:
		return v
	}
}

// IsSet reports whether the user gave key a value (a flag, an
// environment variable, a config file or the form) rather than leaving the
// default.
func (c *Config) IsSet(key string) bool { return c.set[key] }

// Workload is the chosen workload.
func (c *Config) Workload() string { return c.String("workload") }

// Set stores a value of the field's own Go type and marks the key set.
func (c *Config) Set(key string, v any) error {
	f, ok := Lookup(key)
	if !ok {
		return fmt.Errorf("unknown setting %q", key)
	}
	cv, err := coerce(f, v)
	if err != nil {
		return err
	}
	c.values[key] = cv
	c.set[key] = true
	c.scrubURLs()
	return nil
}

// SetString parses text as the field's type (as a flag or an environment
// variable would be) and stores it.
func (c *Config) SetString(key, s string) error {
	f, ok := Lookup(key)
	if !ok {
		return fmt.Errorf("unknown setting %q", key)
	}
	v, err := Parse(f, s)
	if err != nil {
		return err
	}
	c.values[key] = v
	c.set[key] = true
	c.scrubURLs()
	return nil
}

// Parse reads text as the field's type; errors name the flag.
func Parse(f Field, s string) (any, error) {
	s = strings.TrimSpace(s)
	bad := func() error {
		return fmt.Errorf("--%s: invalid value %q (want %s)", f.Flag, s, kindName(f.Kind))
	}
	switch f.Kind {
	case Int:
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, bad()
		}
		return n, nil
	case Float:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, bad()
		}
		return x, nil
	case Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, bad()
		}
		return b, nil
	case Duration:
		if d, err := time.ParseDuration(s); err == nil {
			return d, nil
		}
		if x, err := strconv.ParseFloat(s, 64); err == nil && math.Abs(x) < math.MaxInt64/float64(time.Second) {
			return time.Duration(x * float64(time.Second)), nil
		}
		return nil, bad()
	case IntList:
		var out []int
		for _, p := range strings.Split(s, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			n, err := strconv.Atoi(p)
			if err != nil {
				return nil, bad()
			}
			out = append(out, n)
		}
		if len(out) == 0 {
			return nil, bad()
		}
		return out, nil
	case StringList:
		out := []string{}
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out, nil
	}
	if f.Label {
		return textclean.Line(s), nil
	}
	return s, nil
}

func kindName(k Kind) string {
	switch k {
	case Int:
		return "an integer"
	case Float:
		return "a number"
	case Bool:
		return "true or false"
	case Duration:
		return "a duration such as 30s or 10m"
	case IntList:
		return "comma-separated integers"
	case StringList:
		return "a list of strings"
	}
	return "text"
}

// coerce converts a decoded JSON value (or a Go value) to the field's type.
func coerce(f Field, v any) (any, error) {
	wrong := func() error {
		return fmt.Errorf("%s: wrong type %s (want %s)", f.Key, jsonType(v), kindName(f.Kind))
	}
	switch f.Kind {
	case Int:
		switch t := v.(type) {
		case int:
			return t, nil
		case int64:
			return int(t), nil
		case json.Number:
			n, err := strconv.Atoi(t.String())
			if err != nil {
				x, ferr := t.Float64()
				if ferr != nil || x != math.Trunc(x) || math.Abs(x) > 1<<53 {
					return nil, wrong()
				}
				return int(x), nil
			}
			return n, nil
		case float64:
			if t != math.Trunc(t) {
				return nil, wrong()
			}
			return int(t), nil
		}
	case Float:
		switch t := v.(type) {
		case float64:
			return t, nil
		case int:
			return float64(t), nil
		case json.Number:
			x, err := t.Float64()
			if err != nil {
				return nil, wrong()
			}
			return x, nil
		}
	case String:
		if t, ok := v.(string); ok {
			if f.Label {
				t = textclean.Line(t)
			}
			return t, nil
		}
		if v == nil {
			return "", nil
		}
		// An object given for a JSON-object setting (extra bodies).
		if m, ok := v.(map[string]any); ok && f.JSONObject {
			b, _ := json.Marshal(m)
			return string(b), nil
		}
	case Bool:
		if t, ok := v.(bool); ok {
			return t, nil
		}
	case Duration:
		switch t := v.(type) {
		case time.Duration:
			return t, nil
		case string:
			return Parse(f, t)
		case json.Number:
			x, err := t.Float64()
			if err != nil || math.Abs(x) >= math.MaxInt64/float64(time.Second) {
				return nil, wrong()
			}
			return time.Duration(x * float64(time.Second)), nil
		}
	case StringList:
		switch t := v.(type) {
		case []string:
			return append([]string{}, t...), nil
		case string:
			return Parse(f, t)
		case nil:
			return []string{}, nil
		case []any:
			out := make([]string, 0, len(t))
			for _, e := range t {
				s, ok := e.(string)
				if !ok {
					return nil, wrong()
				}
				out = append(out, s)
			}
			return out, nil
		}
	case IntList:
		switch t := v.(type) {
		case []int:
			return append([]int(nil), t...), nil
		case string:
			return Parse(f, t)
		case []any:
			out := make([]int, 0, len(t))
			for _, e := range t {
				n, err := coerce(Field{Key: f.Key, Kind: Int}, e)
				if err != nil {
					return nil, wrong()
				}
				out = append(out, n.(int))
			}
			return out, nil
		}
	}
	return nil, wrong()
}

func jsonType(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if strings.ContainsAny(t.String(), ".eE") {
			return "number " + t.String()
		}
		return "integer " + t.String()
	case float64, int:
		return fmt.Sprintf("number %v", t)
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// lmcacheKeys are keys an `lmcache bench engine` config may hold that
// kvbench reads (or knowingly ignores) so such files load unchanged.
var lmcacheKeys = map[string]string{
	"kv_cache_volume_gb": "kv_cache_volume",
	"export_csv":         "",
	"export_json":        "",
	"quiet":              "",
	"output_dir":         "output_dir",
	"engine_url":         "engine_url",
	"lmcache_url":        "lmcache_url",
}

// LoadJSON reads an exported config (kvbench's or LMCache's) on top of c.
// Unknown keys and wrong types are errors naming them.
func (c *Config) LoadJSON(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config %s: %w", path, unwrapPathErr(err))
	}
	return c.loadJSON(path, data)
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (c *Config) loadJSON(path string, data []byte) error {
	// A config file is text from outside (a run folder's config.json is
	// read back by the explorer, compare, merge): its strings are cleaned.
	data = textclean.JSON(data)
	if err := StrictObject(data); err != nil {
		return fmt.Errorf("config %s: %v", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("config %s: not a JSON object: %v", path, err)
	}
	if raw == nil {
		return fmt.Errorf("config %s: not a JSON object", path)
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var unknown []string
	for _, k := range keys {
		if k == "shard" {
			// A shard's record names its share; a replay is a whole run
			// unless --shard is given again.
			continue
		}
		f, ok := Lookup(k)
		if alias, lm := lmcacheKeys[k]; lm {
			if alias == "" {
				continue // LMCache output settings kvbench takes from flags
			}
			f, ok = Lookup(alias)
		} else if ok && !f.Exported && f.Group != "load" {
			// The load settings are not part of an exported config, but
			// a sharded run's record carries them (RecordJSON), so they
			// load.
			ok = false
		}
		if !ok {
			unknown = append(unknown, k)
			continue
		}
		v := raw[k]
		if v == nil && f.Kind == String {
			v = ""
		}
		if v == nil && f.Derived {
			continue // left to Prepare
		}
		cv, err := coerce(f, v)
		if err != nil {
			return fmt.Errorf("config %s: %v", path, err)
		}
		c.values[f.Key] = cv
		c.set[f.Key] = true
	}
	if len(unknown) > 0 {
		return fmt.Errorf("config %s: unknown key(s): %s", path, strings.Join(unknown, ", "))
	}
	c.scrubURLs()
	return nil
}

// exportOrder is the order of the exported general settings in the
// config JSON (spec/cli.md "Config JSON"), which is not their order in
// help (spec/cli.md's flag table); a test holds it to the fields marked
// Exported.
var exportOrder = []string{"workload", "model", "served_model_name", "kv_cache_volume", "tokens_per_gb_kvcache", "ignore_eos", "seed", "no_warmup"}

// ExportJSON renders the replayable config: a flat object, 2-space
// indent, trailing newline, the general keys then the workload's own.
// It never holds URLs or credentials.
func (c *Config) ExportJSON() []byte {
	var b bytes.Buffer
	b.WriteString("{\n")
	keys := append([]string(nil), exportOrder...)
	for _, f := range WorkloadFields(c.Workload()) {
		keys = append(keys, f.Key)
	}
	for i, k := range keys {
		v, _ := json.Marshal(jsonValue(c.values[k]))
		fmt.Fprintf(&b, "  %q: %s", k, v)
		if i < len(keys)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
	return b.Bytes()
}

func jsonValue(v any) any {
	if d, ok := v.(time.Duration); ok {
		return d.String()
	}
	return v
}

// JSONValue is a field's value as the exported config writes it
// (durations as text, e.g. "10m0s").
func (c *Config) JSONValue(key string) any { return jsonValue(c.get(key)) }

// WarmupPolicy is `run`, or `skip` with --no-warmup.
func (c *Config) WarmupPolicy() string {
	if c.Bool("no_warmup") {
		return "skip"
	}
	return "run"
}

// Validate checks every value against its field's range and the
// cross-field rules; the error names the flag and the allowed range.
func (c *Config) Validate() error {
	if err := c.ValidateRecorded(); err != nil {
		return err
	}
	// What the settings name on this machine (a trace must be a regular
	// file) is checked before anything starts.
	if s, ok := Spec(c.Workload()); ok && s.CheckFiles != nil {
		return s.CheckFiles(c)
	}
	return nil
}

// ValidateRecorded checks the settings alone, not the files they name: a
// recorded config (kvbench merge) is checked without opening or stating
// its trace, which merge never reads and which may not be on this
// machine.
func (c *Config) ValidateRecorded() error {
	w := c.Workload()
	if w != "" {
		if _, known := Spec(w); !known {
			return fmt.Errorf("--workload must be one of %s (got %q)", strings.Join(Workloads, ", "), w)
		}
	}
	for _, f := range Fields {
		if f.Workload != "" && f.Workload != w {
			continue
		}
		if f.Derived && !c.set[f.Key] {
			continue
		}
		if err := f.Check(c.values[f.Key]); err != nil {
			return err
		}
	}
	if err := c.validateShard(); err != nil {
		return err
	}
	for _, f := range Fields {
		if !f.JSONObject || f.Workload != "" && f.Workload != w {
			continue
		}
		if s := c.String(f.Key); s != "" {
			if _, err := ParseObject(s); err != nil {
				return fmt.Errorf("--%s: %v", f.Flag, err)
			}
		}
	}
	if _, err := ParsePercentiles(c.String("percentiles")); err != nil {
		return err
	}
	if s, ok := Spec(w); ok && s.Validate != nil {
		return s.Validate(c)
	}
	return nil
}

// ParsePercentiles reads --percentiles: numbers in (0, 100] separated by
// commas ("50,90,95,99,99.9"), sorted, without repeats; empty is the
// default 50,90,99.
func ParsePercentiles(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return []float64{50, 90, 99}, nil
	}
	var out []float64
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || !(v > 0 && v <= 100) {
			return nil, fmt.Errorf("--percentiles must be numbers in (0, 100] separated by commas (got %q)", strings.TrimSpace(part))
		}
		out = append(out, v)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Percentiles is --percentiles, parsed (the default when invalid: the
// config was validated before).
func (c *Config) Percentiles() []float64 {
	ps, err := ParsePercentiles(c.String("percentiles"))
	if err != nil {
		ps, _ = ParsePercentiles("")
	}
	return ps
}

// checkTraceFile refuses a --tr-file that exists but is not a regular
// file, before anything starts: a FIFO would block, a device such as
// /dev/zero never end, and the trace is read twice (spec/trace.md). A
// missing file is left to the workload, which names it when it opens it.
func checkTraceFile(path string) error {
	if path == "" || path == "-" {
		return nil
	}
	st, err := os.Stat(path) // never opens: a FIFO does not block
	if err != nil || st.Mode().IsRegular() {
		return nil
	}
	kind := "not a plain file"
	switch m := st.Mode(); {
	case m.IsDir():
		kind = "a directory"
	case m&os.ModeNamedPipe != 0:
		kind = "a FIFO"
	case m&os.ModeSocket != 0:
		kind = "a socket"
	case m&os.ModeDevice != 0:
		kind = "a device"
	}
	return fmt.Errorf("--tr-file %s: not a regular file (%s); give a trace file", path, kind)
}

// ParseObject decodes a JSON object given on the command line.
func ParseObject(s string) (map[string]any, error) {
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("must be a JSON object (got %q)", s)
	}
	return m, nil
}

// Missing lists the required flags that have no value, in the order the
// guided setup asks for them.
func (c *Config) Missing() []string {
	var out []string
	if c.String("engine_url") == "" {
		out = append(out, "--engine-url")
	}
	if c.Workload() == "" {
		out = append(out, "--workload")
	}
	if c.NeedsTokensPerGB() {
		out = append(out, "--tokens-per-gb-kvcache or --lmcache-url")
	}
	for _, f := range WorkloadFields(c.Workload()) {
		if v, _ := c.values[f.Key].(string); f.Required && v == "" {
			out = append(out, "--"+f.Flag)
		}
	}
	return out
}

// NeedsTokensPerGB reports whether tokens-per-GB is still unknown and
// required: the workload sizes itself from it, neither it nor an LMCache
// URL was given, and the built-in engine (which reports its own) is not
// the target.
func (c *Config) NeedsTokensPerGB() bool {
	w := c.Workload()
	if w != "" && !NeedsTokensPerGB(w) {
		return false
	}
	return c.Int("tokens_per_gb_kvcache") <= 0 && c.String("lmcache_url") == "" &&
		c.String("engine_url") != "builtin"
}

// MissingError is the message for missing required arguments when no
// prompt may be shown; trigger is the flag that forbids prompting.
func MissingError(missing []string, trigger string) error {
	return fmt.Errorf("missing required arguments: %s; provide them or remove %s for guided setup",
		strings.Join(missing, ", "), trigger)
}

// Dir is kvbench's config directory: $KVBENCH_CONFIG_DIR, else
// $XDG_CONFIG_HOME/kvbench, else ~/.config/kvbench.
func Dir() string {
	if d := os.Getenv("KVBENCH_CONFIG_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "kvbench")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(".config", "kvbench")
	}
	return filepath.Join(home, ".config", "kvbench")
}

// WriteFileAtomic writes data through a temporary file and a rename, so
// a reader never sees a half-written file.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(name)
		return err
	}
	// The data reaches the disk before the name does: after a crash the
	// file is the old one or the new one, never an empty one.
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		os.Remove(name)
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Chmod(name, perm); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return err
	}
	// And the rename itself is made durable (best effort: some systems
	// cannot sync a directory).
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// URLKeys are the settings that hold a URL (the fields marked URL). A
// user-info part given with one (http://user:pass@host) is split off
// where the value enters the config, so every reader of the value sees
// only http://host; the credentials travel separately (UserInfo) to the
// HTTP connection alone.
var URLKeys = func() []string {
	var keys []string
	for _, f := range Fields {
		if f.URL {
			keys = append(keys, f.Key)
		}
	}
	return keys
}()

// credential is the user-info split off one URL-valued setting, with
// the clean URL it belongs to.
type credential struct {
	url  string
	user *url.Userinfo
}

// scrubURLs moves the user-info of every URL-valued setting into c.auth.
// Credentials given earlier are kept while the setting still names the
// same URL, and dropped once it names another one.
func (c *Config) scrubURLs() {
	for _, k := range URLKeys {
		raw, _ := c.values[k].(string)
		clean, ui := secret.SplitURL(raw)
		if ui != nil {
			c.values[k] = clean
			if c.auth == nil {
				c.auth = map[string]credential{}
			}
			c.auth[k] = credential{url: clean, user: ui}
			continue
		}
		if cr, ok := c.auth[k]; ok && cr.url != raw {
			delete(c.auth, k)
		}
	}
}

// UserInfo is the user-info given with a URL-valued setting (nil when
// none). It is for the HTTP connection only: never print or store it.
func (c *Config) UserInfo(key string) *url.Userinfo {
	return c.auth[key].user
}

// ConnURL is a URL-valued setting with its user-info put back, for the
// HTTP connection only: never print or store it.
func (c *Config) ConnURL(key string) string {
	v, _ := c.values[key].(string)
	ui := c.UserInfo(key)
	if ui == nil || v == "" {
		return v
	}
	at := 0
	if i := strings.Index(v, "://"); i >= 0 {
		at = i + 3
	}
	return v[:at] + ui.String() + "@" + v[at:]
}

// StrictObject checks that data is exactly one JSON object: nothing but
// white space after it, and no key twice in any object (the error names
// the key, with its path for a nested one).
func StrictObject(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if tok != json.Delim('{') {
		return fmt.Errorf("not a JSON object")
	}
	if err := strictObject(dec, ""); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("trailing content after the JSON object (at byte %d)", dec.InputOffset())
	}
	return nil
}

// strictObject reads the rest of an object whose '{' was just read.
func strictObject(dec *json.Decoder, path string) error {
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("not a JSON object: %v", err)
		}
		key, _ := tok.(string)
		if seen[key] {
			return fmt.Errorf("duplicate key %q", path+key)
		}
		seen[key] = true
		if err := strictValue(dec, path+key+"."); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	return nil
}

func strictValue(dec *json.Decoder, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	switch tok {
	case json.Delim('{'):
		return strictObject(dec, path)
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := strictValue(dec, fmt.Sprintf("%s%d.", path, i)); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return fmt.Errorf("not a JSON object: %v", err)
		}
	}
	return nil
}
