package overload

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

func f64(v float64) *float64 { return &v }

// TestJudge: each rule with figures just inside and just past its
// threshold, and what never is a reason.
func TestJudge(t *testing.T) {
	quiet := func() Figures {
		return Figures{TimingErrorP99Ms: f64(0.4), TimingErrorMaxMs: f64(3), TTFTP50Ms: f64(8), Cores: 1,
			DispatchLagLimit: 10, MachineBusyMax: f64(40)}
	}
	cases := []struct {
		name    string
		edit    func(*Figures)
		reasons []string // substrings, one per reason, in order; none: not overloaded
		note    string
	}{
		{name: "quiet run", edit: func(*Figures) {}},
		{name: "busy machine alone is a note", edit: func(f *Figures) { f.MachineBusyMax = f64(100) },
			note: "machine busy; timing error p99 0.40 ms"},
		{name: "95% busy is no note", edit: func(f *Figures) { f.MachineBusyMax = f64(95) }},
		{name: "timing error at the 2 ms floor", edit: func(f *Figures) { f.TimingErrorP99Ms = f64(2) }},
		{name: "timing error past the 2 ms floor", edit: func(f *Figures) { f.TimingErrorP99Ms = f64(2.5) },
			reasons: []string{"timing error p99 2.50 ms > 2.00 ms allowed (max(2 ms, 5% of TTFT p50 8.00 ms))"}},
		{name: "timing error within 5% of a slow TTFT", edit: func(f *Figures) { f.TimingErrorP99Ms, f.TTFTP50Ms = f64(9.9), f64(200) }},
		{name: "timing error past 5% of a slow TTFT", edit: func(f *Figures) { f.TimingErrorP99Ms, f.TTFTP50Ms = f64(12), f64(200) },
			reasons: []string{"timing error p99 12.0 ms > 10.0 ms allowed"}},
		{name: "no TTFT: the floor", edit: func(f *Figures) { f.TimingErrorP99Ms, f.TTFTP50Ms = f64(2.1), nil },
			reasons: []string{"timing error p99 2.10 ms > 2.00 ms allowed (max(2 ms, 5% of TTFT p50 unknown))"}},
		{name: "TTFT 0 (no success): the floor", edit: func(f *Figures) { f.TimingErrorP99Ms, f.TTFTP50Ms = f64(2.1), f64(0) },
			reasons: []string{"timing error p99 2.10 ms"}},
		{name: "live, before the first token: not judged", edit: func(f *Figures) { f.TimingErrorP99Ms, f.TTFTPending = f64(50), true }},
		{name: "no timing figure", edit: func(f *Figures) { f.TimingErrorP99Ms = nil }},
		{name: "own CPU busy under 3 s", edit: func(f *Figures) { f.OwnCPUBusyFor, f.OwnCPUBusyMaxPct = 2900*time.Millisecond, 99 }},
		{name: "own CPU busy 3 s", edit: func(f *Figures) { f.OwnCPUBusyFor, f.OwnCPUBusyMaxPct = 3*time.Second, 97 },
			reasons: []string{"kvbench CPU above 90% of 1 core(s) for 3 s (up to 97%)"}},
		{name: "p99 dispatch lag at the limit", edit: func(f *Figures) { f.DispatchLagP99Ms = f64(10) }},
		{name: "p99 dispatch lag past the limit", edit: func(f *Figures) { f.DispatchLagP99Ms = f64(12.5) },
			reasons: []string{"p99 dispatch lag 12.5 ms > 10.0 ms allowed (max(10 ms, 10% of the mean gap))"}},
		{name: "p99 dispatch lag within 10% of a long gap", edit: func(f *Figures) { f.DispatchLagP99Ms, f.DispatchLagLimit = f64(40), 50 }},
		{name: "every rule, machine busy: reasons, no note", edit: func(f *Figures) {
			f.TimingErrorP99Ms, f.OwnCPUBusyFor, f.OwnCPUBusyMaxPct, f.DispatchLagP99Ms, f.MachineBusyMax = f64(30), 5*time.Second, 100, f64(80), f64(100)
		}, reasons: []string{"timing error p99 30.0 ms", "kvbench CPU above 90% of 1 core(s) for 5 s", "p99 dispatch lag 80.0 ms"}},
	}
	for _, c := range cases {
		f := quiet()
		c.edit(&f)
		r := Judge(f)
		if r.Reasons == nil {
			t.Errorf("%s: reasons must be a list, never nil", c.name)
		}
		if r.Overloaded != (len(c.reasons) > 0) || len(r.Reasons) != len(c.reasons) {
			t.Errorf("%s: overloaded %v, reasons %q; want %q", c.name, r.Overloaded, r.Reasons, c.reasons)
			continue
		}
		for i, want := range c.reasons {
			if !strings.Contains(r.Reasons[i], want) {
				t.Errorf("%s: reason %d %q, want it to contain %q", c.name, i, r.Reasons[i], want)
			}
		}
		if r.Note != c.note {
			t.Errorf("%s: note %q, want %q", c.name, r.Note, c.note)
		}
		if r.TimingErrorP99Ms != f.TimingErrorP99Ms || r.MachineBusyMax != f.MachineBusyMax {
			t.Errorf("%s: the figures must be passed on", c.name)
		}
	}
}

