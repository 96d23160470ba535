// Command bench-client measures kvbench's client against a minimal Go
// reader (cmd/minreader) on the same simulated engine: the engine in
// measuring mode (fixed TTFT and inter-token gap, no queueing) pinned to
// one core, each client pinned to the other in turn. It prints CPU per
// streamed token, TTFT p50/p99 error and peak RSS for both, and kvbench's
// ratios to the reader against the targets of docs/client-performance.md.
//
//	go run ./cmd/bench-client [--runs N] [--streams 1000] [--tokens 100]
//
// It builds both binaries itself and needs taskset (util-linux) and two
// CPUs. The exit code is 1 when a target was missed in any run, 2 when
// the measurement itself failed.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Targets of issue 7: kvbench against the minimal reader.
const (
	maxCPURatio  = 1.5
	maxRSSRatio  = 1.5
	ttftFactor   = 1.25
	ttftAllowMs  = 5.0
	engineWaitS  = 30
	defaultModel = "kvbench-sim"
)

type options struct {
	streams, tokens      int
	ttft, itl            time.Duration
	runs                 int
	serverCPU, clientCPU string
	warmup               bool
	keep                 bool
	kvbench              string // a prebuilt kvbench to measure instead of building one
}

// figures is what one client run measured.
type figures struct {
	Name      string
	CPU       time.Duration // user + system, from the kernel
	PeakRSSKB int64         // ru_maxrss
	Tokens    int
	OK        int
	Streams   int
	TTFTP50ms float64 // linear interpolation, as kvbench's summary
	TTFTP99ms float64

	// kvbench only.
	Warnings []string // overload warnings it printed
	Record   string   // what the run record holds, "" when not checked
}

func (f figures) cpuPerTokenUs() float64 {
	if f.Tokens == 0 {
		return 0
	}
	return float64(f.CPU.Nanoseconds()) / 1e3 / float64(f.Tokens)
}

func (f figures) rssMB() float64 { return float64(f.PeakRSSKB) / 1024 }

// ratios compares kvbench with the reader.
type ratios struct {
	CPU, RSS             float64
	ErrReader, ErrKv     float64 // TTFT p50 minus the true TTFT, ms
	TTFTLimit, TTFTShare float64 // limit in ms; kvbench's error over it
}

func (r ratios) cpuOK() bool  { return r.CPU <= maxCPURatio }
func (r ratios) rssOK() bool  { return r.RSS <= maxRSSRatio }
func (r ratios) ttftOK() bool { return r.ErrKv <= r.TTFTLimit }
func (r ratios) allOK() bool  { return r.cpuOK() && r.rssOK() && r.ttftOK() }

func compare(trueTTFT time.Duration, reader, kv figures) ratios {
	t := float64(trueTTFT) / float64(time.Millisecond)
	r := ratios{
		CPU:       kv.cpuPerTokenUs() / reader.cpuPerTokenUs(),
		RSS:       kv.rssMB() / reader.rssMB(),
		ErrReader: reader.TTFTP50ms - t,
		ErrKv:     kv.TTFTP50ms - t,
	}
	// A reader error below zero cannot happen on a fixed-TTFT engine; it
	// is clamped so the limit never drops below the 5 ms allowance.
	r.TTFTLimit = ttftFactor*max(r.ErrReader, 0) + ttftAllowMs
	r.TTFTShare = r.ErrKv / r.TTFTLimit
	return r
}

