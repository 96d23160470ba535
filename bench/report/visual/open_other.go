//go:build !unix

package visual

import "os"

func openNoBlock(path string) (*os.File, error) { return os.Open(path) }
