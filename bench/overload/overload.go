// Package overload decides whether the client could read its sockets on
// time during a run (spec/record.md, "Client overload"). It judges by how
// late the client's timestamps can be, measured (Timing: a probe that
// asks to wake every millisecond, and the Go scheduler's latency
// histogram), by kvbench's own CPU held at its cores' limit, and by the
// p99 dispatch lag the client caused; never by one late request or by a
// busy machine, which is only a note. Readings come from a Probe and the
// probe's clock is injected, so tests drive the rules with made-up
// figures and their own clock.
package overload

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Thresholds of spec/record.md.
const (
	// TimingErrorMinMs and TimingErrorTTFTShare: the timing error p99 may
	// reach max(2 ms, 5% of the run's TTFT p50).
	TimingErrorMinMs     = 2.0
	TimingErrorTTFTShare = 0.05
	// OwnCPUShare of the cores the process may use, held for OwnCPUFor.
	OwnCPUShare = 0.90
	OwnCPUFor   = 3 * time.Second
	// MachineBusyNote: a machine busier than this (percent) gets a note,
	// never a reason.
	MachineBusyNote = 95.0
)

// Reading is one sample of cumulative counters.
type Reading struct {
	At time.Time
	// ProcessCPU is the CPU time the process has used so far.
	ProcessCPU time.Duration
	// MachineBusy and MachineTotal are cumulative jiffies of the whole
	// machine (/proc/stat); MachineOK is false where they are unknown.
	MachineBusy, MachineTotal uint64
	MachineOK                 bool
}

// Probe takes one Reading at now.
type Probe func(now time.Time) Reading

