// Command bench-client measures kvbench's client against a minimal Go
// reader on the same simulated engine: the engine in measuring mode
// (fixed TTFT and inter-token gap, no queueing) pinned to one core, each
// client pinned to the other in turn. It prints CPU per streamed token,
// TTFT p50/p99 error and peak RSS for both, and kvbench's ratios to the
// reader against the targets of docs/client-performance.md.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

type figures struct {
	Name        string
	CPU         time.Duration
	Tokens      int
	TTFTP50ms   float64
	TTFTP99ms   float64
	PeakRSSMB   float64
	OK, Streams int
}

func (f figures) cpuPerTokenUs() float64 {
	if f.Tokens == 0 {
		return 0
	}
	return float64(f.CPU.Microseconds()) / float64(f.Tokens)
}

func main() {
	streams := flag.Int("streams", 1000, "streams sent together")
	tokens := flag.Int("tokens", 100, "tokens per stream")
	ttft := flag.Duration("ttft", 100*time.Millisecond, "the engine's fixed TTFT")
	itl := flag.Duration("itl", 20*time.Millisecond, "the engine's fixed inter-token gap (20ms = 50 tok/s)")
	runs := flag.Int("runs", 1, "measurements of each client")
	serverCPU := flag.String("server-cpu", "0", "CPU list the engine is pinned to")
	clientCPU := flag.String("client-cpu", "1", "CPU list the clients are pinned to")
	flag.Parse()
	if err := run(*streams, *tokens, *ttft, *itl, *runs, *serverCPU, *clientCPU); err != nil {
		fmt.Fprintln(os.Stderr, "bench-client:", err)
		os.Exit(1)
	}
}

func run(streams, tokens int, ttft, itl time.Duration, runs int, serverCPU, clientCPU string) error {
	if _, err := exec.LookPath("taskset"); err != nil {
		return errors.New("taskset not found (Debian: util-linux)")
	}
	if runtime.NumCPU() < 2 {
		return errors.New("needs at least 2 CPUs: one for the engine, one for the client")
	}
	tmp, err := os.MkdirTemp("", "bench-client-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	kvbench := filepath.Join(tmp, "kvbench")
	reader := filepath.Join(tmp, "minreader")
	for _, b := range [][2]string{{kvbench, "."}, {reader, "./cmd/minreader"}} {
		cmd := exec.Command("go", "build", "-o", b[0], b[1])
		cmd.Dir, cmd.Stderr = root, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build %s: %w", b[1], err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sim := exec.CommandContext(ctx, "taskset", "-c", serverCPU, kvbench, "sim", "--listen", "127.0.0.1:0",
		"--fixed-ttft", ttft.String(), "--fixed-itl", itl.String())
	sim.Stderr = os.Stderr
	out, err := sim.StdoutPipe()
	if err != nil {
		return err
	}
	if err := sim.Start(); err != nil {
		return fmt.Errorf("start the engine: %w", err)
	}
	defer func() { sim.Process.Signal(syscall.SIGTERM); sim.Wait() }()
	url, err := readURL(out)
	if err != nil {
		return err
	}
	go io.Copy(io.Discard, out)
	fmt.Printf("engine %s on CPU %s: fixed TTFT %s, gap %s; clients on CPU %s; %d streams x %d tokens\n\n",
		url, serverCPU, ttft, itl, clientCPU, streams, tokens)

	for i := 1; i <= runs; i++ {
		r, err := measureReader(reader, clientCPU, url, streams, tokens)
		if err != nil {
			return err
		}
		k, err := measureKvbench(kvbench, clientCPU, url, streams, tokens, tmp)
		if err != nil {
			return err
		}
		report(i, ttft, r, k)
	}
	return nil
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run from inside the kvbench module")
	}
	return filepath.Dir(mod), nil
}

// readURL waits for the engine's "listening on URL" line.
func readURL(r io.Reader) (string, error) {
	sc := bufio.NewScanner(r)
	deadline := time.AfterFunc(30*time.Second, func() {})
	defer deadline.Stop()
	for sc.Scan() {
		for _, f := range strings.Fields(sc.Text()) {
			if strings.HasPrefix(f, "http://") {
				return strings.TrimRight(f, "/"), nil
			}
		}
	}
	return "", errors.New("the engine never printed its URL")
}

