package sender

import (
	"bytes"
	"crypto/sha256"
	"hash"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/internal/jsonscan"
)

// Error codes of a Result (spec/record.md), plus this package's additions
// `canceled` (the caller's context ended the request), `invalid_request`
// (the request could not be encoded) and `internal` (a recovered bug).
// `response_too_long`: the body grew past Options.MaxResponseBytes (an
// engine that never ends its stream).
const (
	ErrStreamError     = "stream_error"
	ErrInvalidJSON     = "invalid_json"
	ErrConnect         = "connect"
	ErrIdleTimeout     = "idle_timeout"
	ErrTimeout         = "timeout"
	ErrIncomplete      = "incomplete"
	ErrLineTooLong     = "line_too_long"
	ErrResponseTooLong = "response_too_long"
	ErrCanceled        = "canceled"
	ErrInvalidRequest  = "invalid_request"
	ErrInternal        = "internal"
)

// DefaultMaxLineBytes is the SSE line limit when none is given.
const DefaultMaxLineBytes = 16 << 20

// DefaultMaxResponseBytes is the response body limit when none is given:
// far above any reply a benchmark asks for (a million tokens of a verbose
// engine's chunks), far below what an endless stream would take.
const DefaultMaxResponseBytes = 256 << 20

// maxExactChunks bounds the chunk arrival times a stream keeps: up to it
// the ITL and round-gap percentiles are exact; past it every gap goes to a
// GapHistogram instead (relative error at most 1/128), so an endless or
// huge stream holds at most 128 KiB of arrivals and one histogram.
const maxExactChunks = 1 << 14

// chainWait: a read that follows one which filled the buffer, and that
// returns within chainWait, returned bytes that were already waiting (in
// the transport's buffer or the socket's): they were delivered with the
// previous read and share its arrival time. A read that blocks for new
// bytes takes far longer (the engine's next write, the network).
const chainWait = 100 * time.Microsecond

const (
	// SSE events are a few hundred bytes; the buffer grows for longer
	// lines. Thousands of streams in flight each hold one, on top of the
	// transport's own 4 KiB read buffer per connection, so 2 KiB: a read
	// still takes several events, and the memory is half.
	initialBuf = 2 << 10
	// initialEvent fits one event's data (a chunk, the usage chunk) and
	// the chunk template without regrowing.
	initialEvent = 512
	// Buffers grown past these sizes by one long stream are not pooled.
	maxPooledBuf = 1 << 20
	maxDetailLen = 200
	// A finish_reason is a word ("stop", "length"); longer text is cut.
	maxFinishLen     = 64
	maxDetailScanLen = 64 << 10
)

var bom = []byte{0xEF, 0xBB, 0xBF}

// stream parses one SSE response body and measures it. It is pooled: the
// buffers, hashers and arrival slice are reused from request to request,
// so the per-chunk path allocates nothing.
type stream struct {
	// Set per use.
	submit   time.Time
	now      func() time.Time
	maxLine  int
	maxResp  int64
	keepText bool
	red      *redactor // secrets to keep out of error details; nil: none
	// lastRead, when set, receives the time of every read (as nanoseconds
	// since submit) for the idle watchdog.
	lastRead *atomic.Int64

	// Reading.
	buf    []byte
	r, w   int
	skipLF bool // the last line ended in CR: a following LF belongs to it
	// clean is the buffer offset up to which the unfinished line has been
	// searched for line ends already: a long line arriving in many reads
	// is scanned once, not once per read.
	clean   int
	started bool // the leading BOM was looked for
	// readAt is the arrival time of the bytes being parsed: the instant
	// of the read that delivered them (see chainWait).
	readAt time.Time
	full   bool  // the last read filled the space it was given
	total  int64 // body bytes read

	// The event being assembled.
	ev      []byte
	evData  bool
	evError bool

	sc jsonscan.Scanner
	ch chunk

	// tmpl is the last chunk that can serve as a template: a chunk equal
	// to it outside the bytes tmpl[tmplStart:tmplEnd] (one content
	// string's value) needs only that string scanned.
	tmpl               []byte
	tmplStart, tmplEnd int
	tmplOK             bool

	// Outcome.
	done      bool
	seen      bool // a choice or usage chunk arrived
	complete  bool
	errCode   string
	errDetail string
	finish    time.Time
	first     time.Time
	// firstContent is the first content (not reasoning) chunk's arrival.
	firstContent time.Time
	hasFirst     bool
	chunks       int
	// Content/reasoning chunk arrivals since submit: the first and the
	// last, the first maxExactChunks of them (result turns them into
	// gaps), and past that every gap in hist.
	firstArr, lastArr time.Duration
	arrivals          []time.Duration
	hist              *GapHistogram
	spilled           bool // the gaps are in hist
	contentH          hash.Hash
	reasonH           hash.Hash
	hasOutput         bool
	usage             usage
	hasUsage          bool
	cacheN            count
	tokenSHA          [64]byte
	digests           [2 * sha256.Size]byte
	tokenSHALn        int
	finishWhy         []byte
	hasFinish         bool
	reasonFld         string
	text              []byte
}

