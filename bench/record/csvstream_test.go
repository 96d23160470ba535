package record

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/bench/sender"
)

// csvResults are results whose rows exercise every column: nulls, text
// that needs quoting, invalid UTF-8 (encoding/json turns each bad byte
// into U+FFFD), floats across Python's positional and scientific forms,
// and the lines the CSV leaves out (warmup, reference, no request id).
func csvResults() []*sender.Result {
	rng := rand.New(rand.NewPCG(7, 8))
	var out []*sender.Result
	phases := []string{sender.PhaseMeasured, sender.PhaseWarmup, sender.PhaseMeasured, sender.PhaseReference, sender.PhaseConcurrent}
	texts := []string{"", "plain", `a "quoted", text`, "line\r\nbreak", "bad \xff\xfe utf-8 \xc3", "é \u2028 <&>"}
	floats := []float64{0, -0.0, 1, 0.1, 1.5e-5, 1e16, 12345678901234567, 1714917789.25, math.SmallestNonzeroFloat64, 123.456e-7}
	for i := range 60 {
		r := &sender.Result{
			RequestID:      fmt.Sprintf("req_%d%s", i, texts[i%len(texts)]),
			Phase:          phases[i%len(phases)],
			Successful:     i%3 != 0,
			SubmitTime:     floats[i%len(floats)] + float64(i),
			FinishTime:     floats[(i+3)%len(floats)],
			RequestLatency: rng.Float64(),
			Chunks:         i,
			Complete:       i%2 == 0,
			CacheState:     []string{sender.StateCold, sender.StateReused, sender.StateUnverified}[i%3],
		}
		if i%4 != 0 {
			r.TTFT, r.FirstTokenTime = fptr(rng.ExpFloat64()), fptr(floats[i%len(floats)])
			r.PromptTokens, r.CachedTokens, r.CompletionTokens = iptr(i*100), iptr(i*50), iptr(i%5)
			r.DecodeSpeed, r.ITLMeanMs = fptr(floats[(i+1)%len(floats)]), fptr(rng.Float64()*1e-6)
			r.OutputSHA256 = sptr(texts[(i+2)%len(texts)])
		}
		if i%3 == 0 {
			r.Error = sptr("http_5" + texts[i%len(texts)])
			if i%2 == 0 {
				r.ErrorDetail = sptr(texts[(i+1)%len(texts)])
			}
		}
		if i == 17 {
			r.RequestID = "" // its line is skipped when read back
		}
		out = append(out, r)
	}
	return out
}

// TestStreamedCSVIsTheReadBack: the CSV streamed as requests finish is,
// byte for byte, the CSV read back from requests.jsonl, and no temporary
// file is left in the run folder.
func TestStreamedCSVIsTheReadBack(t *testing.T) {
	write := func(stream bool) []byte {
		w, err := Create(t.TempDir(), "random-prefill", "", started)
		if err != nil {
			t.Fatal(err)
		}
		if stream {
			if err := w.StreamCSV(); err != nil {
				t.Fatal(err)
			}
		}
		for _, r := range csvResults() {
			if err := w.Append(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.WriteCSV(); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(w.Dir())
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".tmp") {
				t.Errorf("%s left in the run folder", e.Name())
			}
		}
		b, err := os.ReadFile(filepath.Join(w.Dir(), CSVFile))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	streamed, read := write(true), write(false)
	if !bytes.Equal(streamed, read) {
		sl, rl := strings.Split(string(streamed), "\r\n"), strings.Split(string(read), "\r\n")
		for i := range min(len(sl), len(rl)) {
			if sl[i] != rl[i] {
				t.Fatalf("row %d differs:\nstreamed %q\nread     %q", i, sl[i], rl[i])
			}
		}
		t.Fatalf("streamed %d rows, read %d", len(sl), len(rl))
	}
	// 36 of the 60 lines are in the CSV (measured and concurrent), one
	// of them without an id; with the header, 36 rows. A CR from a
	// line's text is cleaned (U+FFFD), so every CRLF ends a row.
	if n := strings.Count(string(read), "\r\n"); n != 36 {
		t.Fatalf("%d rows, want 36: the results do not exercise the CSV", n)
	}
	if !strings.Contains(string(read), "\ufffd") || !strings.Contains(string(read), `"a ""quoted"", text`) {
		t.Errorf("the rows lack the replaced or quoted text:\n%s", read)
	}
}

// TestStreamedCSVFallsBack: a stream that failed, or a Writer closed
// before WriteCSV, still gives the whole CSV, read from requests.jsonl.
func TestStreamedCSVFallsBack(t *testing.T) {
	for _, how := range []string{"failed row", "closed first"} {
		w, err := Create(t.TempDir(), "random-prefill", "", started)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.StreamCSV(); err != nil {
			t.Fatal(err)
		}
		for i, r := range csvResults()[:10] {
			if i == 5 && how == "failed row" {
				w.mu.Lock()
				w.csv.failed = true
				w.mu.Unlock()
			}
			if err := w.Append(r); err != nil {
				t.Fatal(err)
			}
		}
		if how == "closed first" {
			w.Close()
		}
		if err := w.WriteCSV(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		b, err := os.ReadFile(filepath.Join(w.Dir(), CSVFile))
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		writeCSVRow(&want, CSVHeader)
		for _, r := range csvResults()[:10] {
			if csvWanted(r) {
				appendCSVRow(&want, r)
			}
		}
		if !bytes.Equal(b, want.Bytes()) {
			t.Errorf("%s: CSV\n%q\nwant\n%q", how, b, want.Bytes())
		}
		entries, _ := os.ReadDir(w.Dir())
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".tmp") {
				t.Errorf("%s: %s left in the run folder", how, e.Name())
			}
		}
	}
}

// BenchmarkCSVEnd is what writing bench_results.csv costs at the end of
// a run of 200,000 requests: finishing the streamed file against reading
// requests.jsonl back. Each op is a whole run's end; the appends are not
// timed.
func BenchmarkCSVEnd(b *testing.B) {
	const n = 200_000
	r := &sender.Result{
		Phase: sender.PhaseMeasured, Successful: true, SubmitTime: 1714917789.25, FirstTokenTime: fptr(1714917789.5),
		FinishTime: 1714917790, TTFT: fptr(0.25), RequestLatency: 0.75, PromptTokens: iptr(29), CachedTokens: iptr(0),
		CompletionTokens: iptr(1), Chunks: 1, CacheState: sender.StateCold, Complete: true, DispatchLagMs: fptr(0.01),
	}
	for _, stream := range []bool{true, false} {
		name := "read-back"
		if stream {
			name = "streamed"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				w, err := Create(b.TempDir(), "random-prefill", "", started)
				if err != nil {
					b.Fatal(err)
				}
				if stream {
					w.StreamCSV()
				}
				for i := range n {
					r.RequestID = fmt.Sprintf("prefill_%d", i)
					if err := w.Append(r); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				if err := w.WriteCSV(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				w.Close()
				b.StartTimer()
			}
		})
	}
}
