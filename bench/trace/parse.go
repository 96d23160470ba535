// Package trace reads production KV-cache traces (Mooncake's FAST'25
// traces, Alibaba's Qwen-Bailian traces), builds prompts whose sharing is
// exactly the trace's, and predicts the cache hit each request should see
// (spec/trace.md). It holds no whole trace in memory: lines are read one
// at a time and block contents come from a bounded cache.
//
// A trace is a file from elsewhere: every number on a line is checked
// against the bounds below before anything is allocated for it, and
// reading holds at most one line (maxLine), whatever the line claims.
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

	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/jsonscan"
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

// Bounds on what one line may ask (spec/trace.md "Bounds on what a trace
// may ask"): the ranges of the workloads' flags. A line beyond one is
// invalid.
const (
	// MaxInputLength is the longest prompt, in tokens.
	MaxInputLength = config.MaxTokens
	// MaxOutputLength is the longest reply (max_tokens), in tokens.
	MaxOutputLength = 1 << 30
	// MaxTimestamp is the latest arrival from the trace's start: the
	// longest run (--duration's bound).
	MaxTimestamp = config.MaxDurationSeconds * time.Second
	// MaxChatIDBytes bounds a Bailian chat_id or parent_chat_id as
	// written (a sharded replay remembers them).
	MaxChatIDBytes = 256
)

