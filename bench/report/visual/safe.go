package visual

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/kvbench/kvbench/bench/record"
)

// MaxLine caps one line of a record file, as the SSE parser caps an event
// line (spec/record.md): a longer line is a torn tail, never a reason to
// hold the whole file in memory.
const MaxLine = 16 << 20

// maxJSONFile caps bench_summary.json and sweep.json.
const maxJSONFile = 64 << 20

// errNotRegular is why a record file that exists is not read.
var errNotRegular = record.ErrNotRegular

// openRegular and readSmall are the record's safe readers: regular files
// only, never blocking on a FIFO; readSmall's JSON comes with its text
// cleaned (record.ReadJSON), so names reach the page and the charts' SVG
// as text XML takes.
var openRegular = record.OpenRegular

func readSmall(path string) ([]byte, error) { return record.ReadJSON(path, maxJSONFile) }

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
