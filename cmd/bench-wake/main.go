// Command bench-wake measures how late a Go process reads a socket on a
// busy machine, beside what kvbench's timing probe says about the same
// process (docs/client-performance.md, "How late a read is").
//
//	go run ./cmd/bench-wake [--hogs 2] [--pairs 4] [--messages 600]
//
// Each pair runs two reader processes at once under the same CPU hogs
// (busy loops it starts itself), one with the scheduler's default slice
// and one with kvbench's short slice (overload.AskShortSlice). A sender
// stamps the time just before each write, at random gaps of 2-8 ms; a
// reader stamps each read, and the difference is the read's lateness.
// With --peer outside the sender is another process (run SCHED_FIFO when
// allowed, so its stamps are on time) and the reader's probe is the one
// a run against an outside engine uses (overload.WakeClock); with --peer
// inside the sender is a goroutine of the reader's process, as the
// built-in engine is, and the probe is overload.InProcessClock. Each
// reader prints its reads' and its probe's lateness (ms).
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/bench/overload"
)

func main() {
	role := flag.String("role", "", "internal: sender, reader or hog")
	addr := flag.String("addr", "", "internal: the sender's address")
	short := flag.Bool("short-slice", false, "internal: the reader asks for the short slice")
	peer := flag.String("peer", "outside", "outside: the sender is another process; inside: a goroutine of the reader")
	hogs := flag.Int("hogs", 2, "CPU hogs to run during each pair")
	pairs := flag.Int("pairs", 4, "pairs of readers to run")
	messages := flag.Int("messages", 600, "messages per reader")
	flag.Parse()
	var err error
	switch *role {
	case "hog":
		for {
		}
	case "sender":
		err = sendOn(*addr, *messages)
	case "reader":
		err = read(os.Stdout, *addr, *peer, *messages, *short)
	case "":
		err = run(*peer, *hogs, *pairs, *messages)
	default:
		err = fmt.Errorf("unknown role %q", *role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-wake:", err)
		os.Exit(2)
	}
}

// run starts the hogs and the pairs and prints what each reader said.
func run(peer string, hogs, pairs, messages int) error {
	if peer != "outside" && peer != "inside" {
		return fmt.Errorf("--peer %q: want outside or inside", peer)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	fmt.Printf("peer %s, %d hogs, %d messages a reader; lateness in ms\n", peer, hogs, messages)
	for p := range pairs {
		var hogCmds []*exec.Cmd
		for range hogs {
			c := exec.Command(self, "-role", "hog")
			if err := c.Start(); err != nil {
				return err
			}
			hogCmds = append(hogCmds, c)
		}
		time.Sleep(300 * time.Millisecond)
		lines, err := pair(self, peer, messages)
		for _, c := range hogCmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
		if err != nil {
			return err
		}
		fmt.Printf("pair %d, load %s\n%s", p+1, loadAvg(), lines)
	}
	return nil
}

// pair runs a default-slice reader and a short-slice reader at once.
func pair(self, peer string, messages int) (string, error) {
	var out strings.Builder
	type reader struct {
		cmd    *exec.Cmd
		sender *exec.Cmd
		stdout strings.Builder
		label  string
	}
	var rs []*reader
	for _, short := range []bool{false, true} {
		r := &reader{label: map[bool]string{false: "default slice", true: "short slice  "}[short]}
		addr := ""
		if peer == "outside" {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return "", err
			}
			addr = ln.Addr().String()
			ln.Close()
			r.sender = exec.Command(self, "-role", "sender", "-addr", addr, "-messages", strconv.Itoa(messages))
			r.sender.Stderr = os.Stderr
			if err := r.sender.Start(); err != nil {
				return "", err
			}
		}
		r.cmd = exec.Command(self, "-role", "reader", "-peer", peer, "-addr", addr,
			"-messages", strconv.Itoa(messages), "-short-slice="+strconv.FormatBool(short))
		r.cmd.Stdout, r.cmd.Stderr = &r.stdout, os.Stderr
		if err := r.cmd.Start(); err != nil {
			return "", err
		}
		rs = append(rs, r)
	}
	var errs []error
	for _, r := range rs {
		errs = append(errs, r.cmd.Wait())
		if r.sender != nil {
			errs = append(errs, r.sender.Wait())
		}
		fmt.Fprintf(&out, "  %s %s", r.label, r.stdout.String())
	}
	return out.String(), errors.Join(errs...)
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "n/a"
}

// sendOn listens on addr, takes one reader and sends it messages.
func sendOn(addr string, messages int) error {
	realTime() // on-time stamps where the system allows it
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	c, err := ln.Accept()
	if err != nil {
		return err
	}
	return send(c, messages)
}

// send writes messages stamps (ns since the Unix epoch) at random gaps
// of 2-8 ms, each stamped just before its write, and closes c.
func send(c net.Conn, messages int) error {
	defer c.Close()
	if t, ok := c.(*net.TCPConn); ok {
		_ = t.SetNoDelay(true)
	}
	var b [8]byte
	for range messages {
		time.Sleep(2*time.Millisecond + rand.N(6*time.Millisecond))
		binary.LittleEndian.PutUint64(b[:], uint64(time.Now().UnixNano()))
		if _, err := c.Write(b[:]); err != nil {
			return err
		}
	}
	return nil
}

// read takes the messages, with the probe kvbench would run beside them,
// and prints both lateness figures on one line.
func read(w io.Writer, addr, peer string, messages int, short bool) (err error) {
	if short {
		overload.AskShortSlice(overload.ShortSlice)
	}
	clock := overload.WakeClock()
	var c net.Conn
	if peer == "inside" {
		clock = overload.InProcessClock()
		ln, lerr := net.Listen("tcp", "127.0.0.1:0")
		if lerr != nil {
			return lerr
		}
		defer ln.Close()
		sent := make(chan error, 1)
		go func() {
			s, err := ln.Accept()
			if err == nil {
				err = send(s, messages)
			}
			sent <- err
		}()
		defer func() { err = errors.Join(err, <-sent) }()
		addr = ln.Addr().String()
	}
	for range 100 {
		if c, err = net.Dial("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	defer c.Close()
	tm := overload.NewTiming(clock, overload.RuntimeSched())
	stop, probed := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(probed)
		tm.Run(stop)
	}()
	var late []float64
	br := bufio.NewReader(c)
	var b [8]byte
	for {
		if _, err := io.ReadFull(br, b[:]); err != nil {
			break
		}
		late = append(late, float64(time.Now().UnixNano()-int64(binary.LittleEndian.Uint64(b[:])))/1e6)
	}
	close(stop)
	<-probed
	f := tm.Figures()
	fmt.Fprintf(w, "reads: %s | probe p99 %s max %s, scheduler p99 %s\n", quantiles(late), ms(f.ProbeP99Ms), ms(f.ProbeMaxMs), ms(f.SchedP99Ms))
	return err
}

func quantiles(v []float64) string {
	if len(v) == 0 {
		return "none"
	}
	slices.Sort(v)
	q := func(p float64) float64 { return v[min(len(v)-1, int(p*float64(len(v))))] }
	return fmt.Sprintf("n %d p50 %.3f p90 %.3f p99 %.3f max %.3f", len(v), q(0.5), q(0.9), q(0.99), v[len(v)-1])
}

func ms(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*p, 'f', 3, 64)
}
