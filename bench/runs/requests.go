package runs

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/internal/textclean"
)

// Flags of one indexed request line.
const (
	flagCold       uint8 = 1 << iota // cache_state cold
	flagReused                       // cache_state reused
	flagUnverified                   // any other cache state
	flagFailed                       // not successful
	flagMeasured                     // counts in the results block
)

// Filter selects requests of a run by outcome or cache state.
type Filter int

const (
	All Filter = iota
	Failed
	Cold
	Reused
	Unverified
)

// Filters in the order the explorer cycles through them.
var Filters = []Filter{All, Failed, Cold, Reused, Unverified}

func (f Filter) String() string {
	switch f {
	case Failed:
		return "failed"
	case Cold:
		return sender.StateCold
	case Reused:
		return sender.StateReused
	case Unverified:
		return sender.StateUnverified
	}
	return "all"
}

func (f Filter) match(flags uint8) bool {
	switch f {
	case Failed:
		return flags&flagFailed != 0
	case Cold:
		return flags&flagCold != 0
	case Reused:
		return flags&flagReused != 0
	case Unverified:
		return flags&flagUnverified != 0
	}
	return true
}

// Point is one request on the TTFT-over-the-run chart.
type Point struct {
	T     float64 // submit time, seconds since the run's first submit
	TTFT  float64 // ms
	State string  // cold, reused or unverified
	// Warmup marks a warmup (or reference) request: not one of the
	// summary's measured requests.
	Warmup bool
}

// MaxPoints bounds the chart sample an Index keeps, whatever the run's
// size.
const MaxPoints = 8192

// Index is a run's requests.jsonl scanned once: where each line starts,
// a byte of flags per line, a bounded sample of chart points and the TTFTs
// of the successful requests. Rows are read back a window at a time
// (Window), so a run of any size never sits in memory as results.
type Index struct {
	Path    string
	Corrupt int // lines skipped as unreadable

	offsets []int64 // start of each good line
	lengths []int32 // its length without the newline
	flags   []uint8

	// TTFTs are the TTFTs (ms) of every successful request with a first
	// token, all phases, sorted ascending; MeasuredTTFTs are those of the
	// measured requests only (the summary's TTFT figures are computed
	// from them) and WarmupTTFTs the others' (warmup, reference), sorted
	// too.
	TTFTs, MeasuredTTFTs, WarmupTTFTs []float32
	// Points is an evenly strided sample (at most MaxPoints, in file
	// order) of the requests with a TTFT, for the chart.
	Points []Point
	// Start is the earliest submit time (Unix seconds).
	Start float64
	// Span is the latest finish time minus Start, in seconds.
	Span float64
}

// Len is the number of indexed requests.
func (x *Index) Len() int { return len(x.offsets) }

// Count is the number of requests f selects.
func (x *Index) Count(f Filter) int {
	if f == All {
		return len(x.flags)
	}
	n := 0
	for _, fl := range x.flags {
		if f.match(fl) {
			n++
		}
	}
	return n
}

// CountMeasured is the number of measured requests f selects (warmup
// and reference requests left out, as the summary leaves them out).
func (x *Index) CountMeasured(f Filter) int {
	n := 0
	for _, fl := range x.flags {
		if fl&flagMeasured != 0 && f.match(fl) {
			n++
		}
	}
	return n
}

// Select lists the line numbers f selects, in file order.
func (x *Index) Select(f Filter) []int32 {
	out := make([]int32, 0, x.Count(f))
	for i, fl := range x.flags {
		if f.match(fl) {
			out = append(out, int32(i))
		}
	}
	return out
}

// scanRequests reads dir's requests.jsonl once with the record's reader
// (record.EachRequest, skimming), handing fn each good line (where it
// is, its fields, valid during the call only) and counting the corrupt
// ones. A missing file is os.ErrNotExist.
func scanRequests(ctx context.Context, dir string, fn func(at record.LineAt, l *sender.Result)) (corrupt int, err error) {
	n := 0
	corrupt, err = record.SkimRequests(dir, func(at record.LineAt, l *sender.Result) error {
		if n++; n&4095 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		fn(at, l)
		return nil
	})
	return corrupt, err
}

