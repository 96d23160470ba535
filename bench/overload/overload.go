// Package overload decides whether the client could read its sockets on
// time during a run (spec/record.md, "Client overload"). Once a second it
// looks at the Go scheduler's latency histogram, the process's CPU and the
// whole machine's CPU; any of them past its threshold marks the run
// overloaded, with a reason each. Readings come from a Probe, so tests
// drive the detector with made-up readings and their own clock.
package overload

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// Thresholds of spec/record.md.
const (
	SchedP99Ms     = 5.0             // scheduler latency p99 over one sample
	OwnCPUShare    = 0.85            // of the cores the process may use
	MachineBusy    = 0.95            // of the whole machine ...
	MachineBusyFor = 3 * time.Second // ... for this long
	// DispatchLagMs is kvbench's own addition: a request sent this late
	// by the client (not held back by the workload) also marks overload.
	DispatchLagMs = 10.0
)

// Reading is one sample of cumulative counters.
type Reading struct {
	At time.Time
	// Sched is the cumulative /sched/latencies:seconds histogram; nil
	// when unavailable.
	Sched *metrics.Float64Histogram
	// ProcessCPU is the CPU time the process has used so far.
	ProcessCPU time.Duration
	// MachineBusy and MachineTotal are cumulative jiffies of the whole
	// machine (/proc/stat); MachineOK is false where they are unknown.
	MachineBusy, MachineTotal uint64
	MachineOK                 bool
}

// Probe takes one Reading at now.
type Probe func(now time.Time) Reading

// SystemProbe reads the runtime's scheduler histogram, cpu (the
// process's CPU time so far) and /proc/stat.
func SystemProbe(cpu func() time.Duration) Probe {
	sample := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	return func(now time.Time) Reading {
		r := Reading{At: now, ProcessCPU: cpu()}
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindFloat64Histogram {
			h := sample[0].Value.Float64Histogram()
			// Read reuses the histogram's memory: keep a copy.
			r.Sched = &metrics.Float64Histogram{
				Counts:  append([]uint64(nil), h.Counts...),
				Buckets: h.Buckets,
			}
		}
		r.MachineBusy, r.MachineTotal, r.MachineOK = procStat("/proc/stat")
		return r
	}
}

// procStat reads the aggregate cpu line: busy is every column but idle
// and iowait.
func procStat(path string) (busy, total uint64, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, 0, false
	}
	return parseCPULine(sc.Text())
}

func parseCPULine(line string) (busy, total uint64, ok bool) {
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0, 0, false
	}
	var idle uint64
	// user nice system idle iowait irq softirq steal (guest, guest_nice
	// are already counted in user and nice).
	for i, s := range fields[1:min(len(fields), 9)] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += v
		if i == 3 || i == 4 {
			idle += v
		}
	}
	return total - idle, total, total > 0
}

// Result is what the detector concluded so far: the `client` block's
// overload keys.
type Result struct {
	// SchedP99Ms is the worst one-sample p99 of the scheduler latency,
	// nil before the first sample or where the runtime has no histogram.
	SchedP99Ms *float64
	// MachineBusyMax is the busiest sample of the machine's CPU, in
	// percent; nil where /proc/stat does not exist.
	MachineBusyMax *float64
	Overloaded     bool
	Reasons        []string
	// CPUPercent is the process's CPU over the last sample, in percent of
	// one core.
	CPUPercent float64
}

type reason int

const (
	reasonSched reason = iota
	reasonCPU
	reasonMachine
	reasonLag
	nReasons
)

// Detector accumulates samples. It is not safe for concurrent use.
type Detector struct {
	cores int

	prev     Reading
	havePrev bool

	schedMax, machineMax   float64
	haveSched, haveMachine bool
	busySince              time.Time // start of the current >95% streak
	cpuPct                 float64
	worst                  [nReasons]float64
	text                   [nReasons]string
	order                  []reason
	lagMs                  float64
}

// New returns a detector for a process that may use cores CPUs.
func New(cores int) *Detector { return &Detector{cores: max(cores, 1)} }

