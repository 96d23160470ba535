package record

import (
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/internal/jsonscan"
	"github.com/kvbench/kvbench/internal/textclean"
)

// A LineDecoder reads requests.jsonl lines into results with the
// validating scanner of internal/jsonscan: the same verdict and the same
// values as encoding/json decoding the line's cleaned text
// (textclean.JSON) into a sender.Result (FuzzLineDecoder holds it to
// that), at a fraction of the cost. The zero value is ready.
type LineDecoder struct {
	s       jsonscan.Scanner
	str     []byte
	fold    []byte
	scratch lineValues
	skimmed sender.Result // EachRequest's skimmed line
}

// lineValues holds what a result's pointers point to, allocated once per
// line instead of once per field.
type lineValues struct {
	f  [nFloatPtr]float64
	i  [nIntPtr]int
	s  [nStrPtr]string
	b  bool
	te sender.TraceExpectation
}

// Decode reads line (one requests.jsonl line without its newline) into
// r, which it overwrites. ok is false for a line that is not a JSON
// object with a non-empty request_id whose fields have the record's
// types: a corrupt line. Strings are cleaned (textclean.Clean) and the
// result owns all its memory.
func (d *LineDecoder) Decode(line []byte, r *sender.Result) bool {
	return d.decode(line, r, new(lineValues), false)
}

// Skim is Decode with the same verdict and the same figures, for a
// reader that only looks: r's pointers point into the decoder (valid
// until the next call) and of its text only request_id, phase,
// cache_state and decode_unmeasured are set.
func (d *LineDecoder) Skim(line []byte, r *sender.Result) bool {
	d.scratch = lineValues{}
	return d.decode(line, r, &d.scratch, true)
}

// Field kinds and their slots in lineValues.
const (
	kString = iota + 1
	kStrPtr
	kBool
	kBoolPtr
	kFloat
	kFloatPtr
	kInt
	kIntPtr
	kTEInt
	kTEIntPtr
	kInts
)

const (
	nFloatPtr = 12
	nIntPtr   = 6 // the last one is expected_cached_tokens_lru
	nStrPtr   = 7
)

type lineField struct {
	kind uint8
	slot uint8
}

// lineFields are the record's keys (sender.Result's JSON names).
var lineFields = map[string]lineField{
	"request_id":  {kString, 0},
	"phase":       {kString, 1},
	"cache_state": {kString, 2},

	"error":             {kStrPtr, 0},
	"error_detail":      {kStrPtr, 1},
	"unverified_reason": {kStrPtr, 2},
	"finish_reason":     {kStrPtr, 3},
	"output_sha256":     {kStrPtr, 4},
	"token_sha":         {kStrPtr, 5},
	"decode_unmeasured": {kStrPtr, 6},

	"successful": {kBool, 0},
	"complete":   {kBool, 1},
	"slo_met":    {kBoolPtr, 0},

	"submit_time":       {kFloat, 0},
	"finish_time":       {kFloat, 1},
	"request_latency_s": {kFloat, 2},

	"scheduled_time":   {kFloatPtr, 0},
	"first_token_time": {kFloatPtr, 1},
	"ttft_s":           {kFloatPtr, 2},
	"dispatch_lag_ms":  {kFloatPtr, 3},
	"decode_speed":     {kFloatPtr, 4},
	"itl_mean_ms":      {kFloatPtr, 5},
	"itl_p50_ms":       {kFloatPtr, 6},
	"itl_p95_ms":       {kFloatPtr, 7},
	"round_gap_p50_ms": {kFloatPtr, 8},
	"round_gap_p95_ms": {kFloatPtr, 9},
	"tokens_per_chunk": {kFloatPtr, 10},
	"prefill_tps":      {kFloatPtr, 11},

	"prompt_tokens":     {kIntPtr, 0},
	"cached_tokens":     {kIntPtr, 1},
	"completion_tokens": {kIntPtr, 2},
	"cache_n":           {kIntPtr, 3},
	"shard":             {kIntPtr, 4},

	"chunks":  {kInt, 0},
	"retries": {kInt, 1},

	"expected_cached_tokens":     {kTEInt, 0},
	"expected_cached_tokens_lru": {kTEIntPtr, 0},

	"documents": {kInts, 0},
}

