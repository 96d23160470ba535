package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/internal/textclean"
)

// ReadRequests streams <dir>/requests.jsonl to fn one result at a time.
// Lines that are not a JSON object with a request_id (a line cut short by
// a kill, a torn write) are skipped and counted in corrupt; blank lines
// are ignored; a torn tail (NUL bytes, a line over MaxLineBytes) ends the
// reading and counts as one. Only a regular file is read; the text of
// each line is cleaned (textclean.JSON). An error from fn stops the
// reading and is returned.
func ReadRequests(dir string, fn func(*sender.Result) error) (corrupt int, err error) {
	path := filepath.Join(dir, RequestsFile)
	f, err := OpenRegular(path)
	if err != nil {
		return 0, fmt.Errorf("read requests: %w", err)
	}
	defer f.Close()
	torn, err := EachLine(f, MaxLineBytes, func(_ int64, line []byte) error {
		if line = bytes.TrimSpace(line); len(line) == 0 {
			return nil
		}
		var r sender.Result
		if json.Unmarshal(textclean.JSON(line), &r) != nil || r.RequestID == "" {
			corrupt++
			return nil
		}
		return fn(&r)
	})
	if torn {
		corrupt++
	}
	return corrupt, err
}
