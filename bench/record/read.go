package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kvbench/kvbench/bench/sender"
)

// ReadRequests streams <dir>/requests.jsonl to fn one result at a time.
// Lines that are not a JSON object with a request_id (a line cut short by
// a kill, a torn write) are skipped and counted in corrupt; blank lines
// are ignored. An error from fn stops the reading and is returned.
func ReadRequests(dir string, fn func(*sender.Result) error) (corrupt int, err error) {
	path := filepath.Join(dir, RequestsFile)
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("read requests: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	// Lines are read in place (no copy per line); only a line longer than
	// the buffer is assembled in long, which is reused.
	var long []byte
	for {
		line, rerr := br.ReadSlice('\n')
		if errors.Is(rerr, bufio.ErrBufferFull) {
			long = append(long, line...)
			continue
		}
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return corrupt, fmt.Errorf("read %s: %w", path, rerr)
		}
		if len(long) > 0 {
			long = append(long, line...)
			line, long = long, long[:0]
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			var r sender.Result
			if json.Unmarshal(line, &r) != nil || r.RequestID == "" {
				corrupt++
			} else if err := fn(&r); err != nil {
				return corrupt, err
			}
		}
		if rerr != nil {
			return corrupt, nil
		}
	}
}
