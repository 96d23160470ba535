package record

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

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

// WriteCSV writes bench_results.csv from requests.jsonl, so no result is
// held in memory: measured requests only, in the order they finished.
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
	return writeAtomicFunc(filepath.Join(w.dir, CSVFile), func(out io.Writer) error {
		var buf bytes.Buffer
		row := make([]string, 0, len(CSVHeader))
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
			writeCSVRow(&buf, csvRow(row[:0], r))
			return flush()
		})
		if err != nil {
			return err
		}
		return flush()
	})
}

func csvRow(row []string, r *sender.Result) []string {
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
	errText := ""
	if r.Error != nil {
		errText = *r.Error
		if r.ErrorDetail != nil && *r.ErrorDetail != "" {
			errText += ": " + *r.ErrorDetail
		}
	}
	return append(row,
		r.RequestID,
		pyBool(r.Successful),
		pyFloat(ttft),
		pyFloat(r.RequestLatency),
		strconv.Itoa(in),
		strconv.Itoa(out),
		pyFloat(zeroIfNil(r.DecodeSpeed)),
		pyFloat(r.SubmitTime),
		pyFloat(first),
		pyFloat(r.FinishTime),
		errText,
		optInt(r.PromptTokens),
		optInt(r.CachedTokens),
		r.CacheState,
		pyBool(r.Complete),
		strconv.Itoa(r.Chunks),
		optFloat(r.ITLMeanMs),
		optString(r.OutputSHA256),
	)
}

// writeCSVRow writes one row as Python's csv.writer does by default
// (QUOTE_MINIMAL, "\r\n"): a field is quoted only when it holds a comma,
// a quote or a line break, and quotes inside are doubled.
func writeCSVRow(buf *bytes.Buffer, fields []string) {
	for i, f := range fields {
		if i > 0 {
			buf.WriteByte(',')
		}
		if strings.ContainsAny(f, ",\"\r\n") {
			buf.WriteByte('"')
			buf.WriteString(strings.ReplaceAll(f, `"`, `""`))
			buf.WriteByte('"')
		} else {
			buf.WriteString(f)
		}
	}
	buf.WriteString("\r\n")
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
func pyFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(v, 'e', -1, 64) // e.g. -1.2345e+03
	mant, exp, _ := strings.Cut(s, "e")
	e, _ := strconv.Atoi(exp)
	if e < -4 || e >= 16 {
		sign := "+"
		if e < 0 {
			sign, e = "-", -e
		}
		return fmt.Sprintf("%se%s%02d", mant, sign, e)
	}
	f := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(f, ".") {
		f += ".0"
	}
	return f
}

func optInt(p *int) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(*p)
}

func optFloat(p *float64) string {
	if p == nil {
		return ""
	}
	return pyFloat(*p)
}

func optString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// zeroIfNil is LMCache's CSV convention for an undefined figure: 0.
func zeroIfNil(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}
