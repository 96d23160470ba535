package runs_test

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
)

func loadPair(t *testing.T, a, b runstest.Spec) (*runs.Detail, *runs.Detail) {
	t.Helper()
	dir := t.TempDir()
	da, err := runs.Load(runstest.Write(t, dir, a))
	if err != nil {
		t.Fatal(err)
	}
	db, err := runs.Load(runstest.Write(t, dir, b))
	if err != nil {
		t.Fatal(err)
	}
	return da, db
}

func figureOf(c *runs.Comparison, key string) runs.Figure {
	for _, f := range c.Figures {
		if f.Key == key {
			return f
		}
	}
	return runs.Figure{}
}

func TestCompareDeltasAndDirections(t *testing.T) {
	// B: faster TTFT (50 vs 100 ms base), more reuse, more failures,
	// a different seed.
	a, b := loadPair(t,
		runstest.Spec{Name: "a", Started: t0, Requests: 20, BaseTTFTms: 100, Summary: true, CPUSeconds: 2},
		runstest.Spec{Name: "b", Started: t0.Add(time.Minute), Requests: 20, BaseTTFTms: 50, ReusedEvery: 2, FailEvery: 10,
			Summary: true, CPUSeconds: 2, Config: map[string]any{"seed": 7}, EngineURL: "http://gpu:9000/v1"})
	c := runs.Compare(a, b)

	ttft := figureOf(c, "results.mean_ttft_ms")
	if ttft.Direction != runs.Lower || ttft.Verdict != runs.Better {
		t.Errorf("mean TTFT: %+v", ttft)
	}
	want := (*ttft.B - *ttft.A) / *ttft.A
	if ttft.Delta == nil || math.Abs(*ttft.Delta-want) > 1e-12 || *ttft.Delta >= 0 {
		t.Errorf("mean TTFT delta %v, want %v", ttft.Delta, want)
	}
	if f := figureOf(c, "results.failed_requests"); f.Verdict != runs.Worse || f.Delta != nil {
		t.Errorf("failed: %+v (0 -> 2 has no relative delta)", f)
	} else if runs.FormatDelta(f) != "new" {
		t.Errorf("failed delta text %q", runs.FormatDelta(f))
	}
	if f := figureOf(c, "cache.hit_ratio"); f.Direction != runs.Higher || f.Verdict != runs.Better {
		t.Errorf("hit ratio: %+v", f)
	}
	if f := figureOf(c, "results.total_requests"); f.Verdict != runs.Same || runs.FormatDelta(f) != "0.0%" {
		t.Errorf("total: %+v", f)
	}
	if f := figureOf(c, "cache.reused"); f.Direction != runs.Neutral || f.Verdict != runs.Differs {
		t.Errorf("reused: %+v", f)
	}
	if f := figureOf(c, "client.cpu_seconds"); f.Verdict != runs.Same {
		t.Errorf("cpu: %+v", f)
	}
	// Output throughput: B fails some requests, so fewer tokens over a
	// similar span: worse.
	if f := figureOf(c, "results.output_throughput"); f.Direction != runs.Higher || f.Verdict != runs.Worse {
		t.Errorf("output throughput: %+v", f)
	}
	// ITL is null on both sides (no gaps in the generated record).
	if f := figureOf(c, "latency.itl_ms.mean"); f.A != nil || f.Verdict != runs.Same || runs.FormatDelta(f) != "-" {
		t.Errorf("itl: %+v", f)
	}
	// An unverified reason present in B only ("error" of the failures).
	if f := figureOf(c, "cache.unverified_reasons.error"); f.B == nil || *f.B != 2 || *f.A != 0 {
		t.Errorf("reason row: %+v", f)
	}

	keys := map[string]runs.ConfigDiff{}
	for _, d := range c.Config {
		keys[d.Key] = d
	}
	if d, ok := keys["seed"]; !ok || d.A != "42" || d.B != "7" || keys["engine_url"].B != "http://gpu:9000/v1" {
		t.Errorf("seed diff: %+v", keys)
	}
	if _, ok := keys["engine_url"]; !ok {
		t.Errorf("engine_url diff missing: %+v", c.Config)
	}
	if _, ok := keys["output_dir"]; ok {
		t.Error("output_dir is the run folder itself and must not be listed")
	}
	if _, ok := keys["model"]; ok {
		t.Error("model is the same and must not be listed")
	}
}

