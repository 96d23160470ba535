package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func loadBody(t *testing.T, body string) (*Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	c := Default()
	return c, c.LoadJSON(path)
}

// Settings holding a request-body object take the object itself in a
// config JSON (kept as compact text) and refuse text that is not an
// object, naming their flag; any other text setting refuses an object.
func TestJSONObjectSettings(t *testing.T) {
	for _, c := range []struct{ key, flag, workload string }{
		{"extra_body", "extra-body", LongDocQA},
		{"ce_reference_extra_body", "ce-reference-extra-body", ConcurrentExactness},
	} {
		cfg := Default()
		cfg.Set("workload", c.workload)
		if err := cfg.Set(c.key, map[string]any{"b": []any{true, nil}, "a": 1}); err != nil {
			t.Fatalf("%s as an object: %v", c.key, err)
		}
		if got := cfg.String(c.key); got != `{"a":1,"b":[true,null]}` {
			t.Errorf("%s = %q", c.key, got)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("%s: %v", c.key, err)
		}
		cfg.Set(c.key, "[1]")
		if err := cfg.Validate(); err == nil || err.Error() != "--"+c.flag+`: must be a JSON object (got "[1]")` {
			t.Errorf("%s = [1]: %v", c.key, err)
		}
	}
	// An exported one loads from a config JSON as an object.
	cfg, err := loadBody(t, `{"workload":"concurrent-exactness","ce_reference_extra_body":{"draft": false}}`)
	if err != nil || cfg.String("ce_reference_extra_body") != `{"draft":false}` {
		t.Errorf("ce_reference_extra_body from JSON: %v %q", err, cfg.String("ce_reference_extra_body"))
	}
	// A workload's object is only checked when that workload runs.
	cfg = Default()
	cfg.Set("workload", LongDocQA)
	cfg.Set("ce_reference_extra_body", "[1]")
	if err := cfg.Validate(); err != nil {
		t.Errorf("another workload's setting checked: %v", err)
	}
	if err := Default().Set("model", map[string]any{"a": 1}); err == nil || !strings.Contains(err.Error(), "model: wrong type object") {
		t.Errorf("an object for a plain text setting: %v", err)
	}
	if _, err := loadBody(t, `{"model":{"a":1}}`); err == nil || !strings.Contains(err.Error(), "model: wrong type object") {
		t.Errorf("an object for a plain text setting: %v", err)
	}
}

// tokens per GB may be left to Prepare: null in a config JSON leaves it
// unset (a null number is otherwise a type error).
func TestDerivedSettingTakesNull(t *testing.T) {
	c, err := loadBody(t, `{"workload":"long-doc-qa","tokens_per_gb_kvcache":null}`)
	if err != nil {
		t.Fatal(err)
	}
	if c.IsSet("tokens_per_gb_kvcache") || c.Int("tokens_per_gb_kvcache") != 0 {
		t.Errorf("null tokens per GB: set %v, %d", c.IsSet("tokens_per_gb_kvcache"), c.Int("tokens_per_gb_kvcache"))
	}
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
	if _, err := loadBody(t, `{"seed":null}`); err == nil || !strings.Contains(err.Error(), "seed: wrong type null") {
		t.Errorf("null seed: %v", err)
	}
}

// Each attribute marks fields of the kind it is meant for, and the
// lists derived from them are what the rest of the program expects.
func TestFieldAttributes(t *testing.T) {
	var urls, objects, derived, lengths []string
	for _, f := range Fields {
		if f.URL {
			urls = append(urls, f.Key)
			if f.Kind != String || f.Exported {
				t.Errorf("%s: a URL setting is text and never exported", f.Key)
			}
		}
		if f.JSONObject {
			objects = append(objects, f.Key)
			if f.Kind != String {
				t.Errorf("%s: a JSON object is kept as text", f.Key)
			}
		}
		if f.Derived {
			derived = append(derived, f.Key)
		}
		if f.RunLength {
			lengths = append(lengths, f.Key)
			if f.Workload == "" || f.Kind != Float && f.Kind != Int {
				t.Errorf("%s: a run length is a workload's number of seconds", f.Key)
			}
		}
	}
	for _, c := range []struct {
		what string
		got  []string
		want string
	}{
		{"URL", urls, "engine_url,lmcache_url,metrics_url"},
		{"URLKeys", URLKeys, "engine_url,lmcache_url,metrics_url"},
		{"JSONObject", objects, "extra_body,ce_reference_extra_body"},
		{"Derived", derived, "tokens_per_gb_kvcache"},
		{"RunLength", lengths, "mrc_duration"},
	} {
		if got := strings.Join(c.got, ","); got != c.want {
			t.Errorf("%s: %s, want %s", c.what, got, c.want)
		}
	}
	// The config JSON's general keys are exactly the exported general
	// settings, each once.
	exported := map[string]bool{}
	for _, f := range Fields {
		if f.Exported && f.Workload == "" {
			exported[f.Key] = true
		}
	}
	for _, k := range exportOrder {
		if !exported[k] {
			t.Errorf("%s is in the export order but not an exported general setting", k)
		}
		delete(exported, k)
	}
	for k := range exported {
		t.Errorf("exported general setting %s is missing from the export order", k)
	}
}
