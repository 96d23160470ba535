package visual

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxLine caps one line of a record file, as the SSE parser caps an event
// line (spec/record.md): a longer line is a torn tail, never a reason to
// hold the whole file in memory.
const MaxLine = 16 << 20

// maxJSONFile caps bench_summary.json and sweep.json.
const maxJSONFile = 64 << 20

// errNotRegular is why a record file that exists is not read.
var errNotRegular = errors.New("not a regular file")

// openRegular opens path for reading only if it is a regular file (after
// symlinks; a symlink loop is an error). A FIFO or a device is refused
// without ever blocking on it.
func openRegular(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", path, errNotRegular)
	}
	f, err := openNoBlock(path)
	if err != nil {
		return nil, err
	}
	// The file may have been swapped between Stat and Open.
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, errNotRegular)
	}
	return f, nil
}

// readSmall reads a whole regular file of at most maxJSONFile bytes.
func readSmall(path string) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxJSONFile+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxJSONFile {
		return nil, fmt.Errorf("%s: larger than %d MiB", path, maxJSONFile>>20)
	}
	return b, nil
}

// eachLine calls fn with every non-blank line of a regular file, without
// its line end. A line longer than MaxLine, or one holding a NUL (a file
// pre-allocated and never written), is skipped and counted in torn. The
// slice passed to fn is only valid during the call.
func eachLine(path string, fn func(line []byte)) (torn int, err error) {
	f, err := openRegular(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var long []byte
	tooLong := false
	for {
		chunk, rerr := br.ReadSlice('\n')
		if errors.Is(rerr, bufio.ErrBufferFull) {
			if !tooLong {
				if len(long)+len(chunk) > MaxLine {
					tooLong, long = true, long[:0]
				} else {
					long = append(long, chunk...)
				}
			}
			continue
		}
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return torn, fmt.Errorf("read %s: %w", path, rerr)
		}
		line := chunk
		if len(long) > 0 {
			long = append(long, chunk...)
			line = long
		}
		switch {
		case tooLong || len(line) > MaxLine:
			torn++
		case bytes.IndexByte(line, 0) >= 0:
			torn++
		default:
			if line = bytes.TrimSpace(line); len(line) > 0 {
				fn(line)
			}
		}
		long, tooLong = long[:0], false
		if rerr != nil {
			return torn, nil
		}
	}
}
