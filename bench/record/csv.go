package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"github.com/kvbench/kvbench/internal/textclean"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kvbench/kvbench/bench/sender"
)

// CSVHeader is bench_results.csv's columns: LMCache's 11, then kvbench's.
var CSVHeader = []string{
	"request_id", "successful", "ttft", "request_latency", "num_input_tokens",
	"num_output_tokens", "decode_speed", "submit_time", "first_token_time",
	"finish_time", "error",
	"prompt_tokens", "cached_tokens", "cache_state", "complete", "chunks",
	"itl_mean_ms", "output_sha256",
}

// WriteCSV writes bench_results.csv: measured requests only, in the
// order they finished (the order of requests.jsonl). After StreamCSV it
// only finishes the file the rows were streamed to as the requests
// finished; otherwise (a merge), or when that fails, it reads
// requests.jsonl once. Either way no result is held
// in memory.
//
// Values are written as LMCache's Python csv module writes its
// RequestResult: booleans True/False; floats in Python's repr (shortest
// round-trip digits, always a decimal point or exponent: 0.5, 12.0,
// 1e-05); times in seconds (ttft, request_latency) and Unix seconds
// (submit_time, first_token_time, finish_time); ttft -1.0 and
// first_token_time 0.0 when there was no first token; num_input_tokens the
// server's prompt count or 0; num_output_tokens completion_tokens when > 0,
// else the number of chunks; error empty when none, else the error code,
// followed by ": " and the detail when there is one. A null in kvbench's
// columns is an empty field. Quoting is minimal and lines end in CRLF,
// the csv module's defaults.
func (w *Writer) WriteCSV() error {
	w.release()
	w.mu.Lock()
	cs := w.csv
	w.csv = nil
	w.mu.Unlock()
	if cs != nil && cs.finish(filepath.Join(w.dir, CSVFile)) == nil {
		return nil
	}
	// Not streamed, or the stream failed (a full disk, now with the
	// spare released): read the lines.
	return writeAtomicFunc(filepath.Join(w.dir, CSVFile), func(out io.Writer) error {
		var buf bytes.Buffer
		flush := func() error {
			_, err := out.Write(buf.Bytes())
			buf.Reset()
			return err
		}
		writeCSVRow(&buf, CSVHeader)
		_, err := ReadRequests(w.dir, func(r *sender.Result) error {
			if !r.Measured() {
				return nil
			}
			appendCSVRow(&buf, r)
			return flush()
		})
		if err != nil {
			return err
		}
		return flush()
	})
}

// StreamCSV makes Append write each measured request's CSV row as its
// line is written, to a temporary file in the run folder that WriteCSV
// renames into place: the end of a run of a million requests then only
// flushes and renames, instead of reading every line back. Call it
// before the first Append. An error leaves the Writer as it was (WriteCSV
// then reads the lines).
func (w *Writer) StreamCSV() error {
	f, err := os.CreateTemp(w.dir, "."+CSVFile+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(w.dir, CSVFile), err)
	}
	cs := &csvStream{f: f, w: bufio.NewWriterSize(f, 64<<10)}
	var head bytes.Buffer
	writeCSVRow(&head, CSVHeader)
	cs.write(head.Bytes())
	w.mu.Lock()
	w.csv = cs
	w.mu.Unlock()
	w.streamCSV.Store(true)
	return nil
}

// streaming reports whether Append formats CSV rows.
func (w *Writer) streaming() bool { return w.streamCSV.Load() }

// csvWanted reports whether r has a row in the CSV: a measured request
// whose line reads back (a line without a request id does not).
func csvWanted(r *sender.Result) bool { return r.Measured() && r.RequestID != "" }

// csvStream is bench_results.csv being written as requests finish; its
// methods are called under the Writer's lock.
type csvStream struct {
	f      *os.File
	w      *bufio.Writer
	failed bool // a write failed: the file is given up
}

func (c *csvStream) write(b []byte) {
	if c.failed {
		return
	}
	if _, err := c.w.Write(b); err != nil {
		c.failed = true
	}
}