// BuildIndex scans dir's requests.jsonl once. A corrupt line is skipped
// and counted, as record.ReadRequests does. ctx stops a scan nobody waits
// for any more.
func BuildIndex(ctx context.Context, dir string) (*Index, error) {
	x := &Index{Path: filepath.Join(dir, record.RequestsFile)}
	stride, seen := 1, 0 // keep every stride-th point; double when full
	type raw struct {
		submit, ttft float64
		state        string
		warmup       bool
	}
	var pts []raw
	first, last := 0.0, 0.0
	corrupt, err := scanRequests(ctx, dir, func(at record.LineAt, l *sender.Result) {
		x.offsets = append(x.offsets, at.Start)
		x.lengths = append(x.lengths, int32(at.Len))
		x.flags = append(x.flags, lineFlags(l))
		if l.SubmitTime > 0 && (first == 0 || l.SubmitTime < first) {
			first = l.SubmitTime
		}
		last = max(last, l.FinishTime)
		if l.TTFT == nil {
			return
		}
		ms := *l.TTFT * 1000
		warm := l.Phase == sender.PhaseWarmup || l.Phase == sender.PhaseReference
		switch {
		case l.Successful && warm:
			x.WarmupTTFTs = append(x.WarmupTTFTs, float32(ms))
		case l.Successful:
			x.MeasuredTTFTs = append(x.MeasuredTTFTs, float32(ms))
		}
		if l.Successful {
			x.TTFTs = append(x.TTFTs, float32(ms))
		}
		if seen%stride == 0 {
			pts = append(pts, raw{l.SubmitTime, ms, stateOf(l.CacheState), warm})
			if len(pts) >= MaxPoints {
				// Keep every other point and sample half as often.
				k := 0
				for i := 0; i < len(pts); i += 2 {
					pts[k] = pts[i]
					k++
				}
				pts = pts[:k]
				stride *= 2
			}
		}
		seen++
	})
	if err != nil {
		return nil, err
	}
	x.Corrupt = corrupt
	slices.Sort(x.TTFTs)
	slices.Sort(x.MeasuredTTFTs)
	slices.Sort(x.WarmupTTFTs)
	x.Start = first
	if last > first {
		x.Span = last - first
	}
	x.Points = make([]Point, len(pts))
	for i, p := range pts {
		x.Points[i] = Point{T: max(p.submit-first, 0), TTFT: p.ttft, State: p.state, Warmup: p.warmup}
	}
	return x, nil
}

func stateOf(s string) string {
	if s == sender.StateCold || s == sender.StateReused {
		return s
	}
	return sender.StateUnverified
}

func lineFlags(l *sender.Result) uint8 {
	var f uint8
	switch stateOf(l.CacheState) {
	case sender.StateCold:
		f |= flagCold
	case sender.StateReused:
		f |= flagReused
	default:
		f |= flagUnverified
	}
	if !l.Successful {
		f |= flagFailed
	}
	if l.Phase != sender.PhaseWarmup && l.Phase != sender.PhaseReference {
		f |= flagMeasured
	}
	return f
}

// Window reads the requests at the given line numbers (as Select returns
// them), in that order, their text cleaned (textclean.JSON).
func (x *Index) Window(lines []int32) ([]sender.Result, error) {
	f, err := record.OpenRegular(x.Path)
	if err != nil {
		return nil, fmt.Errorf("read requests: %w", err)
	}
	defer f.Close()
	out := make([]sender.Result, len(lines))
	var buf []byte
	var d record.LineDecoder
	for i, n := range lines {
		if n < 0 || int(n) >= len(x.offsets) {
			return nil, fmt.Errorf("read requests: line %d out of range", n)
		}
		buf = slices.Grow(buf[:0], int(x.lengths[n]))[:x.lengths[n]]
		if _, err := f.ReadAt(buf, x.offsets[n]); err != nil {
			return nil, fmt.Errorf("read %s: %w", x.Path, err)
		}
		if !d.Decode(buf, &out[i]) {
			// The file changed under the index (rewritten, truncated):
			// the line is shown as what it now is.
			detail := "the line changed since the run was indexed"
			out[i] = sender.Result{RequestID: fmt.Sprintf("(unreadable line at byte %d)", x.offsets[n]),
				CacheState: sender.StateUnverified, ErrorDetail: &detail}
		}
	}
	return out, nil
}

// Head reads the first n good lines of dir's requests.jsonl without an
// index, so the first page can show before the index is built.
func Head(dir string, n int) ([]sender.Result, error) {
	out := make([]sender.Result, 0, n)
	stop := errors.New("stop")
	_, err := record.ReadRequests(dir, func(r *sender.Result) error {
		if len(out) >= n {
			return stop
		}
		out = append(out, *r)
		return nil
	})
	if err != nil && !errors.Is(err, stop) {
		return nil, err
	}
	return out, nil
}

// Raw reads the line at line number n (as Select returns them) as it is
// in requests.jsonl: every field, in the file's order, its text cleaned
// (textclean.JSON).
func (x *Index) Raw(n int32) ([]byte, error) {
	if n < 0 || int(n) >= len(x.offsets) {
		return nil, fmt.Errorf("read requests: line %d out of range", n)
	}
	f, err := record.OpenRegular(x.Path)
	if err != nil {
		return nil, fmt.Errorf("read requests: %w", err)
	}
	defer f.Close()
	buf := make([]byte, x.lengths[n])
	if _, err := f.ReadAt(buf, x.offsets[n]); err != nil {
		return nil, fmt.Errorf("read %s: %w", x.Path, err)
	}
	return textclean.JSON(buf), nil
}