// Request is one line of a trace.
type Request struct {
	// Line is the 0-based line number in the file.
	Line int
	// Timestamp is the arrival time from the trace's start.
	Timestamp    time.Duration
	InputLength  int
	OutputLength int
	// HashIDs are the ids of the prompt's blocks, exactly
	// ceil(input_length / block) of them.
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

// maxLine bounds one line of a trace, and so the memory reading takes (a
// 10M-token prompt in 16-token blocks is about 6 MB of ids).
const maxLine = 64 << 20

// ErrNotRegular is what opening a trace that is not a regular file (a
// FIFO, a device, a directory, a socket) fails with (errors.Is): it
// could block, never end, or not be read twice.
var ErrNotRegular = errors.New("not a regular file")

// Reader reads a trace line by line.
type Reader struct {
	path   string
	format Format
	block  int
	f      *os.File
	br     *bufio.Reader
	line   int    // number of the next line
	buf    []byte // a line longer than br's buffer; reused, at most maxLine
	sc     jsonscan.Scanner

	// The timestamp of the last valid line: one before it goes back.
	prev    time.Duration
	hasPrev bool

	passOver func(line int) bool // lines known to be invalid (PassOver)
}

// OpenFile opens a trace file for reading, only when it is a regular file
// (a symlink to one is followed): a FIFO neither blocks the open nor is
// read, a device such as /dev/zero is refused.
func OpenFile(path string) (*os.File, error) {
	f, err := openNoBlock(path)
	if err != nil {
		return nil, fmt.Errorf("--tr-file: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("--tr-file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("--tr-file %s: %w (%s); give a trace file", path, ErrNotRegular, FileKind(fi.Mode()))
	}
	return f, nil
}

// FileKind names what a file that is not regular is.
func FileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a plain file"
}

// Detect returns the format of the trace's first non-empty line (Bailian
// when it has chat_id, else Mooncake). An empty file is an error.
func Detect(path string) (Format, error) {
	f, err := OpenFile(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	r := &Reader{path: path, f: f, br: bufio.NewReaderSize(f, 64<<10)}
	for {
		line, err := r.readLine()
		n := r.line
		r.line++
		if errors.Is(err, errLineTooLong) {
			return "", &LineError{path, n, fmt.Sprintf("line longer than %d bytes", maxLine)}
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			s := &r.sc
			s.Reset(t)
			bailian := false
			ok := t[0] == '{' && s.Object(func(k []byte) bool {
				bailian = bailian || string(k) == "chat_id"
				return s.Skip()
			}) && s.End()
			if !ok {
				return "", &LineError{path, n, "not a JSON object: " + syntaxMsg(t)}
			}
			if bailian {
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
	if block < 1 || block > MaxInputLength {
		return nil, fmt.Errorf("--tr-block-size must be in [1, %d] (got %d)", MaxInputLength, block)
	}
	f, err := OpenFile(path)
	if err != nil {
		return nil, err
	}
	return &Reader{path: path, format: format, block: block, f: f, br: bufio.NewReaderSize(f, 256<<10)}, nil
}

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }

// Skip passes over the next n lines without parsing them.
func (r *Reader) Skip(n int) error {
	for ; n > 0; n-- {
		if _, err := r.readLine(); err != nil && !errors.Is(err, errLineTooLong) {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("read %s: %w", r.path, err)
		}
		r.line++
	}
	return nil
}

// PassOver makes Next pass over, unread, the lines for which known
// reports true (0-based), returning a *LineError for each: a second pass
// skips what the first found invalid without parsing it again (a 60 MB
// line is drained at the speed of the disk, into no buffer).
func (r *Reader) PassOver(known func(line int) bool) { r.passOver = known }

// Next returns the next non-empty line. A line that cannot be replayed is
// a *LineError (reading may go on after it); the end is io.EOF.
func (r *Reader) Next() (Request, error) {
	for {
		if n := r.line; r.passOver != nil && r.passOver(n) {
			if err := r.drainLine(); err != nil && err != io.EOF {
				return Request{}, fmt.Errorf("read %s: %w", r.path, err)
			}
			r.line++
			return Request{}, &LineError{r.path, n, "invalid (found when the trace was first read)"}
		}
		line, err := r.readLine()
		n := r.line
		if errors.Is(err, errLineTooLong) {
			r.line++
			return Request{}, &LineError{r.path, n, fmt.Sprintf("line longer than %d bytes", maxLine)}
		}
		if err == nil || len(line) > 0 {
			r.line++
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			q, err := r.parse(n, t)
			if err != nil {
				return q, err
			}
			if r.hasPrev && q.Timestamp < r.prev {
				return Request{}, &LineError{r.path, n, fmt.Sprintf("timestamp %s goes back before the previous request's %s: a trace's lines are in time order",
					r.formatTime(q.Timestamp), r.formatTime(r.prev))}
			}
			r.prev, r.hasPrev = q.Timestamp, true
			return q, nil
		}
		if err == io.EOF {
			return Request{}, io.EOF
		}
		if err != nil {
			return Request{}, fmt.Errorf("read %s: %w", r.path, err)
		}
	}
}

// formatTime writes d in the trace's own unit.
func (r *Reader) formatTime(d time.Duration) string {
	if r.format == Bailian {
		return strconv.FormatFloat(d.Seconds(), 'g', -1, 64)
	}
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'g', -1, 64)
}

var errLineTooLong = errors.New("line too long")

// readLine returns one line without its end; err is io.EOF after the
// last one, errLineTooLong (the line passed over) for a line over
// maxLine. The line is valid until the next call: a short one is a slice
// of the bufio buffer, a long one is copied into r.buf, which grows by
// doubling up to maxLine and is kept for the next long line.
func (r *Reader) readLine() ([]byte, error) {
	part, err := r.br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return bytes.TrimRight(part, "\r\n"), err
	}
	b := r.buf[:0]
	for {
		if len(b)+len(part) > maxLine {
			// Pass over the rest of the line and report it.
			if errors.Is(err, bufio.ErrBufferFull) {
				err = r.drainLine()
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
			return nil, errLineTooLong
		}
		if need := len(b) + len(part); need > cap(b) {
			nb := make([]byte, len(b), min(max(2*cap(b), need, 1<<20), maxLine))
			copy(nb, b)
			b = nb
			r.buf = nb
		}
		b = append(b, part...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return bytes.TrimRight(b, "\r\n"), err
		}
		part, err = r.br.ReadSlice('\n')
	}
}

// drainLine reads up to the end of the current line, keeping nothing.
func (r *Reader) drainLine() error {
	for {
		_, err := r.br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// The fields a line may carry.
const (
	fTimestamp = iota
	fInput
	fOutput
	fHashIDs
	fChatID
	fParent
	fType
	fTurn
	nFields
)

var fieldNames = [nFields]string{"timestamp", "input_length", "output_length", "hash_ids", "chat_id", "parent_chat_id", "type", "turn"}

func fieldOf(k []byte) int {
	switch string(k) {
	case "timestamp":
		return fTimestamp
	case "input_length":
		return fInput
	case "output_length":
		return fOutput
	case "hash_ids":
		return fHashIDs
	case "chat_id":
		return fChatID
	case "parent_chat_id":
		return fParent
	case "type":
		return fType
	case "turn":
		return fTurn
	}
	return -1
}

// requiredFields are every format's, then Bailian's own.
var requiredFields = [...]int{fTimestamp, fInput, fOutput, fHashIDs, fChatID, fParent, fType, fTurn}

// span is where a field's value lies in the line; start 0 is absent
// (a value never starts a line).
type span struct{ start, end int }

// parse reads one line. It walks the line once to find (and validate)
// every field's value without decoding any, then reads the numbers it
// needs and checks each against its bound before anything is allocated
// for it: hash_ids is read only up to the ids input_length needs.
func (r *Reader) parse(n int, b []byte) (Request, error) {
	bad := func(format string, a ...any) (Request, error) {
		return Request{}, &LineError{r.path, n, fmt.Sprintf(format, a...)}
	}
	if b[0] != '{' {
		return bad("not a JSON object")
	}
	var at [nFields]span
	s := &r.sc
	s.Reset(b)
	ok := s.Object(func(k []byte) bool {
		f := fieldOf(k)
		if f < 0 {
			return s.Skip()
		}
		if s.Peek() == 'n' { // null: as absent
			at[f] = span{}
			return s.Lit("null")
		}
		start := s.Pos()
		ok := s.Skip()
		at[f] = span{start, s.Pos()} // the last of a repeated name wins, as in encoding/json
		return ok
	}) && s.End()
	if !ok {
		return bad("not a valid %s line: %s", r.format, syntaxMsg(b))
	}
	required := requiredFields[:4]
	if r.format == Bailian {
		required = requiredFields[:]
	}
	for _, f := range required {
		if at[f].start == 0 {
			return bad("missing field %q (%s format)", fieldNames[f], r.format)
		}
	}

	ts, msg := r.timestamp(b, at[fTimestamp])
	if msg != "" {
		return bad("%s", msg)
	}
	in, msg := r.integer(b, at[fInput], "input_length", 1, MaxInputLength, "tokens in one prompt")
	if msg != "" {
		return bad("%s", msg)
	}
	out, msg := r.integer(b, at[fOutput], "output_length", 0, MaxOutputLength, "tokens in one reply")
	if msg != "" {
		return bad("%s", msg)
	}
	hashes, msg := r.hashIDs(b, at[fHashIDs], in)
	if msg != "" {
		return bad("%s", msg)
	}
	q := Request{Line: n, Timestamp: ts, InputLength: in, OutputLength: out, HashIDs: hashes}
	if r.format == Bailian {
		if q.ChatID, msg = chatID(b, at[fChatID], "chat_id"); msg != "" {
			return bad("%s", msg)
		}
		if q.ParentChatID, msg = chatID(b, at[fParent], "parent_chat_id"); msg != "" {
			return bad("%s", msg)
		}
	}
	return q, nil
}

// typeMsg is a value of the wrong JSON type, in encoding/json's words
// without Go type names.
func (r *Reader) typeMsg(field string, c byte) string {
	return fmt.Sprintf("not a valid %s line: field %q has a JSON %s where a %s is expected", r.format, field, jsonKind(c), wantKind(field))
}

func isNumStart(c byte) bool { return c == '-' || '0' <= c && c <= '9' }

var timestampLimit = fmt.Sprintf("the limit of %d s from the trace's start", MaxTimestamp/time.Second)

// timestamp reads the timestamp at sp in the format's unit: a number
// from 0 to MaxTimestamp.
func (r *Reader) timestamp(b []byte, sp span) (time.Duration, string) {
	text := bytes.TrimSpace(b[sp.start:sp.end])
	if !isNumStart(text[0]) {
		return 0, r.typeMsg("timestamp", text[0])
	}
	unit := time.Millisecond
	if r.format == Bailian {
		unit = time.Second
	}
	if len(text) > 64 {
		return 0, fmt.Sprintf("timestamp %s is above %s or not a plain number", shortNum(text), timestampLimit)
	}
	ts, _ := strconv.ParseFloat(string(text), 64) // valid JSON: only a range error, ±Inf
	switch {
	case ts < 0:
		return 0, fmt.Sprintf("timestamp must be a number >= 0 (got %s)", text)
	case math.IsInf(ts, 0) || ts > float64(MaxTimestamp/unit):
		return 0, fmt.Sprintf("timestamp %s is above %s", text, timestampLimit)
	}
	return time.Duration(ts * float64(unit)), ""
}

// integer reads the integer at sp, which must be in [lo, hi]; what says
// what hi bounds.
func (r *Reader) integer(b []byte, sp span, name string, lo, hi int, what string) (int, string) {
	s := &r.sc
	s.Seek(sp.start)
	if c := s.Peek(); !isNumStart(c) {
		return 0, r.typeMsg(name, c)
	}
	start := s.Pos()
	neg, integer, v, overflow, _ := s.Num() // validated by the first walk
	text := b[start:s.Pos()]
	// lo >= 0: a negative number is below it.
	switch {
	case !integer || neg && (v > 0 || overflow) || !overflow && v < uint64(lo):
		return 0, fmt.Sprintf("%s must be an integer >= %d (got %s)", name, lo, shortNum(text))
	case overflow || v > uint64(hi):
		return 0, fmt.Sprintf("%s %s is above the limit of %d %s", name, shortNum(text), hi, what)
	}
	return int(v), ""
}

// hashIDs reads the first ceil(in / block) ids of the array at sp: a
// line with fewer is invalid, and so is one with more, found as the
// first id past them is reached (the rest is never decoded). The slice
// is sized by what the array's bytes can hold, never by what
// input_length claims.
func (r *Reader) hashIDs(b []byte, sp span, in int) ([]int64, string) {
	s := &r.sc
	s.Seek(sp.start)
	if c := s.Peek(); c != '[' {
		return nil, r.typeMsg("hash_ids", c)
	}
	need := (in-1)/r.block + 1 // in >= 1: no overflow
	// Each id takes at least two bytes: a digit and a comma or bracket.
	hashes := make([]int64, 0, min(need, (sp.end-sp.start)/2))
	var msg string
	s.Array(func() bool {
		if len(hashes) == need {
			msg = fmt.Sprintf("hash_ids has more than the %d ids that input_length %d needs in %d-token blocks", need, in, r.block)
			return false
		}
		c := s.Peek()
		if !isNumStart(c) {
			msg = fmt.Sprintf("not a valid %s line: hash_ids[%d] is a JSON %s, not an integer", r.format, len(hashes), jsonKind(c))
			return false
		}
		start := s.Pos()
		neg, integer, v, overflow, _ := s.Num()
		if !integer || overflow {
			msg = fmt.Sprintf("hash_ids[%d] must be an integer of at most 64 bits (got %s)", len(hashes), shortNum(b[start:s.Pos()]))
			return false
		}
		h := int64(v) // v < 2^63 without overflow
		if neg {
			h = -h
		}
		hashes = append(hashes, h)
		return true
	})
	if msg != "" {
		return nil, msg
	}
	if len(hashes) < need {
		return nil, fmt.Sprintf("hash_ids has %d ids, fewer than the %d that input_length %d needs in %d-token blocks", len(hashes), need, in, r.block)
	}
	return hashes, ""
}

// chatID is a Bailian conversation link as written: a number or a string
// of at most MaxChatIDBytes.
func chatID(b []byte, sp span, name string) (string, string) {
	raw := bytes.TrimSpace(b[sp.start:sp.end])
	if c := raw[0]; c != '"' && !isNumStart(c) {
		return "", fmt.Sprintf("%s must be a number or a string (got a JSON %s)", name, jsonKind(c))
	}
	if len(raw) > MaxChatIDBytes {
		return "", fmt.Sprintf("%s is %d bytes long, over the limit of %d", name, len(raw), MaxChatIDBytes)
	}
	return string(raw), ""
}

// shortNum is a number's text for a message: a long one is cut (its
// bytes are digits, signs, dots and exponents: nothing to clean).
func shortNum(t []byte) string {
	if len(t) <= 40 {
		return string(t)
	}
	return fmt.Sprintf("%s... (%d characters)", t[:24], len(t))
}

// jsonKind names the JSON type of a value from its first byte.
func jsonKind(c byte) string {
	switch {
	case c == '"':
		return "string"
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == 't' || c == 'f':
		return "bool"
	case c == 'n':
		return "null"
	}
	return "number"
}

// syntaxMsg says where a line that is not valid JSON breaks, in
// encoding/json's words (its check stops at the first error and decodes
// nothing).
func syntaxMsg(b []byte) string {
	var v struct{}
	if err := json.Unmarshal(b, &v); err != nil {
		return jsonMsg(err)
	}
	return "invalid JSON"
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
