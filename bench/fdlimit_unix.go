//go:build unix

package bench

import (
	"os"
	"syscall"
)

// raiseFDLimit raises the soft RLIMIT_NOFILE to the hard limit and
// returns the soft limit in force, 0 when unknown.
func raiseFDLimit() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	if rl.Cur < rl.Max {
		up := rl
		up.Cur = up.Max
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &up) == nil {
			rl = up
		}
	}
	if rl.Cur > 1<<30 {
		return 1 << 30
	}
	return int(rl.Cur)
}

// openFDs counts the descriptors the process holds, 0 when unknown.
func openFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(entries)
}