func main() {
	var o options
	flag.IntVar(&o.streams, "streams", 1000, "streams sent together")
	flag.IntVar(&o.tokens, "tokens", 100, "tokens per stream")
	flag.DurationVar(&o.ttft, "ttft", 100*time.Millisecond, "the engine's fixed TTFT")
	flag.DurationVar(&o.itl, "itl", 20*time.Millisecond, "the engine's fixed inter-token gap (20ms = 50 tok/s)")
	flag.IntVar(&o.runs, "runs", 1, "measurements of each client")
	flag.StringVar(&o.serverCPU, "server-cpu", "0", "CPU list the engine is pinned to")
	flag.StringVar(&o.clientCPU, "client-cpu", "1", "CPU list the clients are pinned to")
	flag.BoolVar(&o.warmup, "warmup", true, "run the reader once, unmeasured, before the first run")
	flag.BoolVar(&o.keep, "keep", false, "keep the binaries and kvbench's run records (the folder is printed)")
	flag.StringVar(&o.kvbench, "kvbench", "", "measure this kvbench binary (e.g. an older build) instead of building the module's; the engine is always the module's")
	flag.Parse()
	if o.runs < 1 || o.streams < 1 || o.tokens < 1 {
		fmt.Fprintln(os.Stderr, "bench-client: --runs, --streams and --tokens must be >= 1")
		os.Exit(2)
	}
	met, err := run(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-client:", err)
		os.Exit(2)
	}
	if !met {
		os.Exit(1)
	}
}

func run(o options) (bool, error) {
	if _, err := exec.LookPath("taskset"); err != nil {
		return false, errors.New("taskset not found: install util-linux (Debian/Ubuntu: apt-get install util-linux)")
	}
	if runtime.NumCPU() < 2 {
		return false, errors.New("needs at least 2 CPUs: one for the engine, one for the clients")
	}
	root, err := moduleRoot()
	if err != nil {
		return false, err
	}
	tmp, err := os.MkdirTemp("", "bench-client-")
	if err != nil {
		return false, err
	}
	if o.keep {
		fmt.Printf("binaries and run records kept in %s\n", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	kvbench := filepath.Join(tmp, "kvbench")
	reader := filepath.Join(tmp, "minreader")
	for _, b := range [][2]string{{kvbench, "."}, {reader, "./cmd/minreader"}} {
		cmd := exec.Command("go", "build", "-o", b[0], b[1])
		cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return false, fmt.Errorf("build %s: %w", b[1], err)
		}
	}

	url, stop, err := startEngine(kvbench, o)
	if err != nil {
		return false, err
	}
	defer stop()
	if o.kvbench != "" {
		if kvbench, err = filepath.Abs(o.kvbench); err != nil {
			return false, err
		}
		fmt.Printf("measuring %s\n", kvbench)
	}
	fmt.Printf("engine %s on CPU %s: fixed TTFT %s, gap %s; clients on CPU %s; %d streams x %d tokens\n",
		url, o.serverCPU, o.ttft, o.itl, o.clientCPU, o.streams, o.tokens)
	fmt.Printf("targets: CPU per token <= %.1fx the reader, TTFT p50 error <= %.2fx the reader's + %.0f ms, peak RSS <= %.1fx\n\n",
		maxCPURatio, ttftFactor, ttftAllowMs, maxRSSRatio)

	if o.warmup {
		if _, err := measureReader(reader, url, o); err != nil {
			return false, fmt.Errorf("warm-up: %w", err)
		}
	}
	var all []ratios
	for i := 1; i <= o.runs; i++ {
		// Alternate which client goes first, so neither always meets an
		// engine the other has just warmed.
		var r, k figures
		readerFirst := i%2 == 1
		for _, which := range []bool{readerFirst, !readerFirst} {
			if which {
				r, err = measureReader(reader, url, o)
			} else {
				k, err = measureKvbench(kvbench, url, o, filepath.Join(tmp, fmt.Sprintf("runs-%d", i)))
			}
			if err != nil {
				return false, err
			}
		}
		first := "reader"
		if !readerFirst {
			first = "kvbench"
		}
		x := compare(o.ttft, r, k)
		report(os.Stdout, i, first, r, k, x)
		all = append(all, x)
	}
	return summarise(os.Stdout, all), nil
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run from inside the kvbench module (go run ./cmd/bench-client)")
	}
	return filepath.Dir(mod), nil
}

