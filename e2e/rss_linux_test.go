package e2e

import (
	"os"
	"syscall"
)

// maxRSSKiB is the peak resident set of a finished process, in KiB.
func maxRSSKiB(ps *os.ProcessState) int64 {
	if ps == nil {
		return -1
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss
	}
	return -1
}
