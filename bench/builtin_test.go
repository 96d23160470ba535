package bench

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/bench/workload"
	"github.com/kvbench/kvbench/config"
)

// The built-in engine listens on loopback only, serves the model asked
// for, and stops on Close.
func TestStartBuiltin(t *testing.T) {
	run, err := StartBuiltin("my-model", 0)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(run.URL())
	if err != nil || u.Hostname() != "127.0.0.1" {
		t.Fatalf("URL %q is not loopback", run.URL())
	}
	resp, err := http.Get(run.URL() + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"my-model"`) {
		t.Errorf("/v1/models does not list my-model: %s", body)
	}
	run.Close()
	if resp, err := http.Get(run.URL() + "/v1/models"); err == nil {
		resp.Body.Close()
		t.Error("the engine still answers after Close")
	}
}

// A run against the built-in engine judges its expectation against the
// engine's own cache (its GPU tier, and the CPU tier kv-tier-pressure
// gets), not against the budget the workload was sized to.
func TestPrepareBuiltinBudget(t *testing.T) {
	for _, c := range []struct {
		workload string
		volume   float64 // 0: not given
		lower    int
	}{{config.LongDocQA, 0, 0}, {config.LongDocQA, 20, 0}, {config.KVTierPressure, 0, 40000}} {
		cfg := config.Default()
		cfg.Set("workload", c.workload)
		cfg.Set("engine_url", BuiltinURL)
		cfg.Set("no_preflight", true)
		cfg.Set("model", "kvbench-sim")
		if c.volume > 0 {
			cfg.Set("kv_cache_volume", c.volume)
		}
		p, err := Prepare(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		p.Close()
		b := p.Budget
		if b.Tokens != 80000 || !b.Engine || b.LowerTokens != c.lower || b.Lower != (c.lower > 0) || b.What != "the built-in engine's GPU cache" || b.Size != "8 GB" {
			t.Errorf("%s, volume %g: budget %+v", c.workload, c.volume, b)
		}
	}
	// Any other engine: the configured budget (zero value here).
	cfg := config.Default()
	cfg.Set("workload", config.LongDocQA)
	cfg.Set("engine_url", "http://127.0.0.1:1")
	cfg.Set("no_preflight", true)
	cfg.Set("model", "m")
	cfg.Set("tokens_per_gb_kvcache", 1000)
	p, err := Prepare(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p.Budget != (workload.KVBudget{}) {
		t.Errorf("budget %+v for an engine given by URL", p.Budget)
	}
}
