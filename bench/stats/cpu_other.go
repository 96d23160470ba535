//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package stats

import "time"

// ProcessCPU is the user plus system CPU time this process has used; 0
// where getrusage is not available.
func ProcessCPU() time.Duration { return 0 }