var streamPool = sync.Pool{New: func() any {
	return &stream{
		buf:      make([]byte, initialBuf),
		ev:       make([]byte, 0, initialEvent),
		tmpl:     make([]byte, 0, initialEvent),
		contentH: sha256.New(),
		reasonH:  sha256.New(),
	}
}}

func getStream(submit time.Time, now func() time.Time, maxLine int, keepText bool) *stream {
	s := streamPool.Get().(*stream)
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	if now == nil {
		now = time.Now
	}
	s.submit, s.now, s.maxLine, s.keepText, s.lastRead = submit, now, maxLine, keepText, nil
	s.maxResp, s.red = DefaultMaxResponseBytes, nil
	s.r, s.w, s.skipLF, s.clean, s.started, s.readAt = 0, 0, false, 0, false, time.Time{}
	s.full, s.total = false, 0
	s.ev, s.evData, s.evError = s.ev[:0], false, false
	s.tmplOK = false
	s.done, s.seen, s.complete, s.errCode, s.errDetail = false, false, false, "", ""
	s.finish, s.first, s.hasFirst, s.chunks = time.Time{}, time.Time{}, false, 0
	s.firstContent = time.Time{}
	s.arrivals, s.firstArr, s.lastArr, s.spilled = s.arrivals[:0], 0, 0, false
	s.contentH.Reset()
	s.reasonH.Reset()
	s.hasOutput, s.usage, s.hasUsage, s.cacheN, s.tokenSHALn = false, usage{}, false, count{}, 0
	s.finishWhy, s.hasFinish, s.reasonFld, s.text = s.finishWhy[:0], false, "", s.text[:0]
	return s
}

func putStream(s *stream) {
	if len(s.buf) > maxPooledBuf {
		s.buf = make([]byte, initialBuf)
	}
	if cap(s.ev) > maxPooledBuf {
		s.ev = nil
	}
	if cap(s.tmpl) > maxPooledBuf {
		s.tmpl = nil
	}
	if cap(s.text) > maxPooledBuf {
		s.text = nil
	}
	s.now, s.lastRead, s.red = nil, nil, nil
	streamPool.Put(s)
}

// reserve sizes the arrival times for a reply of up to maxTokens chunks
// at once, rather than growing them by doubling, which leaves garbage
// behind for every new pooled stream when thousands start together.
func (s *stream) reserve(maxTokens int) {
	if n := min(maxTokens, maxExactChunks); n > cap(s.arrivals) {
		s.arrivals = make([]time.Duration, 0, n)
	}
}

// fail records the first error and stops the stream. Every error detail
// passes here, whatever its path, and leaves as the redactor's one
// clean line: no secret, no terminal control.
func (s *stream) fail(code, detail string, at time.Time) {
	if s.errCode == "" {
		s.errCode, s.errDetail = code, s.red.detail(detail)
		s.finish = at
	}
	s.done = true
}

// consume reads the body until [DONE], an error, or EOF. A non-nil error is
// a read error the caller classifies (timeouts, cancellation, resets).
func (s *stream) consume(body io.Reader) error {
	for !s.done {
		if s.w == len(s.buf) {
			s.makeRoom()
		}
		p := s.buf[s.w:]
		var before time.Time
		if s.full {
			before = s.now()
		}
		n, err := body.Read(p)
		if n > 0 {
			t := s.now()
			if !s.full || t.Sub(before) > chainWait {
				s.readAt = t
			}
			s.full = n == len(p)
			if s.lastRead != nil {
				s.lastRead.Store(int64(t.Sub(s.submit)))
			}
			if s.total += int64(n); s.total > s.maxResp {
				s.fail(ErrResponseTooLong, "the response is over "+itoa(int(s.maxResp))+" bytes (--max-response-bytes)", t)
				return nil
			}
			s.w += n
			s.scan(false)
		}
		if err != nil && !s.done {
			if err == io.EOF {
				s.eof()
				return nil
			}
			return err
		}
	}
	return nil
}

