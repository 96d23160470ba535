package overload

import (
	"math"
	"os"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

// hist is a cumulative histogram with buckets of 1 ms up to 100 ms.
func hist(counts map[int]uint64) *metrics.Float64Histogram {
	h := &metrics.Float64Histogram{Counts: make([]uint64, 101), Buckets: make([]float64, 102)}
	for i := range h.Buckets {
		h.Buckets[i] = float64(i) / 1000
	}
	h.Buckets[101] = math.Inf(1)
	for ms, n := range counts {
		h.Counts[ms] = n
	}
	return h
}

// feed drives a detector with one reading a second from t0.
type feed struct {
	d           *Detector
	t           time.Time
	cpu         time.Duration
	busy, total uint64
	sched       map[int]uint64
}

func newFeed(cores int) *feed {
	f := &feed{d: New(cores), t: time.Unix(1000, 0), sched: map[int]uint64{}}
	f.d.Observe(f.reading())
	return f
}

func (f *feed) reading() Reading {
	return Reading{At: f.t, Sched: hist(f.sched), ProcessCPU: f.cpu, MachineBusy: f.busy, MachineTotal: f.total, MachineOK: true}
}

// second advances one second with the given process CPU share, machine
// busy share and scheduler latencies (ms -> count) added.
func (f *feed) second(cpuShare, machineBusy float64, lat map[int]uint64) []string {
	f.t = f.t.Add(time.Second)
	f.cpu += time.Duration(cpuShare * float64(time.Second))
	f.busy += uint64(machineBusy * 100)
	f.total += 100
	for ms, n := range lat {
		f.sched[ms] += n
	}
	return f.d.Observe(f.reading())
}

func TestQuietRunIsNotOverloaded(t *testing.T) {
	f := newFeed(2)
	for range 10 {
		if fired := f.second(0.5, 0.6, map[int]uint64{0: 1000, 1: 50, 3: 5}); fired != nil {
			t.Fatalf("fired %q", fired)
		}
	}
	r := f.d.Result()
	if r.Overloaded || len(r.Reasons) != 0 || r.Reasons == nil {
		t.Fatalf("quiet run: %+v", r)
	}
	if r.SchedP99Ms == nil || *r.SchedP99Ms != 2 || r.MachineBusyMax == nil || *r.MachineBusyMax != 60 || r.CPUPercent != 50 {
		t.Fatalf("figures: sched %v machine %v cpu %v", r.SchedP99Ms, r.MachineBusyMax, r.CPUPercent)
	}
}

func TestSchedulerLatencyFires(t *testing.T) {
	f := newFeed(1)
	// 2% of the wakeups waited 40 ms: p99 is in the 40 ms bucket.
	fired := f.second(0.3, 0.3, map[int]uint64{0: 980, 40: 20})
	if len(fired) != 1 || !strings.Contains(fired[0], "scheduler latency p99 41.0 ms > 5 ms") {
		t.Fatalf("fired %q", fired)
	}
	// The same reason does not fire twice; the worst value is kept.
	if fired := f.second(0.3, 0.3, map[int]uint64{0: 900, 80: 100}); fired != nil {
		t.Fatalf("fired again: %q", fired)
	}
	r := f.d.Result()
	if !r.Overloaded || len(r.Reasons) != 1 || !strings.Contains(r.Reasons[0], "81.0 ms") || *r.SchedP99Ms != 81 {
		t.Fatalf("result %+v", r)
	}
	// 1% at 40 ms is the 99th percentile's edge: p99 stays below.
	g := newFeed(1)
	if fired := g.second(0.3, 0.3, map[int]uint64{0: 990, 40: 10}); fired != nil {
		t.Fatalf("p99 at the edge fired %q", fired)
	}
}

func TestOwnCPUFiresAgainstUsableCores(t *testing.T) {
	f := newFeed(2)
	if fired := f.second(1.6, 0.5, nil); fired != nil {
		t.Fatalf("80%% of 2 cores fired %q", fired)
	}
	fired := f.second(1.8, 0.5, nil)
	if len(fired) != 1 || !strings.Contains(fired[0], "kvbench CPU 90% of 2 core(s) > 85%") {
		t.Fatalf("fired %q", fired)
	}
}

func TestMachineBusyMustLastThreeSeconds(t *testing.T) {
	f := newFeed(4)
	f.second(0.1, 0.99, nil)
	f.second(0.1, 0.99, nil)
	f.second(0.1, 0.5, nil) // the streak breaks
	f.second(0.1, 0.99, nil)
	if fired := f.second(0.1, 0.99, nil); fired != nil {
		t.Fatalf("2 s busy fired %q", fired)
	}
	fired := f.second(0.1, 0.97, nil)
	if len(fired) != 1 || !strings.Contains(fired[0], "machine CPU > 95% busy for 3 s (max 99%)") {
		t.Fatalf("fired %q", fired)
	}
	r := f.d.Result()
	if !r.Overloaded || *r.MachineBusyMax != 99 {
		t.Fatalf("result %+v", r)
	}
}

func TestNoMachineFigureWithoutProcStat(t *testing.T) {
	d := New(1)
	t0 := time.Unix(0, 0)
	d.Observe(Reading{At: t0})
	d.Observe(Reading{At: t0.Add(time.Second), ProcessCPU: time.Second / 10})
	r := d.Result()
	if r.MachineBusyMax != nil || r.SchedP99Ms != nil || r.Overloaded {
		t.Fatalf("unknown figures must be nil: %+v", r)
	}
}

func TestDispatchLag(t *testing.T) {
	d := New(1)
	if d.NoteDispatchLag(9) != nil {
		t.Fatal("9 ms fired")
	}
	if f := d.NoteDispatchLag(12.5); len(f) != 1 || !strings.Contains(f[0], "12.5 ms") {
		t.Fatalf("fired %q", f)
	}
	if d.NoteDispatchLag(30) != nil || !strings.Contains(d.Result().Reasons[0], "30.0 ms") {
		t.Fatalf("worst lag not kept: %q", d.Result().Reasons)
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
	if r.Sched == nil || len(r.Sched.Counts) == 0 || r.ProcessCPU != time.Second {
		t.Fatalf("system probe: %+v", r)
	}
	if _, err := os.Stat("/proc/stat"); err == nil && !r.MachineOK {
		t.Fatal("/proc/stat exists but was not read")
	}
}
