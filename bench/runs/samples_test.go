package runs

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs/runstest"
)

// The samples of a run: measured requests only, TPOT from latency and
// TTFT over the output tokens, per cache state, the hit ratio's pairs and
// the error rate; their percentiles are the summary's.
func TestReadSamples(t *testing.T) {
	dir := t.TempDir()
	lines := []string{
		`{"request_id":"w","phase":"warmup","successful":true,"ttft_s":9,"request_latency_s":9,"cache_state":"cold","prompt_tokens":100,"cached_tokens":0}`,
		`{"request_id":"a","phase":"measured","successful":true,"ttft_s":0.1,"request_latency_s":1.1,"completion_tokens":11,"cache_state":"cold","prompt_tokens":100,"cached_tokens":0,"itl_p50_ms":100}`,
		`{"request_id":"b","phase":"measured","successful":true,"ttft_s":0.02,"request_latency_s":0.52,"completion_tokens":6,"cache_state":"reused","prompt_tokens":100,"cached_tokens":80,"itl_p50_ms":90}`,
		`{"request_id":"c","phase":"measured","successful":true,"ttft_s":0.03,"request_latency_s":0.05,"completion_tokens":3,"decode_unmeasured":"one_read","cache_state":"unverified","prompt_tokens":100}`,
		`{"request_id":"d","phase":"measured","successful":false,"error":"http_503","request_latency_s":0.01,"cache_state":"unverified"}`,
		`{"request_id":"torn","phase":"meas`,
	}
	if err := os.WriteFile(filepath.Join(dir, record.RequestsFile), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSamples(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Measured != 4 || s.Failed != 1 || s.Corrupt != 1 {
		t.Fatalf("measured %d failed %d corrupt %d", s.Measured, s.Failed, s.Corrupt)
	}
	ttft, _ := LookupMetric("ttft_p50")
	tpot, _ := LookupMetric("tpot_p50")
	itl, _ := LookupMetric("itl_p50")
	e2el, _ := LookupMetric("e2el_p50")
	near := func(v *float64, want float64) bool { return v != nil && math.Abs(*v-want) < 1e-9 }
	for _, c := range []struct {
		m     Metric
		state string
		want  float64
	}{
		{ttft, "", 30}, {ttft, "cold", 100}, {ttft, "reused", 20},
		// (1100-100)/10 = 100, (520-20)/5 = 100; c's decode was one read
		{tpot, "", 100}, {itl, "", 95}, {e2el, "", 520}, {e2el, "reused", 520},
	} {
		if v := s.Value(c.m, c.state, nil); !near(v, c.want) {
			t.Errorf("%s %s = %v, want %v", c.m.Key, c.state, v, c.want)
		}
	}
	if x := s.latency(tpot, ""); len(x) != 2 {
		t.Errorf("tpot samples %v", x)
	}
	hit, _ := LookupMetric("hit_ratio")
	er, _ := LookupMetric("error_rate")
	if v := s.Value(hit, "", nil); !near(v, 80.0/200) {
		t.Errorf("hit ratio %v", v)
	}
	if v := s.Value(er, "", nil); !near(v, 0.25) {
		t.Errorf("error rate %v", v)
	}
	if v := s.Value(hit, "cold", nil); v != nil {
		t.Error("a hit ratio per cache state")
	}
	tp, _ := LookupMetric("output_throughput")
	if v := s.Value(tp, "", nil); v != nil {
		t.Error("a throughput without a summary")
	}
	// A folder without requests: nothing measured, every value n/a.
	empty, err := ReadSamples(context.Background(), t.TempDir())
	if err != nil || empty.Value(ttft, "", nil) != nil || empty.ErrorRate() != nil || empty.HitRatio() != nil {
		t.Errorf("empty folder: %+v %v", empty, err)
	}
}

// A run's percentiles from its samples are the summary's own figures.
func TestSamplesMatchSummary(t *testing.T) {
	d := runstest.Write(t, t.TempDir(), runstest.Spec{Requests: 97, ReusedEvery: 3, FailEvery: 11, JitterMs: 5, Summary: true})
	det, err := Load(d)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadSamples(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	res := det.Summary.Results
	for key, want := range map[string]*float64{"ttft_p50": res.P50TTFTms, "ttft_p90": res.P90TTFTms, "ttft_p99": res.P99TTFTms,
		"e2el_p50": res.P50RequestLatencyMs, "hit_ratio": det.Summary.Cache.HitRatio} {
		m, _ := LookupMetric(key)
		if got := s.Value(m, "", det.Summary); got == nil || math.Abs(*got-*want) > 1e-9 {
			t.Errorf("%s: %v, summary %v", key, got, *want)
		}
	}
	m, _ := LookupMetric("output_throughput")
	if got := s.Value(m, "", det.Summary); got == nil || *got != res.OutputThroughput {
		t.Errorf("output throughput %v, summary %v", got, res.OutputThroughput)
	}
}
