//go:build !unix

package record

import "os"

func openNoBlock(path string) (*os.File, error) { return os.Open(path) }
