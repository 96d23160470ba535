// Package trace reads production KV-cache traces (Mooncake's FAST'25
// traces, Alibaba's Qwen-Bailian traces), builds prompts whose sharing is
// exactly the trace's, and predicts the cache hit each request should see
// (spec/trace.md). It holds no whole trace in memory: lines are read one
// at a time and block contents come from a bounded cache.
package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"time"
)

// Format is a trace's line format.
type Format string

const (
	// Auto picks Bailian when a line has chat_id, else Mooncake.
	Auto     Format = "auto"
	Mooncake Format = "mooncake"
	Bailian  Format = "bailian"
)

// DefaultBlockSize is the tokens per hash id the format's publishers used.
func DefaultBlockSize(f Format) int {
	if f == Bailian {
		return 16
	}
	return 512
}

// Request is one line of a trace.
type Request struct {
	// Line is the 0-based line number in the file.
	Line int
	// Timestamp is the arrival time from the trace's start.
	Timestamp    time.Duration
	InputLength  int
	OutputLength int
	// HashIDs are the ids of the prompt's blocks, exactly as many as the
	// input covers (ids past ceil(input_length / block) are dropped).
	HashIDs []int64
	// ChatID and ParentChatID are Bailian's conversation links as written
	// in the line (ParentChatID "-1" for a root); empty for Mooncake.
	ChatID, ParentChatID string
}

// LineError is a line that cannot be replayed; its message names the file
// and the line (1-based, as editors count).
type LineError struct {
	File string
	Line int // 0-based
	Msg  string
}

func (e *LineError) Error() string {
	return fmt.Sprintf("trace %s line %d: %s", e.File, e.Line+1, e.Msg)
}

// maxLine bounds one line of a trace (a 1M-token prompt in 16-token
// blocks is about 600 KB of ids).
const maxLine = 64 << 20

// Reader reads a trace line by line.
type Reader struct {
	path   string
	format Format
	block  int
	f      *os.File
	br     *bufio.Reader
	line   int // number of the next line
}

// Detect returns the format of the trace's first non-empty line (Bailian
// when it has chat_id, else Mooncake). An empty file is an error.
func Detect(path string) (Format, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("--tr-file: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	for n := 0; ; n++ {
		line, err := readLine(br)
		if t := bytes.TrimSpace(line); len(t) > 0 {
			var probe struct {
				ChatID json.RawMessage `json:"chat_id"`
			}
			if jerr := json.Unmarshal(t, &probe); jerr != nil {
				return "", &LineError{path, n, "not a JSON object: " + jsonMsg(jerr)}
			}
			if probe.ChatID != nil {
				return Bailian, nil
			}
			return Mooncake, nil
		}
		if err == io.EOF {
			return "", fmt.Errorf("--tr-file %s: the trace has no lines", path)
		}
		if err != nil {
			return "", fmt.Errorf("--tr-file %s: %w", path, err)
		}
	}
}

// Open opens a trace of a known format (not Auto) with block tokens per
// hash id.
func Open(path string, format Format, block int) (*Reader, error) {
	if format != Mooncake && format != Bailian {
		return nil, fmt.Errorf("trace format %q: want mooncake or bailian", format)
	}
	if block < 1 {
		return nil, fmt.Errorf("--tr-block-size must be >= 1 (got %d)", block)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--tr-file: %w", err)
	}
	return &Reader{path: path, format: format, block: block, f: f, br: bufio.NewReaderSize(f, 256<<10)}, nil
}

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }

// Skip passes over the next n lines without parsing them.
func (r *Reader) Skip(n int) error {
	for ; n > 0; n-- {
		if _, err := readLine(r.br); err != nil {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("read %s: %w", r.path, err)
		}
		r.line++
	}
	return nil
}

