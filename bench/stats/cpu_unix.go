//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package stats

import (
	"syscall"
	"time"
)

// ProcessCPU is the user plus system CPU time this process has used.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
