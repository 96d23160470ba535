package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kvbench/kvbench/internal/textclean/cleantest"
)

// A run's name and model id are shown back as given (the run screen's
// header, the summary): from a flag, the environment, a YAML file, a
// config JSON or Set, they enter the config cleaned, on one line. Other
// strings of a config JSON are cleaned too (the explorer reads run
// folders' config.json back).
func TestLabelSettingsEnterCleaned(t *testing.T) {
	dir := t.TempDir()
	yaml := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(yaml, []byte("served_model_name: \"s\\e]0;t\\a\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(dir, "run.json")
	if err := os.WriteFile(js, []byte(`{"workload":"long-doc-qa","model":"`+cleantest.JSON+`","ce_prompts":"`+cleantest.JSON+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	RegisterFlags(fs)
	if err := fs.Parse([]string{"--name", cleantest.Text + "\nsecond line"}); err != nil {
		t.Fatal(err)
	}
	env := func(k string) (string, bool) {
		if k == EnvName("engine_url") {
			return "http://127.0.0.1:1", true
		}
		return "", false
	}
	c, err := Resolve(fs, Layers{File: yaml, Env: env, JSON: js})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"name", "model", "served_model_name", "ce_prompts"} {
		cleantest.Clean(t, key, c.String(key))
	}
	for _, key := range []string{"name", "model"} {
		cleantest.Check(t, key, c.String(key))
	}
	if got, want := c.String("name"), "evil\uFFFD]52;c;SE9TVElMRQ==\uFFFD\uFFFD]0;pwned\uFFFD\uFFFD[2J\uFFFD31m\uFFFD\uFFFD\uFFFDend second line"; got != want {
		t.Errorf("name = %q, want %q", got, want)
	}
	if got := c.String("served_model_name"); got != "s\uFFFD]0;t\uFFFD" {
		t.Errorf("served_model_name from YAML = %q", got)
	}

	env2 := func(k string) (string, bool) {
		if k == EnvName("model") {
			return "m\x1b[2J", true
		}
		return "", false
	}
	c, err = Resolve(pflag.NewFlagSet("run", pflag.ContinueOnError), Layers{File: yaml, Env: env2})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.String("model"); got != "m\uFFFD[2J" {
		t.Errorf("model from the environment = %q", got)
	}
	if err := c.Set("model", "engine\x9bid\n"); err != nil {
		t.Fatal(err)
	}
	if got := c.String("model"); got != "engine\uFFFDid " {
		t.Errorf("model by Set = %q", got)
	}
}