// exactField is the field named key exactly (a switch: cheaper than a
// map for the record's few dozen keys).
func exactField(key []byte) (lineField, bool) {
	switch string(key) {
	case "request_id":
		return lineField{kString, 0}, true
	case "phase":
		return lineField{kString, 1}, true
	case "cache_state":
		return lineField{kString, 2}, true
	case "error":
		return lineField{kStrPtr, 0}, true
	case "error_detail":
		return lineField{kStrPtr, 1}, true
	case "unverified_reason":
		return lineField{kStrPtr, 2}, true
	case "finish_reason":
		return lineField{kStrPtr, 3}, true
	case "output_sha256":
		return lineField{kStrPtr, 4}, true
	case "token_sha":
		return lineField{kStrPtr, 5}, true
	case "decode_unmeasured":
		return lineField{kStrPtr, 6}, true
	case "successful":
		return lineField{kBool, 0}, true
	case "complete":
		return lineField{kBool, 1}, true
	case "slo_met":
		return lineField{kBoolPtr, 0}, true
	case "submit_time":
		return lineField{kFloat, 0}, true
	case "finish_time":
		return lineField{kFloat, 1}, true
	case "request_latency_s":
		return lineField{kFloat, 2}, true
	case "scheduled_time":
		return lineField{kFloatPtr, 0}, true
	case "first_token_time":
		return lineField{kFloatPtr, 1}, true
	case "ttft_s":
		return lineField{kFloatPtr, 2}, true
	case "dispatch_lag_ms":
		return lineField{kFloatPtr, 3}, true
	case "decode_speed":
		return lineField{kFloatPtr, 4}, true
	case "itl_mean_ms":
		return lineField{kFloatPtr, 5}, true
	case "itl_p50_ms":
		return lineField{kFloatPtr, 6}, true
	case "itl_p95_ms":
		return lineField{kFloatPtr, 7}, true
	case "round_gap_p50_ms":
		return lineField{kFloatPtr, 8}, true
	case "round_gap_p95_ms":
		return lineField{kFloatPtr, 9}, true
	case "tokens_per_chunk":
		return lineField{kFloatPtr, 10}, true
	case "prefill_tps":
		return lineField{kFloatPtr, 11}, true
	case "prompt_tokens":
		return lineField{kIntPtr, 0}, true
	case "cached_tokens":
		return lineField{kIntPtr, 1}, true
	case "completion_tokens":
		return lineField{kIntPtr, 2}, true
	case "cache_n":
		return lineField{kIntPtr, 3}, true
	case "shard":
		return lineField{kIntPtr, 4}, true
	case "chunks":
		return lineField{kInt, 0}, true
	case "retries":
		return lineField{kInt, 1}, true
	case "expected_cached_tokens":
		return lineField{kTEInt, 0}, true
	case "expected_cached_tokens_lru":
		return lineField{kTEIntPtr, 0}, true
	case "documents":
		return lineField{kInts, 0}, true
	}
	return lineField{}, false
}

// foldedFields are lineFields by encoding/json's folded name: it matches
// a key case-insensitively (with Unicode's simple folding) when no name
// matches exactly.
var foldedFields = func() map[string]lineField {
	m := make(map[string]lineField, len(lineFields))
	for k, f := range lineFields {
		m[string(appendFolded(nil, []byte(k)))] = f
	}
	return m
}()