// startEngine starts `kvbench sim` in measuring mode on the server CPU and
// returns its URL once it listens.
func startEngine(kvbench string, o options) (string, func(), error) {
	sim := exec.Command("taskset", "-c", o.serverCPU, kvbench, "sim", "--listen", "127.0.0.1:0",
		"--fixed-ttft", o.ttft.String(), "--fixed-itl", o.itl.String())
	// The engine's own messages are shown only when it fails to start.
	var simErr bytes.Buffer
	sim.Stderr = &simErr
	out, err := sim.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := sim.Start(); err != nil {
		return "", nil, fmt.Errorf("start the engine: %w", err)
	}
	stop := func() {
		sim.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { sim.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			sim.Process.Kill()
			<-done
		}
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			for _, f := range strings.Fields(sc.Text()) {
				if !sent && strings.HasPrefix(f, "http://") {
					found <- strings.TrimRight(f, "/")
					sent = true
				}
			}
		}
		if !sent {
			close(found)
		}
		io.Copy(io.Discard, out)
	}()
	select {
	case url, ok := <-found:
		if ok {
			return url, stop, nil
		}
		stop()
		return "", nil, fmt.Errorf("the engine exited without printing its URL: %s", strings.TrimSpace(simErr.String()))
	case <-time.After(engineWaitS * time.Second):
		stop()
		return "", nil, fmt.Errorf("the engine printed no URL within %ds: %s", engineWaitS, strings.TrimSpace(simErr.String()))
	}
}

// usage is the child's CPU time and peak RSS as the kernel accounted them.
// taskset execs the client, so they are the client's own.
func usage(ps *os.ProcessState) (time.Duration, int64) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return ps.UserTime() + ps.SystemTime(), 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Maxrss // KiB on Linux
}

func measureReader(bin, url string, o options) (figures, error) {
	cmd := exec.Command("taskset", "-c", o.clientCPU, bin, "--url", url, "--model", defaultModel,
		"--streams", fmt.Sprint(o.streams), "--tokens", fmt.Sprint(o.tokens))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return figures{}, fmt.Errorf("minreader: %w", err)
	}
	var res struct {
		OK     int     `json:"ok"`
		Tokens int     `json:"tokens"`
		P50    float64 `json:"ttft_p50_ms"`
		P99    float64 `json:"ttft_p99_ms"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return figures{}, fmt.Errorf("minreader output %q: %w", out, err)
	}
	c, rss := usage(cmd.ProcessState)
	return figures{Name: "minimal reader", CPU: c, PeakRSSKB: rss, Tokens: res.Tokens, OK: res.OK,
		Streams: o.streams, TTFTP50ms: res.P50, TTFTP99ms: res.P99}, nil
}

func measureKvbench(bin, url string, o options, runs string) (figures, error) {
	// Not -q: the progress and overload warnings go to stderr (a few
	// lines), and the warnings are part of what is checked.
	cmd := exec.Command("taskset", "-c", o.clientCPU, bin, "run", "--engine-url", url, "--model", defaultModel,
		"--workload", "concurrent-exactness", "--ce-levels", fmt.Sprint(o.streams), "--ce-tokens", fmt.Sprint(o.tokens),
		"--ignore-eos", "--no-interactive", "--format", "json", "--output-dir", runs)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return figures{}, fmt.Errorf("kvbench: %w", err)
	}
	var sum struct {
		Results struct {
			Successful int     `json:"successful_requests"`
			Output     int     `json:"total_output_tokens"`
			P50        float64 `json:"p50_ttft_ms"`
			P99        float64 `json:"p99_ttft_ms"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &sum); err != nil {
		return figures{}, fmt.Errorf("kvbench summary: %w (stdout %.200q, stderr %.500q)", err, out, stderr.String())
	}
	c, rss := usage(cmd.ProcessState)
	f := figures{Name: "kvbench", CPU: c, PeakRSSKB: rss, Tokens: sum.Results.Output, OK: sum.Results.Successful,
		Streams: o.streams, TTFTP50ms: sum.Results.P50, TTFTP99ms: sum.Results.P99}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if w, ok := strings.CutPrefix(line, "warning: "); ok {
			f.Warnings = append(f.Warnings, w)
		}
	}
	f.Record = checkRecord(runs, o.streams)
	return f, nil
}

