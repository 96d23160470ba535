package load

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/config"
)

func inf() float64 { return math.Inf(1) }

func cfg(t *testing.T, workload string, set map[string]any) *config.Config {
	t.Helper()
	c := config.Default()
	c.Set("workload", workload)
	for k, v := range set {
		if err := c.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func TestFromConfig(t *testing.T) {
	s, err := FromConfig(cfg(t, config.LongDocQA, nil))
	if err != nil || s.Timed() || s.Arrival != Poisson || s.MaxConcurrency != 0 || s.SLO != nil {
		t.Fatalf("defaults: %+v %v", s, err)
	}
	s, err = FromConfig(cfg(t, config.RandomPrefill, map[string]any{"request_rate": "12.5", "burstiness": 0.5}))
	if err != nil || s.Rate != 12.5 || s.Arrival != Gamma || s.Burstiness != 0.5 {
		t.Fatalf("--burstiness implies gamma: %+v %v", s, err)
	}
	bad := []struct {
		set  map[string]any
		flag string
	}{
		{map[string]any{"request_rate": "0"}, "--request-rate"},
		{map[string]any{"request_rate": "fast"}, "--request-rate"},
		{map[string]any{"arrival": "poisson", "burstiness": 2.0}, "--burstiness"},
		{map[string]any{"slo": "ttft=fast"}, "--slo"},
		{map[string]any{"slo": "latency=1s"}, "--slo"},
	}
	for _, b := range bad {
		if _, err := FromConfig(cfg(t, config.RandomPrefill, b.set)); err == nil || !strings.Contains(err.Error(), b.flag) {
			t.Errorf("%v: error %v, want one naming %s", b.set, err, b.flag)
		}
	}
	// multi-round-chat: --request-rate is --mrc-qps.
	s, err = FromConfig(cfg(t, config.MultiRoundChat, map[string]any{"mrc_qps": 3.0}))
	if err != nil || s.Rate != 3 || !s.SelfTimed || s.Arrival != Constant {
		t.Fatalf("mrc: %+v %v", s, err)
	}
	s, err = FromConfig(cfg(t, config.MultiRoundChat, map[string]any{"request_rate": "7", "arrival": "gamma", "burstiness": 2.0}))
	if err != nil || s.Rate != 7 || s.Arrival != Gamma || s.Burstiness != 2 {
		t.Fatalf("mrc with --request-rate: %+v %v", s, err)
	}
	if _, err := FromConfig(cfg(t, config.MultiRoundChat, map[string]any{"request_rate": "7", "mrc_qps": 3.0})); err == nil {
		t.Fatal("different --request-rate and --mrc-qps must be refused")
	}
}

func TestParseSLO(t *testing.T) {
	o, err := ParseSLO("ttft=500ms, itl=50ms,e2e=20s")
	if err != nil || o.TTFT != 500*time.Millisecond || o.TPOT != 50*time.Millisecond || o.E2E != 20*time.Second {
		t.Fatalf("%+v %v", o, err)
	}
	if o.String() != "ttft=500ms,tpot=50ms,e2e=20s" {
		t.Fatalf("String %q", o.String())
	}
	if o, err := ParseSLO(""); o != nil || err != nil {
		t.Fatalf("empty: %v %v", o, err)
	}
	for _, s := range []string{"ttft", "ttft=-1s", "ttft=0s", ",", "foo=1s"} {
		if _, err := ParseSLO(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}