// makeRoom moves the partial line to the front, or grows the buffer when
// the partial line fills it (scan has already refused lines over the
// limit, so growth stops near maxLine).
func (s *stream) makeRoom() {
	if s.r > 0 {
		s.w = copy(s.buf, s.buf[s.r:s.w])
		s.clean = max(0, s.clean-s.r)
		s.r = 0
		return
	}
	n := min(2*len(s.buf), s.maxLine+2)
	if n <= len(s.buf) {
		n = len(s.buf) + 1
	}
	nb := make([]byte, n)
	copy(nb, s.buf[:s.w])
	s.buf = nb
}

// scan splits the buffered bytes into lines (LF, CRLF or CR) and feeds
// them to line. At EOF an unterminated last line is a line too.
func (s *stream) scan(eof bool) {
	for !s.done {
		seg := s.buf[s.r:s.w]
		if !s.started {
			if len(seg) < len(bom) && !eof && bytes.HasPrefix(bom, seg) {
				return
			}
			if bytes.HasPrefix(seg, bom) {
				s.r += len(bom)
				seg = seg[len(bom):]
			}
			s.started = true
		}
		if s.skipLF {
			if len(seg) == 0 {
				return
			}
			if seg[0] == '\n' {
				s.r++
				seg = seg[1:]
			}
			s.skipLF = false
		}
		from := max(0, s.clean-s.r)
		var line []byte
		if nl := bytes.IndexByte(seg[from:], '\n'); nl >= 0 {
			nl += from
			line = seg[:nl]
			s.r += nl + 1
			if cr := bytes.IndexByte(line[from:], '\r'); cr >= 0 {
				cr += from
				// CRLF, or a CR-terminated line before this LF.
				line = seg[:cr]
				if cr != nl-1 {
					s.r -= nl - cr
				}
			}
		} else if cr := bytes.IndexByte(seg[from:], '\r'); cr >= 0 {
			cr += from
			line = seg[:cr]
			s.r += cr + 1
			s.skipLF = cr == len(seg)-1
		} else {
			s.clean = s.w
			if len(seg) > s.maxLine {
				s.tooLong()
				return
			}
			if eof && len(seg) > 0 {
				s.r = s.w
				s.line(seg)
			}
			return
		}
		if len(line) > s.maxLine {
			s.tooLong()
			return
		}
		s.line(line)
	}
}

func (s *stream) tooLong() {
	s.fail(ErrLineTooLong, "an SSE line is over "+itoa(s.maxLine)+" bytes", s.readAt)
}

// line applies one SSE line to the event being assembled.
func (s *stream) line(l []byte) {
	if len(l) == 0 {
		s.dispatch(false)
		return
	}
	if l[0] == ':' {
		return // comment or keep-alive
	}
	var field, val []byte
	if len(l) > 5 && string(l[:5]) == "data:" {
		field, val = l[:4], l[5:]
	} else if i := bytes.IndexByte(l, ':'); i >= 0 {
		field, val = l[:i], l[i+1:]
	} else {
		field = l
	}
	if len(val) > 0 && val[0] == ' ' {
		val = val[1:]
	}
	switch string(field) {
	case "data":
		if s.evData {
			s.ev = append(s.ev, '\n')
		}
		s.ev = append(s.ev, val...)
		s.evData = true
		if len(s.ev) > s.maxLine {
			s.fail(ErrLineTooLong, "an SSE event's data is over "+itoa(s.maxLine)+" bytes", s.readAt)
		}
	case "event":
		s.evError = string(val) == "error"
	}
}

