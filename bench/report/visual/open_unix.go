//go:build unix

package visual

import (
	"os"
	"syscall"
)

// openNoBlock opens path read-only without blocking on a FIFO that
// replaced a regular file since it was checked.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