// SystemProbe reads cpu (the process's CPU time so far) and /proc/stat.
func SystemProbe(cpu func() time.Duration) Probe {
	return func(now time.Time) Reading {
		r := Reading{At: now, ProcessCPU: cpu()}
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

// Detector follows the process's and the machine's CPU from one Reading
// a second. It is not safe for concurrent use.
type Detector struct {
	cores int

	prev      Reading
	havePrev  bool
	measuring bool

	machineMax  float64
	haveMachine bool
	cpuPct      float64   // last sample, percent of one core
	busySince   time.Time // start of the current streak above OwnCPUShare
	busyFor     time.Duration
	busyMaxPct  float64 // of the usable cores, over the streaks
}

// New returns a detector for a process that may use cores CPUs.
func New(cores int) *Detector { return &Detector{cores: max(cores, 1)} }

// Cores is the number of CPUs the process may use.
func (d *Detector) Cores() int { return d.cores }

// Observe adds one reading; measuring says whether the measured phase
// has begun: the first reading that says so starts the figures afresh
// (the run's figures are the measured phase's, or the whole run's when
// it has none).
func (d *Detector) Observe(r Reading, measuring bool) {
	if measuring && !d.measuring {
		d.measuring = true
		d.machineMax, d.haveMachine = 0, false
		d.busySince, d.busyFor, d.busyMaxPct = time.Time{}, 0, 0
	}
	if !d.havePrev {
		d.prev, d.havePrev = r, true
		return
	}
	prev := d.prev
	d.prev = r
	if wall := r.At.Sub(prev.At); wall > 0 {
		share := (r.ProcessCPU - prev.ProcessCPU).Seconds() / wall.Seconds()
		d.cpuPct = 100 * share
		if share > OwnCPUShare*float64(d.cores) {
			if d.busySince.IsZero() {
				d.busySince = prev.At
			}
			d.busyFor = max(d.busyFor, r.At.Sub(d.busySince))
			d.busyMaxPct = max(d.busyMaxPct, 100*share/float64(d.cores))
		} else {
			d.busySince = time.Time{}
		}
	}
	if r.MachineOK && prev.MachineOK && r.MachineTotal > prev.MachineTotal && r.MachineBusy >= prev.MachineBusy {
		busy := 100 * float64(r.MachineBusy-prev.MachineBusy) / float64(r.MachineTotal-prev.MachineTotal)
		if !d.haveMachine || busy > d.machineMax {
			d.machineMax, d.haveMachine = busy, true
		}
	}
}

// Figures are the detector's figures with the timing probe's: what the
// rules judge. lagLimitMs is the dispatch lag allowed (max(10 ms, 10% of
// the mean gap)); ttftP50Ms the run's TTFT p50 (nil or 0 when unknown).
func (d *Detector) Figures(t TimingFigures, ttftP50Ms *float64, lagLimitMs float64) Figures {
	f := Figures{
		TimingErrorP99Ms:  t.ErrorP99Ms,
		TimingErrorMaxMs:  t.ErrorMaxMs,
		SchedLatencyP99Ms: t.SchedP99Ms,
		TTFTP50Ms:         ttftP50Ms,
		Cores:             d.cores,
		OwnCPUBusyFor:     d.busyFor,
		OwnCPUBusyMaxPct:  d.busyMaxPct,
		DispatchLagP99Ms:  t.DispatchLagP99Ms,
		DispatchLagLimit:  lagLimitMs,
		CPUPercent:        d.cpuPct,
	}
	if d.haveMachine {
		v := d.machineMax
		f.MachineBusyMax = &v
	}
	return f
}

// Figures are what the overload rules judge, in ms unless named
// otherwise; nil where unmeasured.
type Figures struct {
	TimingErrorP99Ms, TimingErrorMaxMs *float64
	SchedLatencyP99Ms                  *float64
	// TTFTP50Ms is the run's TTFT p50; nil or 0 leaves the timing rule
	// at its 2 ms floor.
	TTFTP50Ms *float64
	// TTFTPending holds the timing rule back while no request has had a
	// first token yet (the live verdict: the allowance is not known).
	TTFTPending bool
	// Cores the process may use; OwnCPUBusyFor the longest stretch its CPU
	// stayed above OwnCPUShare of them, OwnCPUBusyMaxPct its highest share
	// (percent of those cores) in such a stretch.
	Cores            int
	OwnCPUBusyFor    time.Duration
	OwnCPUBusyMaxPct float64
	// DispatchLagP99Ms is over the dispatch lags the client caused;
	// DispatchLagLimit is the most it may be.
	DispatchLagP99Ms *float64
	DispatchLagLimit float64
	// MachineBusyMax is the busiest sample of the machine, percent.
	MachineBusyMax *float64
	// CPUPercent is the process's CPU over the last sample, percent of
	// one core (shown live, judged by nothing).
	CPUPercent float64
}

// Result is the verdict: the `client` block's overload keys and what
// the front-ends say.
type Result struct {
	TimingErrorP99Ms, TimingErrorMaxMs *float64
	SchedLatencyP99Ms                  *float64
	MachineBusyMax                     *float64
	Overloaded                         bool
	// Reasons name their figure each; never nil. Rules says which rule
	// gave each ("timing", "cpu", "dispatch_lag"), so a live warning is
	// given once per rule however its figure moves.
	Reasons []string
	Rules   []string
	// Note says the machine was busy while the client still measured on
	// time; empty otherwise.
	Note       string
	CPUPercent float64
}

// TimingAllowanceMs is the timing error p99 a run may have:
// max(2 ms, 5% of its TTFT p50).
func TimingAllowanceMs(ttftP50Ms *float64) float64 {
	if ttftP50Ms == nil || !(*ttftP50Ms > 0) {
		return TimingErrorMinMs
	}
	return max(TimingErrorMinMs, TimingErrorTTFTShare**ttftP50Ms)
}

// Judge applies the rules of spec/record.md to f.
func Judge(f Figures) Result {
	res := Result{
		TimingErrorP99Ms:  f.TimingErrorP99Ms,
		TimingErrorMaxMs:  f.TimingErrorMaxMs,
		SchedLatencyP99Ms: f.SchedLatencyP99Ms,
		MachineBusyMax:    f.MachineBusyMax,
		CPUPercent:        f.CPUPercent,
		Reasons:           []string{},
	}
	if p := f.TimingErrorP99Ms; p != nil && !f.TTFTPending {
		if allowed := TimingAllowanceMs(f.TTFTP50Ms); *p > allowed {
			ttft := "unknown"
			if f.TTFTP50Ms != nil && *f.TTFTP50Ms > 0 {
				ttft = Ms(*f.TTFTP50Ms) + " ms"
			}
			res.add("timing", fmt.Sprintf("timing error p99 %s ms > %s ms allowed (max(2 ms, 5%% of TTFT p50 %s))",
				Ms(*p), Ms(allowed), ttft))
		}
	}
	if f.OwnCPUBusyFor >= OwnCPUFor {
		res.add("cpu", fmt.Sprintf("kvbench CPU above %.0f%% of %d core(s) for %.0f s (up to %.0f%%)",
			100*OwnCPUShare, max(f.Cores, 1), f.OwnCPUBusyFor.Seconds(), f.OwnCPUBusyMaxPct))
	}
	if p := f.DispatchLagP99Ms; p != nil && *p > f.DispatchLagLimit {
		res.add("dispatch_lag", fmt.Sprintf("p99 dispatch lag %s ms > %s ms allowed (max(10 ms, 10%% of the mean gap))",
			Ms(*p), Ms(f.DispatchLagLimit)))
	}
	res.Overloaded = len(res.Reasons) > 0
	if !res.Overloaded {
		res.Note = MachineNote(f.MachineBusyMax, f.TimingErrorP99Ms)
	}
	return res
}

func (r *Result) add(rule, reason string) {
	r.Rules = append(r.Rules, rule)
	r.Reasons = append(r.Reasons, reason)
}

// MachineNote is the note for a machine busier than MachineBusyNote
// whose client still measured on time: "machine busy; timing error p99
// X ms"; empty for a machine less busy or unknown.
func MachineNote(busyMax, timingP99Ms *float64) string {
	if busyMax == nil || *busyMax <= MachineBusyNote {
		return ""
	}
	t := "n/a"
	if timingP99Ms != nil {
		t = Ms(*timingP99Ms) + " ms"
	}
	return "machine busy; timing error p99 " + t
}

// Inflation says by how much latencies may be inflated: "by up to X ms
// (timing error p99; max Y ms)", or "" when the timing error is unknown.
func Inflation(p99, maxMs *float64) string {
	if p99 == nil {
		return ""
	}
	s := "by up to " + Ms(*p99) + " ms (timing error p99"
	if maxMs != nil {
		s += "; max " + Ms(*maxMs) + " ms"
	}
	return s + ")"
}

// Warning is the live and logged warning of an overloaded run, "" when
// it is not.
func (r Result) Warning() string {
	if !r.Overloaded {
		return ""
	}
	head := "client overloaded, latencies may be inflated"
	if in := Inflation(r.TimingErrorP99Ms, r.TimingErrorMaxMs); in != "" {
		head += " " + in
	}
	return head + ": " + strings.Join(r.Reasons, "; ")
}

// Ms formats a figure in ms: two decimals below 10, one above.
func Ms(v float64) string {
	if v < 10 {
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}
