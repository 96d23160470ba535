package record

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"github.com/kvbench/kvbench/bench/sender"
)

// ReadRequests streams <dir>/requests.jsonl to fn one result at a time,
// as EachRequest reads it; each result is fn's to keep. A missing file
// is an error wrapping os.ErrNotExist; an error from fn is returned as
// it is.
func ReadRequests(dir string, fn func(*sender.Result) error) (corrupt int, err error) {
	path := filepath.Join(dir, RequestsFile)
	f, err := OpenRegular(path)
	if err != nil {
		return 0, fmt.Errorf("read requests: %w", err)
	}
	defer f.Close()
	return EachRequest(f, false, func(_ LineAt, r *sender.Result) error { return fn(r) })
}

// SkimRequests is ReadRequests for a reader that only looks: each
// result is LineDecoder.Skim's, valid during the call only, with where
// its line is.
func SkimRequests(dir string, fn func(at LineAt, r *sender.Result) error) (corrupt int, err error) {
	f, err := OpenRegular(filepath.Join(dir, RequestsFile))
	if err != nil {
		return 0, fmt.Errorf("read requests: %w", err)
	}
	defer f.Close()
	return EachRequest(f, true, fn)
}

// ReadLines hands fn every non-blank line of the regular file at path
// (a record's JSONL file: metrics.jsonl, series), without its line end,
// valid during the call only. It stops at a torn tail, as EachRequest
// does, and says so in torn.
func ReadLines(path string, fn func(line []byte) error) (torn bool, err error) {
	f, err := OpenRegular(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return EachLine(f, MaxLineBytes, func(_ int64, line []byte) error {
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		return fn(line)
	})
}

// LineAt is where a request line is in its file: its start offset and
// its length without the line end ("\n" or "\r\n").
type LineAt struct {
	Start int64
	Len   int
}

// EachRequest is the one reader of requests.jsonl's lines
// (spec/record.md, "Reading the record safely"): lines as EachLine cuts
// them, a torn tail (a NUL, a line over MaxLineBytes) ending the reading
// and counted as one corrupt line; blank lines ignored; a line that is
// not a request (LineDecoder) skipped and counted. With skim, results
// are LineDecoder.Skim's, valid during the call only; otherwise each is
// Decode's, fn's to keep. An error from fn stops the reading and is
// returned as it is.
func EachRequest(in io.Reader, skim bool, fn func(at LineAt, r *sender.Result) error) (corrupt int, err error) {
	var d LineDecoder
	torn, err := EachLine(in, MaxLineBytes, func(start int64, line []byte) error {
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		var r *sender.Result
		ok := false
		if skim {
			r = &d.skimmed
			ok = d.Skim(line, r)
		} else {
			r = new(sender.Result)
			ok = d.Decode(line, r)
		}
		if !ok {
			corrupt++
			return nil
		}
		return fn(LineAt{Start: start, Len: len(line)}, r)
	})
	if torn {
		corrupt++
	}
	return corrupt, err
}