// checkRecord says whether kvbench's run record is whole: one line per
// request in requests.jsonl, one CSV row per measured request, a summary.
func checkRecord(runs string, streams int) string {
	dirs, _ := filepath.Glob(filepath.Join(runs, "*"))
	if len(dirs) != 1 {
		return fmt.Sprintf("INCOMPLETE: %d run folders", len(dirs))
	}
	lines := func(name string) int {
		b, err := os.ReadFile(filepath.Join(dirs[0], name))
		if err != nil {
			return -1
		}
		return bytes.Count(b, []byte("\n"))
	}
	jsonl, csv := lines("requests.jsonl"), lines("bench_results.csv")-1
	_, serr := os.Stat(filepath.Join(dirs[0], "bench_summary.json"))
	if jsonl != streams || csv != streams || serr != nil {
		return fmt.Sprintf("INCOMPLETE: %d request lines, %d CSV rows, summary %v", jsonl, csv, serr == nil)
	}
	return fmt.Sprintf("complete (%d request lines, %d CSV rows, summary)", jsonl, csv)
}

func verdict(ok bool) string {
	if ok {
		return "meets"
	}
	return "MISSES"
}

func report(w io.Writer, i int, first string, r, k figures, x ratios) {
	fmt.Fprintf(w, "run %d (%s first)\n", i, first)
	fmt.Fprintf(w, "  %-16s %11s %8s %15s %13s %13s %9s\n", "client", "ok", "tokens", "CPU/token (us)", "TTFT p50 err", "TTFT p99 err", "RSS (MB)")
	trueMs := r.TTFTP50ms - x.ErrReader
	for _, f := range []figures{r, k} {
		fmt.Fprintf(w, "  %-16s %5d/%-5d %8d %15.2f %10.1f ms %10.1f ms %9.1f\n", f.Name, f.OK, f.Streams, f.Tokens,
			f.cpuPerTokenUs(), f.TTFTP50ms-trueMs, f.TTFTP99ms-trueMs, f.rssMB())
	}
	fmt.Fprintf(w, "  CPU per token   kvbench/reader %.2fx (target <= %.2fx): %s\n", x.CPU, maxCPURatio, verdict(x.cpuOK()))
	fmt.Fprintf(w, "  TTFT p50 error  kvbench %.1f ms, limit %.2f x %.1f + %.0f = %.1f ms (%.2fx of the limit): %s\n",
		x.ErrKv, ttftFactor, x.ErrReader, ttftAllowMs, x.TTFTLimit, x.TTFTShare, verdict(x.ttftOK()))
	fmt.Fprintf(w, "  peak RSS        kvbench/reader %.2fx (target <= %.2fx): %s\n", x.RSS, maxRSSRatio, verdict(x.rssOK()))
	warn := "none"
	if len(k.Warnings) > 0 {
		warn = strings.Join(k.Warnings, "; ")
	}
	fmt.Fprintf(w, "  kvbench record: %s; overload warning: %s\n", k.Record, warn)
	if r.OK != r.Streams || k.OK != k.Streams || r.Tokens != k.Tokens {
		fmt.Fprintf(w, "  NOTE: not every stream succeeded or the token counts differ; the ratios compare unequal work\n")
	}
	fmt.Fprintln(w)
}

// summarise prints the range of each ratio over the runs and reports
// whether every run met every target.
func summarise(w io.Writer, all []ratios) bool {
	span := func(get func(ratios) float64) string {
		v := make([]float64, len(all))
		for i, x := range all {
			v[i] = get(x)
		}
		lo, hi := slices.Min(v), slices.Max(v)
		if len(v) == 1 || lo == hi {
			return fmt.Sprintf("%.2fx", lo)
		}
		return fmt.Sprintf("%.2fx-%.2fx", lo, hi)
	}
	met := 0
	for _, x := range all {
		if x.allOK() {
			met++
		}
	}
	fmt.Fprintf(w, "over %d run(s): CPU per token %s (<= %.2fx), TTFT p50 error %s of the limit (<= 1.00x), peak RSS %s (<= %.2fx); all three targets met in %d of %d\n",
		len(all), span(func(x ratios) float64 { return x.CPU }), maxCPURatio,
		span(func(x ratios) float64 { return x.TTFTShare }),
		span(func(x ratios) float64 { return x.RSS }), maxRSSRatio, met, len(all))
	return met == len(all)
}