// Next returns the next non-empty line. A line that cannot be replayed is
// a *LineError (reading may go on after it); the end is io.EOF.
func (r *Reader) Next() (Request, error) {
	for {
		line, err := readLine(r.br)
		n := r.line
		if err == nil || len(line) > 0 {
			r.line++
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if errors.Is(err, errLineTooLong) {
				return Request{}, &LineError{r.path, n, fmt.Sprintf("line longer than %d bytes", maxLine)}
			}
			return r.parse(n, t)
		}
		if err == io.EOF {
			return Request{}, io.EOF
		}
		if err != nil && !errors.Is(err, errLineTooLong) {
			return Request{}, fmt.Errorf("read %s: %w", r.path, err)
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns one line without its end; err is io.EOF after the
// last one.
func readLine(br *bufio.Reader) ([]byte, error) {
	var full []byte
	for {
		part, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(full)+len(part) > maxLine {
				// Drain the rest of the line and report it.
				for errors.Is(err, bufio.ErrBufferFull) {
					_, err = br.ReadSlice('\n')
				}
				return []byte("x"), errLineTooLong
			}
			full = append(full, part...)
			continue
		}
		if full != nil {
			part = append(full, part...)
		}
		return bytes.TrimRight(part, "\r\n"), err
	}
}

type rawLine struct {
	Timestamp    *json.Number    `json:"timestamp"`
	InputLength  *json.Number    `json:"input_length"`
	OutputLength *json.Number    `json:"output_length"`
	HashIDs      *[]json.Number  `json:"hash_ids"`
	ChatID       json.RawMessage `json:"chat_id"`
	ParentChatID json.RawMessage `json:"parent_chat_id"`
	Type         json.RawMessage `json:"type"`
	Turn         json.RawMessage `json:"turn"`
}

func (r *Reader) parse(n int, b []byte) (Request, error) {
	bad := func(format string, a ...any) (Request, error) {
		return Request{}, &LineError{r.path, n, fmt.Sprintf(format, a...)}
	}
	if b[0] != '{' {
		return bad("not a JSON object")
	}
	var raw rawLine
	if err := json.Unmarshal(b, &raw); err != nil {
		return bad("not a valid %s line: %s", r.format, jsonMsg(err))
	}
	missing := ""
	switch {
	case raw.Timestamp == nil:
		missing = "timestamp"
	case raw.InputLength == nil:
		missing = "input_length"
	case raw.OutputLength == nil:
		missing = "output_length"
	case raw.HashIDs == nil:
		missing = "hash_ids"
	}
	if missing == "" && r.format == Bailian {
		for _, f := range []struct {
			name string
			v    json.RawMessage
		}{{"chat_id", raw.ChatID}, {"parent_chat_id", raw.ParentChatID}, {"type", raw.Type}, {"turn", raw.Turn}} {
			if f.v == nil {
				missing = f.name
				break
			}
		}
	}
	if missing != "" {
		return bad("missing field %q (%s format)", missing, r.format)
	}
	ts, err := raw.Timestamp.Float64()
	if err != nil || ts < 0 || math.IsInf(ts, 0) {
		return bad("timestamp must be a number >= 0 (got %s)", *raw.Timestamp)
	}
	in, err := strconv.Atoi(raw.InputLength.String())
	if err != nil || in < 1 {
		return bad("input_length must be an integer >= 1 (got %s)", *raw.InputLength)
	}
	out, err := strconv.Atoi(raw.OutputLength.String())
	if err != nil || out < 0 {
		return bad("output_length must be an integer >= 0 (got %s)", *raw.OutputLength)
	}
	need := (in + r.block - 1) / r.block
	ids := *raw.HashIDs
	if len(ids) < need {
		return bad("hash_ids has %d ids, fewer than the %d that input_length %d needs in %d-token blocks", len(ids), need, in, r.block)
	}
	hashes := make([]int64, need)
	for i := range hashes {
		h, err := strconv.ParseInt(ids[i].String(), 10, 64)
		if err != nil {
			return bad("hash_ids[%d] must be an integer (got %s)", i, ids[i])
		}
		hashes[i] = h
	}
	unit := time.Millisecond
	if r.format == Bailian {
		unit = time.Second
	}
	d := ts * float64(unit)
	if d > float64(math.MaxInt64/2) {
		return bad("timestamp %s is too large", *raw.Timestamp)
	}
	return Request{Line: n, Timestamp: time.Duration(d), InputLength: in, OutputLength: out, HashIDs: hashes,
		ChatID: string(raw.ChatID), ParentChatID: string(raw.ParentChatID)}, nil
}

// jsonMsg is a decoding error in words a trace author reads, without Go
// type names.
func jsonMsg(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &te):
		return fmt.Sprintf("field %q has a JSON %s where a %s is expected", te.Field, te.Value, wantKind(te.Field))
	}
	return err.Error()
}

func wantKind(field string) string {
	if field == "hash_ids" {
		return "list of integers"
	}
	return "number"
}
