//go:build !linux

package e2e

import "os"

// maxRSSKiB is unknown off Linux (getrusage's unit differs).
func maxRSSKiB(*os.ProcessState) int64 { return -1 }
