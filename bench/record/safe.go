package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/kvbench/kvbench/internal/textclean"
)

// MaxLineBytes caps one line of requests.jsonl when reading: the SSE line
// limit. A longer line is read as the torn tail of the file.
const MaxLineBytes = 16 << 20

// maxSummaryBytes caps bench_summary.json and config.json when reading.
const maxSummaryBytes = 64 << 20

// ErrNotRegular is what OpenRegular's error is (errors.Is) for a FIFO, a
// device, a socket or a directory.
var ErrNotRegular = errors.New("not a regular file")

// OpenRegular opens path for reading only when it is a regular file
// (a symlink to one is followed): a FIFO neither blocks the open nor is
// read, a device such as /dev/zero is refused, a symlink loop fails.
func OpenRegular(path string) (*os.File, error) {
	f, err := openNoBlock(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	return f, nil
}

// ReadRegular reads a regular file of at most limit bytes whole.
func ReadRegular(path string, limit int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than %d MB", path, limit>>20)
	}
	return b, nil
}

// ReadJSON reads a JSON file of the record as ReadRegular does, with
// every string in it cleaned (textclean.JSON): a run folder is text from
// outside (a hand-edited file, another machine's run), so what is read
// from it can be shown as it is (spec/cli.md, "Text from outside is never
// a terminal command").
func ReadJSON(path string, limit int64) ([]byte, error) {
	b, err := ReadRegular(path, limit)
	if err != nil {
		return nil, err
	}
	return textclean.JSON(b), nil
}

// EachLine hands fn every line of r with its start offset (the line
// without its '\n'; valid during the call only). It stops at the torn
// tail of a file, reporting torn: a line holding a NUL byte (the zeros a
// crash can leave after the last write) or longer than maxLine. Memory
// stays within maxLine plus a read buffer, whatever the file holds. An
// error from fn stops the reading and is returned.
func EachLine(r io.Reader, maxLine int, fn func(start int64, line []byte) error) (torn bool, err error) {
	if maxLine <= 0 {
		maxLine = MaxLineBytes
	}
	br := bufio.NewReaderSize(r, 256<<10)
	var off int64
	var long []byte
	for {
		chunk, rerr := br.ReadSlice('\n')
		if bytes.IndexByte(chunk, 0) >= 0 {
			return true, nil
		}
		if errors.Is(rerr, bufio.ErrBufferFull) {
			if len(long)+len(chunk) > maxLine {
				return true, nil
			}
			long = append(long, chunk...)
			continue
		}
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return false, rerr
		}
		line := chunk
		if len(long) > 0 {
			long = append(long, chunk...)
			line = long
		}
		start := off
		off += int64(len(line))
		line = bytes.TrimSuffix(line, []byte{'\n'})
		if len(line) > maxLine {
			return true, nil
		}
		if len(line) > 0 || rerr == nil {
			if err := fn(start, line); err != nil {
				return false, err
			}
		}
		long = long[:0]
		if rerr != nil {
			return false, nil
		}
	}
}
