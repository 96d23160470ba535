package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// runPeakRSS runs cmd and returns its peak resident set in
// KiB: the largest VmHWM of /proc/PID/status read every 5 ms while it
// ran (VmHWM only grows; growth in the last 5 ms is missed). ru_maxrss
// cannot be used: a process Go starts is vforked, and the kernel folds
// the parent's resident set at that moment into the child's maximum.
func runPeakRSS(cmd *exec.Cmd) (int64, error) {
	if err := cmd.Start(); err != nil {
		return -1, err
	}
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	done := make(chan struct{})
	peak := make(chan int64)
	go func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		var max int64 = -1
		for {
			if v := vmHWM(status); v > max {
				max = v
			}
			select {
			case <-done:
				peak <- max
				return
			case <-t.C:
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	return <-peak, err
}

func vmHWM(status string) int64 {
	f, err := os.Open(status)
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return -1
}