// finish flushes, syncs and renames the file to path; on any failure the
// temporary file is removed.
func (c *csvStream) finish(path string) error {
	tmp := c.f.Name()
	err := error(nil)
	if c.failed {
		err = errors.New("a row could not be written")
	}
	if err == nil {
		err = c.w.Flush()
	}
	if err == nil {
		err = c.f.Sync()
	}
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		c.failed = true
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// abandon closes and removes the unfinished file.
func (c *csvStream) abandon() {
	c.failed = true
	c.f.Close()
	os.Remove(c.f.Name())
}

// appendCSVRow writes r's row. Text fields are what reading r's line back
// gives: encoding/json turns each byte of invalid UTF-8 into U+FFFD, and
// the record's reader cleans terminal controls (textclean), so a row
// streamed from the live result and one read from its line are the same
// bytes, and neither carries a control sequence from the engine.
func appendCSVRow(buf *bytes.Buffer, r *sender.Result) {
	ttft := -1.0
	if r.TTFT != nil {
		ttft = *r.TTFT
	}
	first := 0.0
	if r.FirstTokenTime != nil {
		first = *r.FirstTokenTime
	}
	in := 0
	if r.PromptTokens != nil && *r.PromptTokens > 0 {
		in = *r.PromptTokens
	}
	out := r.Chunks
	if r.CompletionTokens != nil && *r.CompletionTokens > 0 {
		out = *r.CompletionTokens
	}
	var num [32]byte
	text := func(s string) {
		writeCSVField(buf, textclean.Clean(jsonText(s)))
		buf.WriteByte(',')
	}
	float := func(v float64) {
		buf.Write(appendPyFloat(num[:0], v))
		buf.WriteByte(',')
	}
	integer := func(n int) {
		buf.Write(strconv.AppendInt(num[:0], int64(n), 10))
		buf.WriteByte(',')
	}
	boolean := func(b bool) {
		buf.WriteString(pyBool(b))
		buf.WriteByte(',')
	}
	text(r.RequestID)
	boolean(r.Successful)
	float(ttft)
	float(r.RequestLatency)
	integer(in)
	integer(out)
	float(zeroIfNil(r.DecodeSpeed))
	float(r.SubmitTime)
	float(first)
	float(r.FinishTime)
	switch {
	case r.Error == nil:
		buf.WriteByte(',')
	case r.ErrorDetail != nil && *r.ErrorDetail != "":
		text(jsonText(*r.Error) + ": " + jsonText(*r.ErrorDetail))
	default:
		text(*r.Error)
	}
	if r.PromptTokens != nil {
		buf.Write(strconv.AppendInt(num[:0], int64(*r.PromptTokens), 10))
	}
	buf.WriteByte(',')
	if r.CachedTokens != nil {
		buf.Write(strconv.AppendInt(num[:0], int64(*r.CachedTokens), 10))
	}
	buf.WriteByte(',')
	text(r.CacheState)
	boolean(r.Complete)
	integer(r.Chunks)
	if r.ITLMeanMs != nil {
		buf.Write(appendPyFloat(num[:0], *r.ITLMeanMs))
	}
	buf.WriteByte(',')
	if r.OutputSHA256 != nil {
		writeCSVField(buf, textclean.Clean(jsonText(*r.OutputSHA256)))
	}
	buf.WriteString("\r\n")
}

// jsonText is s as encoding/json writes it and reads it back: each byte
// of invalid UTF-8 becomes U+FFFD.
func jsonText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			b.WriteString("\ufffd")
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// writeCSVRow writes one row as Python's csv.writer does by default
// (QUOTE_MINIMAL, "\r\n"): a field is quoted only when it holds a comma,
// a quote or a line break, and quotes inside are doubled.
func writeCSVRow(buf *bytes.Buffer, fields []string) {
	for i, f := range fields {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeCSVField(buf, f)
	}
	buf.WriteString("\r\n")
}

func writeCSVField(buf *bytes.Buffer, f string) {
	if !strings.ContainsAny(f, ",\"\r\n") {
		buf.WriteString(f)
		return
	}
	buf.WriteByte('"')
	for {
		i := strings.IndexByte(f, '"')
		if i < 0 {
			break
		}
		buf.WriteString(f[:i+1])
		buf.WriteByte('"')
		f = f[i+1:]
	}
	buf.WriteString(f)
	buf.WriteByte('"')
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// pyFloat formats v as Python's repr(float): the shortest digits that
// round-trip, positional for exponents -4 <= e < 16 (always with a decimal
// point), else scientific with a signed two-digit-minimum exponent.
func pyFloat(v float64) string { return string(appendPyFloat(nil, v)) }

// appendPyFloat appends pyFloat(v) to dst.
func appendPyFloat(dst []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(dst, "nan"...)
	case math.IsInf(v, 1):
		return append(dst, "inf"...)
	case math.IsInf(v, -1):
		return append(dst, "-inf"...)
	}
	var tmp [32]byte
	s := strconv.AppendFloat(tmp[:0], v, 'e', -1, 64) // e.g. -1.2345e+03
	at := bytes.IndexByte(s, 'e')
	e, _ := strconv.Atoi(string(s[at+1:]))
	if e < -4 || e >= 16 {
		dst = append(dst, s[:at]...)
		dst = append(dst, 'e', '+')
		if e < 0 {
			dst[len(dst)-1], e = '-', -e
		}
		if e < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendInt(dst, int64(e), 10)
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, v, 'f', -1, 64)
	if bytes.IndexByte(dst[start:], '.') < 0 {
		dst = append(dst, ".0"...)
	}
	return dst
}

// zeroIfNil is LMCache's CSV convention for an undefined figure: 0.
func zeroIfNil(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}