// TestWarningSaysHowMuch: the warning names the inflation, the timing
// error p99 and max, before the reasons.
func TestWarningSaysHowMuch(t *testing.T) {
	r := Judge(Figures{TimingErrorP99Ms: f64(7.2), TimingErrorMaxMs: f64(41), TTFTP50Ms: f64(8), Cores: 1, DispatchLagLimit: 10})
	want := "client overloaded, latencies may be inflated by up to 7.20 ms (timing error p99; max 41.0 ms): timing error p99 7.20 ms > 2.00 ms allowed"
	if w := r.Warning(); !strings.HasPrefix(w, want) {
		t.Fatalf("warning %q, want it to start with %q", w, want)
	}
	if w := Judge(Figures{TimingErrorP99Ms: f64(0.3), DispatchLagLimit: 10}).Warning(); w != "" {
		t.Fatalf("a run on time has no warning, got %q", w)
	}
}

// feed drives a detector with one reading a second from t0.
type feed struct {
	d           *Detector
	t           time.Time
	cpu         time.Duration
	busy, total uint64
	measuring   bool
}

func newFeed(cores int) *feed {
	f := &feed{d: New(cores), t: time.Unix(1000, 0)}
	f.d.Observe(f.reading(), false)
	return f
}

func (f *feed) reading() Reading {
	return Reading{At: f.t, ProcessCPU: f.cpu, MachineBusy: f.busy, MachineTotal: f.total, MachineOK: true}
}

// second advances one second with the given process CPU share (of one
// core) and machine busy share.
func (f *feed) second(cpuShare, machineBusy float64) Figures {
	f.t = f.t.Add(time.Second)
	f.cpu += time.Duration(cpuShare * float64(time.Second))
	f.busy += uint64(machineBusy * 100)
	f.total += 100
	f.d.Observe(f.reading(), f.measuring)
	return f.d.Figures(TimingFigures{}, nil, 10)
}

func TestOwnCPUMustStayHighThreeSeconds(t *testing.T) {
	f := newFeed(2)
	f.second(1.9, 0.5)
	f.second(1.9, 0.5)
	f.second(1.7, 0.5) // 85% of 2 cores: the streak breaks
	f.second(1.9, 0.5)
	if fig := f.second(1.9, 0.5); fig.OwnCPUBusyFor != 2*time.Second || Judge(fig).Overloaded {
		t.Fatalf("2 s at 95%%: %v, %q", fig.OwnCPUBusyFor, Judge(fig).Reasons)
	}
	fig := f.second(1.96, 0.5)
	r := Judge(fig)
	if len(r.Reasons) != 1 || r.Reasons[0] != "kvbench CPU above 90% of 2 core(s) for 3 s (up to 98%)" {
		t.Fatalf("3 s at 95-98%%: %q", r.Reasons)
	}
	if fig.CPUPercent != 196 {
		t.Fatalf("last CPU %v%% of one core, want 196", fig.CPUPercent)
	}
	// The longest streak is kept once it ends.
	if fig := f.second(0.1, 0.5); fig.OwnCPUBusyFor != 3*time.Second {
		t.Fatalf("streak forgotten: %v", fig.OwnCPUBusyFor)
	}
}

