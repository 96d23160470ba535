//go:build unix

package sender

import "syscall"

// cpuNanos is the process's user+system CPU time: on a shared machine it
// moves far less than wall time with the load of other processes.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
