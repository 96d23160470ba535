package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func newFlags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	RegisterFlags(fs)
	fs.String("config", "", "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

func noEnv(string) (string, bool) { return "", false }

func TestMissingMessages(t *testing.T) {
	c, err := Resolve(newFlags(t), Layers{Env: noEnv, File: os.DevNull + "-absent"})
	if err == nil {
		_ = c
	}
	c, err = Resolve(newFlags(t), Layers{Env: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	got := MissingError(c.Missing(), "--no-interactive").Error()
	want := "missing required arguments: --engine-url, --workload, --tokens-per-gb-kvcache or --lmcache-url; provide them or remove --no-interactive for guided setup"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	c, _ = Resolve(newFlags(t, "--engine-url", "x", "--workload", "long-doc-qa", "--lmcache-url", "http://l"), Layers{Env: noEnv})
	if m := c.Missing(); len(m) != 0 {
		t.Fatalf("lmcache-url satisfies tokens-per-gb: %v", m)
	}
	c, _ = Resolve(newFlags(t, "--engine-url", "x", "--workload", "cache-probe"), Layers{Env: noEnv})
	if m := c.Missing(); len(m) != 0 {
		t.Fatalf("cache-probe needs no tokens-per-gb: %v", m)
	}
	c, _ = Resolve(newFlags(t, "--engine-url", "builtin", "--workload", "long-doc-qa"), Layers{Env: noEnv})
	if m := c.Missing(); len(m) != 0 {
		t.Fatalf("builtin reports its own tokens-per-gb: %v", m)
	}
	got = MissingError([]string{"--workload"}, "--export-config").Error()
	if !strings.Contains(got, "remove --export-config") {
		t.Fatalf("trigger flag not named: %q", got)
	}
}

func TestSetFlagsWinOverConfigFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bench_config.json")
	os.WriteFile(path, []byte(`{"workload": "long-doc-qa", "model": "m1", "seed": 7, "kv_cache_volume": 5, "ldqa_document_length": 3000, "ldqa_query_per_document": 4}`), 0o644)
	// --seed 42 equals the default but is set: it must still win.
	c, err := Resolve(newFlags(t, "--seed", "42", "--ldqa-document-length", "1234"), Layers{Env: noEnv, JSON: path})
	if err != nil {
		t.Fatal(err)
	}
	if c.Int("seed") != 42 || c.Int("ldqa_document_length") != 1234 {
		t.Fatalf("set flags must win: seed %d len %d", c.Int("seed"), c.Int("ldqa_document_length"))
	}
	if c.Int("ldqa_query_per_document") != 4 || c.String("model") != "m1" || c.Float("kv_cache_volume") != 5 {
		t.Fatalf("unset flags must keep the file's values")
	}
}

func TestEnvLayerBelowFlags(t *testing.T) {
	env := func(k string) (string, bool) {
		switch k {
		case "KVBENCH_SEED":
			return "9", true
		case "KVBENCH_LDQA_DOCUMENT_LENGTH":
			return "777", true
		}
		return "", false
	}
	c, err := Resolve(newFlags(t, "--seed", "3"), Layers{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if c.Int("seed") != 3 || c.Int("ldqa_document_length") != 777 {
		t.Fatalf("seed %d len %d", c.Int("seed"), c.Int("ldqa_document_length"))
	}
	_, err = Resolve(newFlags(t), Layers{Env: func(k string) (string, bool) {
		if k == "KVBENCH_SEED" {
			return "x", true
		}
		return "", false
	}})
	if err == nil || !strings.Contains(err.Error(), "KVBENCH_SEED") {
		t.Fatalf("bad env value must name the variable: %v", err)
	}
}

func TestYAMLConfigFileLayer(t *testing.T) {
	dir := t.TempDir()
	y := filepath.Join(dir, "config.yaml")
	os.WriteFile(y, []byte("seed: 11\nldqa_document_length: 500\nrequest_timeout: 30s\n"), 0o644)
	env := func(k string) (string, bool) {
		if k == "KVBENCH_SEED" {
			return "12", true
		}
		return "", false
	}
	c, err := Resolve(newFlags(t), Layers{Env: env, File: y})
	if err != nil {
		t.Fatal(err)
	}
	if c.Int("seed") != 12 || c.Int("ldqa_document_length") != 500 || c.Duration("request_timeout").String() != "30s" {
		t.Fatalf("yaml < env: seed %d len %d timeout %s", c.Int("seed"), c.Int("ldqa_document_length"), c.Duration("request_timeout"))
	}
}

func TestExportHasNoURLsAndRoundTrips(t *testing.T) {
	c, _ := Resolve(newFlags(t, "--engine-url", "http://secret-host:8000", "--lmcache-url", "http://l:9000",
		"--workload", "long-doc-qa", "--model", "m", "--api-key-env", "MY_KEY", "--ldqa-document-length", "2000"), Layers{Env: noEnv})
	out := c.ExportJSON()
	s := string(out)
	for _, bad := range []string{"engine_url", "lmcache_url", "secret-host", "api_key", "MY_KEY"} {
		if strings.Contains(s, bad) {
			t.Fatalf("export contains %q:\n%s", bad, s)
		}
	}
	if !strings.HasSuffix(s, "}\n") || !strings.HasPrefix(s, "{\n  \"workload\": \"long-doc-qa\",\n  \"model\": \"m\",") {
		t.Fatalf("format:\n%s", s)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	if m["ldqa_document_length"].(float64) != 2000 || m["ldqa_shuffle_policy"] != "random" {
		t.Fatalf("workload keys missing: %v", m)
	}
	if _, ok := m["mrc_qps"]; ok {
		t.Fatal("other workloads' keys must not be exported")
	}
	path := filepath.Join(t.TempDir(), "c.json")
	os.WriteFile(path, out, 0o644)
	d := Default()
	if err := d.LoadJSON(path); err != nil {
		t.Fatal(err)
	}
	if d.Int("ldqa_document_length") != 2000 || d.String("model") != "m" {
		t.Fatal("round trip lost values")
	}
}

func TestLoadJSONErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	cases := map[string]string{
		write("a.json", `not json`):                                         "not a JSON object",
		write("b.json", `{"workload": "long-doc-qa", "bogus": 1, "zz": 2}`): "unknown key(s): bogus, zz",
		write("c.json", `{"seed": "42"}`):                                   "seed: wrong type string",
		write("d.json", `{"ldqa_document_length": 1.5}`):                    "ldqa_document_length: wrong type",
		write("e.json", `{"ignore_eos": 1}`):                                "ignore_eos: wrong type",
		filepath.Join(dir, "absent.json"):                                   "no such file",
	}
	for path, want := range cases {
		err := Default().LoadJSON(path)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: got %v, want %q naming the file", path, err, want)
		}
	}
}

func TestLoadLMCacheExport(t *testing.T) {
	// An `lmcache bench engine` export: its own general keys beside ours.
	p := filepath.Join(t.TempDir(), "bench_config.json")
	os.WriteFile(p, []byte(`{
  "engine_url": "http://localhost:8000",
  "workload": "long-doc-qa",
  "model": "meta-llama/Llama-3.1-8B-Instruct",
  "kv_cache_volume_gb": 50.0,
  "tokens_per_gb_kvcache": 6000,
  "seed": 42,
  "output_dir": ".",
  "export_csv": true,
  "export_json": true,
  "quiet": false,
  "ldqa_document_length": 10000,
  "ldqa_query_per_document": 2,
  "ldqa_shuffle_policy": "random",
  "ldqa_num_inflight_requests": 3
}`), 0o644)
	c := Default()
	if err := c.LoadJSON(p); err != nil {
		t.Fatal(err)
	}
	if c.Float("kv_cache_volume") != 50 || c.Int("tokens_per_gb_kvcache") != 6000 || c.String("engine_url") != "http://localhost:8000" {
		t.Fatalf("values: vol %v tpg %d url %q", c.Float("kv_cache_volume"), c.Int("tokens_per_gb_kvcache"), c.String("engine_url"))
	}
}

// TestEveryNumberHasARange: no numeric setting is left unbounded, so no
// value can reach an allocation unchecked.
func TestEveryNumberHasARange(t *testing.T) {
	for _, f := range Fields {
		switch f.Kind {
		case Int, Float, Duration, IntList:
			if !f.hasMin || !f.hasMax {
				t.Errorf("--%s has no range (%q): give it withMin and withMax", f.Flag, f.Range())
			}
		}
	}
}

func TestValidateNamesFlagAndRange(t *testing.T) {
	cases := map[string]string{
		"--ldqa-document-length=0":                    "--ldqa-document-length must be in (0, 10000000] (got 0)",
		"--psf-prefix-ratio=1":                        "--psf-prefix-ratio must be in (0, 1) (got 1)",
		"--cp-streams=513":                            "--cp-streams must be in [1, 512] (got 513)",
		"--kv-cache-volume=-1":                        "--kv-cache-volume must be in (0, 1000000] (got -1)",
		"--kv-cache-volume=1e300":                     "--kv-cache-volume must be in (0, 1000000] (got 1e+300)",
		"--rp-num-requests=100000000000":              "--rp-num-requests must be in [1, 1000000] (got 100000000000)",
		"--rp-request-length=2000000000":              "--rp-request-length must be in (0, 10000000] (got 2000000000)",
		"--ldp-num-permutations=1000000000":           "--ldp-num-permutations must be in [1, 1000000] (got 1000000000)",
		"--tokens-per-gb-kvcache=9223372036854775807": "--tokens-per-gb-kvcache must be in [0, 1073741824] (got 9223372036854775807)",
		"--mrc-duration=1e12":                         "--mrc-duration must be in (0, 10000000] (got 1e+12)",
		"--request-timeout=100000h":                   "--request-timeout must be in (0s, 24h0m0s] (got 100000h0m0s)",
		"--seed=9007199254740993":                     "--seed must be in [-9007199254740992, 9007199254740992]",
		"--ldqa-shuffle-policy=abc":                   `--ldqa-shuffle-policy must be one of random, tile (got "abc")`,
		"--workload=nope":                             `--workload must be one of`,
		"--extra-body=[1]":                            "--extra-body: must be a JSON object",
		"--tr-speedup=1e-300":                         "--tr-speedup must be in [0.001, 1000000] (got 1e-300)",
		"--tr-speedup=1e9":                            "--tr-speedup must be in [0.001, 1000000] (got 1e+09)",
		"--tr-file=/":                                 "--tr-file /: not a regular file (a directory)",
	}
	for arg, want := range cases {
		wl := "long-doc-qa"
		switch {
		case strings.HasPrefix(arg, "--psf"):
			wl = "prefix-suffix-tuner"
		case strings.HasPrefix(arg, "--cp"):
			wl = "cache-probe"
		case strings.HasPrefix(arg, "--rp"):
			wl = "random-prefill"
		case strings.HasPrefix(arg, "--ldp"):
			wl = "long-doc-permutator"
		case strings.HasPrefix(arg, "--mrc"):
			wl = "multi-round-chat"
		case strings.HasPrefix(arg, "--tr"):
			wl = "trace-replay"
		}
		args := []string{"--workload", wl, arg}
		if strings.HasPrefix(arg, "--workload") {
			args = []string{arg}
		}
		c, err := Resolve(newFlags(t, args...), Layers{Env: noEnv})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Validate()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", arg, err, want)
		}
	}
}

// TestConfigJSONIsStrict: exactly one object, nothing after it, no key
// twice; each error names the file and what is wrong.
func TestConfigJSONIsStrict(t *testing.T) {
	cases := map[string]string{
		`{"workload":"random-prefill"}{"seed":1}`:         "trailing content after the JSON object",
		`{"workload":"random-prefill"} x`:                 "trailing content after the JSON object",
		`{"seed":1,"workload":"random-prefill","seed":2}`: `duplicate key "seed"`,
		`{"seed":1,"extra":{"a":1,"a":2}}`:                `duplicate key "extra.a"`,
		`[{"seed":1}]`:                                    "not a JSON object",
		`null`:                                            "not a JSON object",
		`{"seed":1`:                                       "not a JSON object",
		`{"workload":"random-prefill","rp_num_requests":1e300}`: "rp_num_requests",
	}
	dir := t.TempDir()
	for body, want := range cases {
		path := filepath.Join(dir, "c.json")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		err := Default().LoadJSON(path)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: got %v, want an error naming %s and %q", body, err, path, want)
		}
	}
	ok := filepath.Join(dir, "ok.json")
	os.WriteFile(ok, []byte("{\"workload\":\"random-prefill\",\"seed\":7}\n\n"), 0o644)
	c := Default()
	if err := c.LoadJSON(ok); err != nil || c.Int("seed") != 7 {
		t.Fatalf("a valid config with trailing white space: %v", err)
	}
}