// TestMeasuredPhaseStartsAfresh: the warmup's busy seconds and machine
// figure do not count once the measured phase begins.
func TestMeasuredPhaseStartsAfresh(t *testing.T) {
	f := newFeed(1)
	for range 4 {
		f.second(1, 0.99)
	}
	if fig := f.second(1, 0.99); fig.OwnCPUBusyFor != 5*time.Second || *fig.MachineBusyMax != 99 {
		t.Fatalf("warmup figures: %+v", fig)
	}
	f.measuring = true
	fig := f.second(0.2, 0.3)
	if fig.OwnCPUBusyFor != 0 || fig.MachineBusyMax == nil || *fig.MachineBusyMax != 30 {
		t.Fatalf("measured figures: busy for %v, machine %v", fig.OwnCPUBusyFor, fig.MachineBusyMax)
	}
}

func TestNoMachineFigureWithoutProcStat(t *testing.T) {
	d := New(1)
	t0 := time.Unix(0, 0)
	d.Observe(Reading{At: t0}, true)
	d.Observe(Reading{At: t0.Add(time.Second), ProcessCPU: time.Second / 10}, true)
	fig := d.Figures(TimingFigures{}, nil, 10)
	if fig.MachineBusyMax != nil || fig.TimingErrorP99Ms != nil || Judge(fig).Overloaded || Judge(fig).Note != "" {
		t.Fatalf("unknown figures must be nil: %+v", fig)
	}
}

func TestParseCPULine(t *testing.T) {
	busy, total, ok := parseCPULine("cpu  100 5 50 800 40 3 2 0 7 0")
	if !ok || total != 1000 || busy != 160 {
		t.Fatalf("busy %d total %d ok %v", busy, total, ok)
	}
	if _, _, ok := parseCPULine("intr 1 2 3"); ok {
		t.Fatal("not a cpu line")
	}
}

func TestSystemProbeReadsSomething(t *testing.T) {
	p := SystemProbe(func() time.Duration { return time.Second })
	r := p(time.Now())
	if r.ProcessCPU != time.Second {
		t.Fatalf("system probe: %+v", r)
	}
	if _, err := os.Stat("/proc/stat"); err == nil && !r.MachineOK {
		t.Fatal("/proc/stat exists but was not read")
	}
	if h := RuntimeSched()(); h == nil || len(h.Counts) == 0 || len(h.Buckets) != len(h.Counts)+1 {
		t.Fatalf("runtime scheduler histogram: %+v", h)
	}
}

func TestHistogram(t *testing.T) {
	var h Histogram
	if _, ok := h.Quantile(99); ok {
		t.Fatal("an empty histogram has no quantile")
	}
	if _, ok := h.Max(); ok {
		t.Fatal("an empty histogram has no max")
	}
	for i := 1; i <= 1000; i++ {
		h.Add(float64(i) / 100) // 0.01 .. 10 ms
	}
	h.Add(-1)         // counts as 0
	h.Add(math.NaN()) // counts as 0
	if h.Count() != 1002 {
		t.Fatalf("count %d", h.Count())
	}
	for _, c := range []struct{ p, want float64 }{{50, 4.99}, {99, 9.91}, {100, 10}} {
		got, _ := h.Quantile(c.p)
		// Within one bucket above the exact nearest-rank value.
		if got < c.want || got > c.want*math.Exp2(1.0/histPerOctave) {
			t.Errorf("p%g = %v, want %v to one bucket above", c.p, got, c.want)
		}
	}
	if m, _ := h.Max(); m != 10 {
		t.Fatalf("max %v", m)
	}
	var z Histogram
	z.Add(0)
	if q, _ := z.Quantile(99); q != 0 {
		t.Fatalf("all zeros: p99 %v", q)
	}
	var huge Histogram
	huge.Add(1e9) // 11 days: the open bucket, capped at the max
	if q, _ := huge.Quantile(50); q != 1e9 {
		t.Fatalf("open bucket: %v", q)
	}
}