// dispatch handles a complete event. At EOF (lenient) a pending event that
// is not valid JSON is a truncated one and is dropped.
func (s *stream) dispatch(lenient bool) {
	data, hasData, isErr := s.ev, s.evData, s.evError
	s.ev, s.evData, s.evError = s.ev[:0], false, false
	if !hasData {
		return
	}
	if isErr {
		s.fail(ErrStreamError, errorDetail(s.red.window(data, maxDetailScanLen), "event: error"), s.readAt)
		return
	}
	if len(data) == 0 || data[0] != '{' {
		trimmed := bytes.TrimSpace(data)
		if len(trimmed) == 0 {
			return
		}
		if string(trimmed) == "[DONE]" {
			if !s.seen {
				s.fail(ErrIncomplete, "[DONE] before any choice or usage chunk", s.readAt)
				return
			}
			s.complete = true
			s.finish = s.readAt
			s.done = true
			return
		}
	}
	c := &s.ch
	if !s.fastChunk(data) {
		if !parseChunk(&s.sc, c, data) {
			if !lenient {
				s.fail(ErrInvalidJSON, "malformed JSON chunk: "+string(s.red.window(data, 4*maxDetailLen)), s.readAt)
			}
			return
		}
		if s.tmplOK = c.templateOK(); s.tmplOK {
			s.tmpl = append(s.tmpl[:0], data...)
			s.tmplStart, s.tmplEnd = c.srcStart, c.srcEnd
		}
	}
	if c.isError {
		s.fail(ErrStreamError, errorDetail(s.red.window(data, maxDetailScanLen), "error in stream"), s.readAt)
		return
	}
	if c.choice || c.hasUsage {
		s.seen = true
	}
	if c.hasUsage {
		s.usage, s.hasUsage = c.usage, true
	}
	if c.hasTimings {
		s.cacheN = c.cacheN
	}
	if c.hasTokenSHA && validTokenSHA(c.tokenSHA) {
		s.tokenSHALn = copy(s.tokenSHA[:], c.tokenSHA)
	}
	if c.hasFinish {
		s.finishWhy, s.hasFinish = append(s.finishWhy[:0], c.finish[:min(len(c.finish), maxFinishLen)]...), true
	}
	if len(c.content) == 0 && len(c.reasoning) == 0 {
		return
	}
	t := s.readAt
	if !s.hasFirst {
		s.first, s.hasFirst = t, true
	}
	s.arrive(t.Sub(s.submit))
	s.hasOutput = true
	if len(c.content) > 0 {
		if s.firstContent.IsZero() {
			s.firstContent = t
		}
		s.contentH.Write(c.content)
		if s.keepText {
			s.text = append(s.text, c.content...)
		}
	}
	if len(c.reasoning) > 0 {
		s.reasonH.Write(c.reasoning)
		if s.reasonFld == "" {
			s.reasonFld = c.reasoningField
		}
	}
}

// arrive records one content/reasoning chunk arriving at a (since
// submit).
func (s *stream) arrive(a time.Duration) {
	if s.chunks == 0 {
		s.firstArr = a
	}
	s.chunks++
	switch {
	case s.spilled:
		s.hist.Add(a - s.lastArr)
	case len(s.arrivals) < maxExactChunks:
		s.arrivals = append(s.arrivals, a)
	default:
		s.spill()
		s.hist.Add(a - s.lastArr)
	}
	s.lastArr = a
}

// spill moves the gaps kept so far into the histogram, which takes every
// later gap.
func (s *stream) spill() {
	if s.hist == nil {
		s.hist = new(GapHistogram)
	}
	s.hist.Reset()
	for k := 1; k < len(s.arrivals); k++ {
		s.hist.Add(s.arrivals[k] - s.arrivals[k-1])
	}
	s.spilled = true
}

// fastChunk decodes a chunk that equals the template outside its content
// string: engines repeat every byte of a chunk but the text (vLLM, SGLang,
// llama.cpp all do), so the common chunk costs two comparisons and one
// string scan. The result is exact: the template was valid JSON and
// replacing one string token by another valid string token keeps it
// valid with the same structure.
func (s *stream) fastChunk(data []byte) bool {
	if !s.tmplOK {
		return false
	}
	prefix, suffix := s.tmpl[:s.tmplStart], s.tmpl[s.tmplEnd:]
	if len(data) < len(prefix)+len(suffix) || !bytes.Equal(data[:len(prefix)], prefix) {
		return false
	}
	sc := &s.sc
	sc.Reset(data)
	sc.Seek(len(prefix) - 1) // the opening quote
	raw, flags, ok := sc.Str()
	if !ok || !bytes.Equal(data[sc.Pos()-1:], suffix) {
		return false
	}
	c := &s.ch
	c.choice, c.hasFinish, c.hasUsage, c.hasTimings, c.hasTokenSHA, c.isError = true, false, false, false, false, false
	c.reasoning, c.reasoningField = c.reasoning[:0], ""
	c.content = jsonscan.AppendDecoded(c.content[:0], raw, flags)
	return true
}

// eof ends the stream at the end of the body.
func (s *stream) eof() {
	s.readAt = s.now()
	s.scan(true)
	if !s.done && s.evData {
		s.dispatch(true)
	}
	if s.done {
		return
	}
	detail := "stream ended without [DONE]"
	if s.hasFinish {
		detail = "stream ended after finish_reason without [DONE]"
	}
	s.fail(ErrIncomplete, detail, s.readAt)
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	if n == 0 {
		return "0"
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