// appendFolded is encoding/json's foldName.
func appendFolded(out, in []byte) []byte {
	for i := 0; i < len(in); {
		if c := in[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(in[i:])
		for {
			r2 := unicode.SimpleFold(r)
			if r2 <= r {
				r = r2
				break
			}
			r = r2
		}
		out = utf8.AppendRune(out, r)
		i += n
	}
	return out
}

// field finds the field a key sets; ok is false for a key the record
// does not know (skipped, as encoding/json skips it).
func (d *LineDecoder) field(key []byte) (lineField, bool) {
	if f, ok := exactField(key); ok {
		return f, true
	}
	for _, c := range key {
		if 'A' <= c && c <= 'Z' || c >= utf8.RuneSelf {
			d.fold = appendFolded(d.fold[:0], key)
			f, ok := foldedFields[string(d.fold)]
			return f, ok
		}
	}
	// Lower-case ASCII folds onto a field's name only when it is that name.
	return lineField{}, false
}

func (d *LineDecoder) decode(line []byte, r *sender.Result, v *lineValues, skim bool) bool {
	*r = sender.Result{}
	s := &d.s
	s.Reset(line)
	if s.Peek() != '{' {
		return false
	}
	typeErr := false
	ok := s.Object(func(key []byte) bool {
		f, known := d.field(key)
		if !known {
			return s.Skip()
		}
		ok, fits := d.value(r, v, f, skim)
		if !ok {
			return false
		}
		if !fits {
			// A value of another type: encoding/json reads on and
			// refuses the line at the end.
			typeErr = true
		}
		return true
	})
	return ok && s.End() && !typeErr && r.RequestID != ""
}

// value reads the value of field f into r. ok is false for JSON that is
// not valid; fits is false for a valid value of the wrong type.
func (d *LineDecoder) value(r *sender.Result, v *lineValues, f lineField, skim bool) (ok, fits bool) {
	s := &d.s
	c := s.Peek()
	if c == 'n' {
		if !s.Lit("null") {
			return false, false
		}
		d.setNull(r, v, f)
		return true, true
	}
	switch f.kind {
	case kString, kStrPtr:
		if c != '"' {
			return s.Skip(), false
		}
		raw, flags, ok := s.Str()
		if !ok {
			return false, false
		}
		keep := !skim || f.kind == kString || f.slot == 6
		if !keep {
			return true, true
		}
		d.str = jsonscan.AppendDecoded(d.str[:0], raw, flags)
		str := d.text(f)
		if f.kind == kString {
			*stringField(r, f.slot) = str
		} else {
			v.s[f.slot] = str
			*strPtrField(r, f.slot) = &v.s[f.slot]
		}
		return true, true
	case kBool, kBoolPtr:
		var b bool
		switch c {
		case 't':
			b = true
			if !s.Lit("true") {
				return false, false
			}
		case 'f':
			if !s.Lit("false") {
				return false, false
			}
		default:
			return s.Skip(), false
		}
		switch {
		case f.kind == kBoolPtr:
			v.b = b
			r.SLOMet = &v.b
		case f.slot == 0:
			r.Successful = b
		default:
			r.Complete = b
		}
		return true, true
	case kFloat, kFloatPtr:
		x, ok, fits := d.float()
		if !ok || !fits {
			return ok, fits
		}
		if f.kind == kFloat {
			*floatField(r, f.slot) = x
		} else {
			v.f[f.slot] = x
			*floatPtrField(r, f.slot) = &v.f[f.slot]
		}
		return true, true
	case kInt, kIntPtr, kTEInt, kTEIntPtr:
		n, ok, fits := d.int()
		if !ok || !fits {
			return ok, fits
		}
		switch f.kind {
		case kInt:
			if f.slot == 0 {
				r.Chunks = n
			} else {
				r.Retries = n
			}
		case kIntPtr:
			v.i[f.slot] = n
			*intPtrField(r, f.slot) = &v.i[f.slot]
		case kTEInt:
			d.te(r, v).ExpectedCachedTokens = n
		default:
			v.i[nIntPtr-1] = n
			d.te(r, v).ExpectedCachedTokensLRU = &v.i[nIntPtr-1]
		}
		return true, true
	default: // kInts
		if c != '[' {
			return s.Skip(), false
		}
		docs := make([]int, 0, 4)
		fits = true
		ok = s.Array(func() bool {
			if s.Peek() == 'n' {
				docs = append(docs, 0) // null leaves the element zero
				return s.Lit("null")
			}
			n, ok, f := d.int()
			fits = fits && f
			docs = append(docs, n)
			return ok
		})
		r.Documents = docs
		return ok, fits
	}
}

// te is r's trace expectation, made on first use as encoding/json makes
// an embedded pointer as soon as a key reaches into it.
func (d *LineDecoder) te(r *sender.Result, v *lineValues) *sender.TraceExpectation {
	if r.TraceExpectation == nil {
		r.TraceExpectation = &v.te
	}
	return r.TraceExpectation
}

// setNull is what a JSON null does to a field: a pointer or a slice
// becomes nil, anything else keeps its value.
func (d *LineDecoder) setNull(r *sender.Result, v *lineValues, f lineField) {
	switch f.kind {
	case kStrPtr:
		*strPtrField(r, f.slot) = nil
	case kBoolPtr:
		r.SLOMet = nil
	case kFloatPtr:
		*floatPtrField(r, f.slot) = nil
	case kIntPtr:
		*intPtrField(r, f.slot) = nil
	case kTEInt:
		d.te(r, v)
	case kTEIntPtr:
		d.te(r, v).ExpectedCachedTokensLRU = nil
	case kInts:
		r.Documents = nil
	}
}

// float reads a number as encoding/json reads it into a float64.
func (d *LineDecoder) float() (x float64, ok, fits bool) {
	s := &d.s
	if c := s.Peek(); c != '-' && (c < '0' || c > '9') {
		return 0, s.Skip(), false
	}
	start := s.Pos()
	neg, integer, n, overflow, ok := s.Num()
	if !ok {
		return 0, false, false
	}
	if integer && !overflow && n <= 1<<53 {
		x = float64(n)
		if neg {
			x = -x
		}
		return x, true, true
	}
	text := s.Since(start)
	if x, ok := exactFloat(text); ok {
		return x, true, true
	}
	x, err := strconv.ParseFloat(string(text), 64)
	return x, true, err == nil
}

// exactFloat is strconv.ParseFloat's exact case, most of a record's
// figures: a decimal mantissa under 2^52 divided by a power of ten up to
// 1e22 (both exact, so the quotient is correctly rounded). ok is false
// for any other number of valid JSON syntax.
func exactFloat(b []byte) (float64, bool) {
	i, neg := 0, false
	if b[0] == '-' {
		neg, i = true, 1
	}
	var mant uint64
	exp := 0
	for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		if mant = mant*10 + uint64(b[i]-'0'); mant >= 1<<52 {
			return 0, false
		}
	}
	if i < len(b) && b[i] == '.' {
		for i++; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
			if mant = mant*10 + uint64(b[i]-'0'); mant >= 1<<52 {
				return 0, false
			}
			exp--
		}
	}
	if i < len(b) {
		return 0, false // an exponent
	}
	if exp < -22 {
		return 0, false
	}
	x := float64(mant) / pow10[-exp]
	if neg {
		x = -x
	}
	return x, true
}