// Observe adds one reading and returns the reasons that fired for the
// first time with it.
func (d *Detector) Observe(r Reading) []string {
	if !d.havePrev {
		d.prev, d.havePrev = r, true
		return nil
	}
	prev := d.prev
	d.prev = r
	var fired []string
	note := func(k reason, worst float64, text string) {
		if d.text[k] == "" {
			d.order = append(d.order, k)
			fired = append(fired, text)
		}
		if d.text[k] == "" || worst > d.worst[k] {
			d.worst[k], d.text[k] = worst, text
		}
	}

	if p99, ok := intervalP99(prev.Sched, r.Sched); ok {
		ms := p99 * 1000
		if !d.haveSched || ms > d.schedMax {
			d.schedMax, d.haveSched = ms, true
		}
		if ms > SchedP99Ms {
			note(reasonSched, ms, fmt.Sprintf("scheduler latency p99 %.1f ms > %g ms", ms, SchedP99Ms))
		}
	}

	if wall := r.At.Sub(prev.At).Seconds(); wall > 0 {
		share := (r.ProcessCPU - prev.ProcessCPU).Seconds() / wall
		d.cpuPct = 100 * share
		if share > OwnCPUShare*float64(d.cores) {
			pct := 100 * share / float64(d.cores)
			note(reasonCPU, pct, fmt.Sprintf("kvbench CPU %.0f%% of %d core(s) > %.0f%%", pct, d.cores, 100*OwnCPUShare))
		}
	}

	if r.MachineOK && prev.MachineOK && r.MachineTotal > prev.MachineTotal {
		busy := float64(r.MachineBusy-prev.MachineBusy) / float64(r.MachineTotal-prev.MachineTotal)
		if !d.haveMachine || busy > d.machineMax {
			d.machineMax, d.haveMachine = busy, true
		}
		if busy > MachineBusy {
			if d.busySince.IsZero() {
				d.busySince = prev.At
			}
			if held := r.At.Sub(d.busySince); held >= MachineBusyFor {
				note(reasonMachine, busy, fmt.Sprintf("machine CPU > %.0f%% busy for %.0f s (max %.0f%%)",
					100*MachineBusy, held.Seconds(), 100*d.machineMax))
			}
		} else {
			d.busySince = time.Time{}
		}
	}
	return fired
}

// NoteDispatchLag reports the largest dispatch lag the client caused so
// far; it returns the reason when it fires for the first time.
func (d *Detector) NoteDispatchLag(ms float64) []string {
	if ms <= DispatchLagMs || ms <= d.lagMs {
		return nil
	}
	d.lagMs = ms
	text := fmt.Sprintf("dispatch lag %.1f ms > %g ms", ms, DispatchLagMs)
	first := d.text[reasonLag] == ""
	if first {
		d.order = append(d.order, reasonLag)
	}
	d.worst[reasonLag], d.text[reasonLag] = ms, text
	if first {
		return []string{text}
	}
	return nil
}

// Result is the conclusion so far.
func (d *Detector) Result() Result {
	res := Result{CPUPercent: d.cpuPct, Reasons: []string{}}
	if d.haveSched {
		v := d.schedMax
		res.SchedP99Ms = &v
	}
	if d.haveMachine {
		v := 100 * d.machineMax
		res.MachineBusyMax = &v
	}
	for _, k := range d.order {
		res.Reasons = append(res.Reasons, d.text[k])
	}
	res.Overloaded = len(res.Reasons) > 0
	return res
}

// intervalP99 is the 99th percentile (seconds) of the latencies added
// between two cumulative histograms: the upper bound of the bucket that
// holds it (its lower bound for the last, unbounded bucket).
func intervalP99(a, b *metrics.Float64Histogram) (float64, bool) {
	if a == nil || b == nil || len(a.Counts) != len(b.Counts) {
		return 0, false
	}
	var total uint64
	for i := range b.Counts {
		total += b.Counts[i] - a.Counts[i]
	}
	if total == 0 {
		return 0, false
	}
	rank := uint64(math.Ceil(0.99 * float64(total)))
	var seen uint64
	for i := range b.Counts {
		seen += b.Counts[i] - a.Counts[i]
		if seen >= rank {
			hi := b.Buckets[i+1]
			if math.IsInf(hi, 1) {
				hi = b.Buckets[i]
			}
			return max(hi, 0), true
		}
	}
	return 0, false
}
