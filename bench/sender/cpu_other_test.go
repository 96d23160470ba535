//go:build !unix

package sender

func cpuNanos() int64 { return 0 }