var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
	1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// int reads a number as encoding/json reads it into an int.
func (d *LineDecoder) int() (n int, ok, fits bool) {
	s := &d.s
	if c := s.Peek(); c != '-' && (c < '0' || c > '9') {
		return 0, s.Skip(), false
	}
	start := s.Pos()
	neg, integer, u, overflow, ok := s.Num()
	switch {
	case !ok:
		return 0, false, false
	case !integer:
		return 0, true, false
	case !overflow:
		if neg {
			return -int(u), true, true
		}
		return int(u), true, true
	}
	v, err := strconv.ParseInt(string(s.Since(start)), 10, 64)
	return int(v), true, err == nil
}

// text is the decoded string in d.str as a field's value: cleaned, and
// for the fields with a few known values, one of them without a copy.
func (d *LineDecoder) text(f lineField) string {
	var known []string
	switch {
	case f.kind == kString && f.slot == 1:
		known = phases
	case f.kind == kString && f.slot == 2:
		known = cacheStates
	case f.kind == kStrPtr && f.slot == 6:
		known = unmeasuredReasons
	}
	for _, k := range known {
		if string(d.str) == k {
			return k
		}
	}
	return textclean.Clean(string(d.str))
}

var (
	phases = []string{sender.PhaseMeasured, sender.PhaseWarmup, sender.PhaseFirst, sender.PhaseRepeated,
		sender.PhaseConcurrent, sender.PhaseReference}
	cacheStates       = []string{sender.StateCold, sender.StateReused, sender.StateUnverified}
	unmeasuredReasons = []string{sender.DecodeOneRead}
)

func stringField(r *sender.Result, slot uint8) *string {
	switch slot {
	case 0:
		return &r.RequestID
	case 1:
		return &r.Phase
	}
	return &r.CacheState
}

func strPtrField(r *sender.Result, slot uint8) **string {
	switch slot {
	case 0:
		return &r.Error
	case 1:
		return &r.ErrorDetail
	case 2:
		return &r.UnverifiedReason
	case 3:
		return &r.FinishReason
	case 4:
		return &r.OutputSHA256
	case 5:
		return &r.TokenSHA
	}
	return &r.DecodeUnmeasured
}

func floatField(r *sender.Result, slot uint8) *float64 {
	switch slot {
	case 0:
		return &r.SubmitTime
	case 1:
		return &r.FinishTime
	}
	return &r.RequestLatency
}

func floatPtrField(r *sender.Result, slot uint8) **float64 {
	switch slot {
	case 0:
		return &r.ScheduledTime
	case 1:
		return &r.FirstTokenTime
	case 2:
		return &r.TTFT
	case 3:
		return &r.DispatchLagMs
	case 4:
		return &r.DecodeSpeed
	case 5:
		return &r.ITLMeanMs
	case 6:
		return &r.ITLP50Ms
	case 7:
		return &r.ITLP95Ms
	case 8:
		return &r.RoundGapP50Ms
	case 9:
		return &r.RoundGapP95Ms
	case 10:
		return &r.TokensPerChunk
	}
	return &r.PrefillTPS
}

func intPtrField(r *sender.Result, slot uint8) **int {
	switch slot {
	case 0:
		return &r.PromptTokens
	case 1:
		return &r.CachedTokens
	case 2:
		return &r.CompletionTokens
	case 3:
		return &r.CacheN
	}
	return &r.Shard
}