func usage(ps *os.ProcessState) (time.Duration, float64) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return ps.UserTime() + ps.SystemTime(), 0
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return cpu, float64(ru.Maxrss) / 1024 // KiB on Linux
}

func measureReader(bin, cpu, url string, streams, tokens int) (figures, error) {
	cmd := exec.Command("taskset", "-c", cpu, bin, "--url", url, "--streams", fmt.Sprint(streams), "--tokens", fmt.Sprint(tokens))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return figures{}, fmt.Errorf("minreader: %w", err)
	}
	var res struct {
		OK, Streams, Tokens int
		P50                 float64 `json:"ttft_p50_ms"`
		P99                 float64 `json:"ttft_p99_ms"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return figures{}, fmt.Errorf("minreader output %q: %w", out, err)
	}
	c, rss := usage(cmd.ProcessState)
	return figures{Name: "minimal reader", CPU: c, Tokens: res.Tokens, TTFTP50ms: res.P50, TTFTP99ms: res.P99,
		PeakRSSMB: rss, OK: res.OK, Streams: streams}, nil
}

func measureKvbench(bin, cpu, url string, streams, tokens int, tmp string) (figures, error) {
	cmd := exec.Command("taskset", "-c", cpu, bin, "run", "--engine-url", url, "--model", "kvbench-sim",
		"--workload", "concurrent-exactness", "--ce-levels", fmt.Sprint(streams), "--ce-tokens", fmt.Sprint(tokens),
		"--ignore-eos", "--no-interactive", "-q", "--format", "json", "--output-dir", filepath.Join(tmp, "runs"))
	cmd.Stderr = os.Stderr
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
		return figures{}, fmt.Errorf("kvbench summary: %w (%.200s)", err, out)
	}
	c, rss := usage(cmd.ProcessState)
	return figures{Name: "kvbench", CPU: c, Tokens: sum.Results.Output, TTFTP50ms: sum.Results.P50,
		TTFTP99ms: sum.Results.P99, PeakRSSMB: rss, OK: sum.Results.Successful, Streams: streams}, nil
}

func report(i int, ttft time.Duration, r, k figures) {
	true0 := float64(ttft.Microseconds()) / 1000
	fmt.Printf("run %d\n", i)
	fmt.Printf("  %-16s %9s %10s %14s %14s %10s %8s\n", "client", "ok", "tokens", "CPU/token (us)", "TTFT p50 err", "p99 err", "RSS MB")
	for _, f := range []figures{r, k} {
		fmt.Printf("  %-16s %4d/%-4d %10d %14.2f %11.1f ms %7.1f ms %8.1f\n", f.Name, f.OK, f.Streams, f.Tokens,
			f.cpuPerTokenUs(), f.TTFTP50ms-true0, f.TTFTP99ms-true0, f.PeakRSSMB)
	}
	cpuRatio := k.cpuPerTokenUs() / r.cpuPerTokenUs()
	errR, errK := r.TTFTP50ms-true0, k.TTFTP50ms-true0
	ttftLimit := 1.25*errR + 5
	rssRatio := k.PeakRSSMB / r.PeakRSSMB
	verdict := func(ok bool) string {
		if ok {
			return "meets"
		}
		return "MISSES"
	}
	fmt.Printf("  CPU per token      kvbench/reader = %.2fx (target <= 1.50x): %s\n", cpuRatio, verdict(cpuRatio <= 1.5))
	fmt.Printf("  TTFT p50 error     kvbench %.1f ms vs limit 1.25 x %.1f + 5 = %.1f ms (%.2fx of the limit): %s\n",
		errK, errR, ttftLimit, errK/ttftLimit, verdict(errK <= ttftLimit))
	fmt.Printf("  peak RSS           kvbench/reader = %.2fx (target <= 1.50x): %s\n\n", rssRatio, verdict(rssRatio <= 1.5))
}