func TestCompareText(t *testing.T) {
	a, b := loadPair(t,
		runstest.Spec{Name: "a", Started: t0, Requests: 10, BaseTTFTms: 100, Summary: true},
		runstest.Spec{Name: "b", Started: t0.Add(time.Minute), Requests: 10, BaseTTFTms: 200})
	var buf bytes.Buffer
	if err := runs.Compare(a, b).WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"A: " + a.Run.ID + "\n",
		"B: " + b.Run.ID + " (incomplete)\n",
		"\nResults\n", "\nCache\n", "\nLatency\n", "\nClient\n", "\nConfig differences\n",
		"worse",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Error("plain text carries an escape sequence")
	}
	// Mean TTFT row: label left, numbers right, +100%-ish delta.
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "  Mean TTFT (ms)") {
			if !strings.Contains(l, "worse") || !strings.Contains(l, "+") {
				t.Errorf("mean TTFT row: %q", l)
			}
		}
	}
}

// TestCompareMarksUndeliveredLoad: a run that did not deliver its load
// is marked next to its id, with its reasons, and the load figures are
// compared.
func TestCompareMarksUndeliveredLoad(t *testing.T) {
	target, got, ok := 4.0, 0.5, 3.9
	reason := "12 of 40 requests were held back by the workload's design"
	a, b := loadPair(t,
		runstest.Spec{Name: "a", Started: t0, Requests: 10, Summary: true,
			Load: &load.Block{TargetRate: &target, AchievedRate: &ok, Delivered: true, DegradedReasons: []string{}}},
		runstest.Spec{Name: "b", Started: t0.Add(time.Minute), Requests: 10, Summary: true,
			Load: &load.Block{TargetRate: &target, AchievedRate: &got, DegradedReasons: []string{reason}}})
	var buf bytes.Buffer
	if err := runs.Compare(a, b).WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"A: " + a.Run.ID + "\n",
		"B: " + b.Run.ID + " (load not delivered)\n",
		"B did not deliver its load: " + reason,
		"\nLoad\n", "Achieved rate (req/s)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "A did not deliver") {
		t.Errorf("A delivered:\n%s", out)
	}
}

// A run where every request failed has no TTFT: compare shows n/a, not a
// delta or "new", and no verdict.
func TestCompareUndefinedIsNA(t *testing.T) {
	a, b := loadPair(t,
		runstest.Spec{Name: "a", Started: t0, Requests: 4, FailEvery: 1, Summary: true},
		runstest.Spec{Name: "b", Started: t0.Add(time.Minute), Requests: 4, Summary: true})
	c := runs.Compare(a, b)
	for _, key := range []string{"results.mean_ttft_ms", "results.p99_ttft_ms", "results.mean_request_latency_ms"} {
		f := figureOf(c, key)
		if f.A != nil || f.B == nil || f.Verdict != runs.Unknown {
			t.Errorf("%s: A %v B %v verdict %v, want A null and no verdict", key, f.A, f.B, f.Verdict)
		}
		if v, d := runs.FormatValue(f.A, f.Unit), runs.FormatDelta(f); v != "n/a" || d != "n/a" {
			t.Errorf("%s: value %q delta %q, want n/a", key, v, d)
		}
	}
	var buf bytes.Buffer
	if err := c.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		if strings.Contains(line, "Mean TTFT") && (strings.Contains(line, "new") || strings.Contains(line, "worse") || strings.Contains(line, "better")) {
			t.Errorf("undefined TTFT judged: %q", line)
		}
	}
}
