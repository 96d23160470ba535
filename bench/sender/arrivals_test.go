package sender

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/hostileengine"
)

func checkOneRead(t *testing.T, name string, r Result) {
	t.Helper()
	if !r.Successful {
		t.Fatalf("%s: not successful: %v", name, ptrStr(r.ErrorDetail))
	}
	if r.DecodeUnmeasured == nil || *r.DecodeUnmeasured != DecodeOneRead {
		t.Errorf("%s: decode_unmeasured %v, want one_read", name, r.DecodeUnmeasured)
	}
	for what, v := range map[string]*float64{"decode_speed": r.DecodeSpeed, "itl_mean_ms": r.ITLMeanMs, "itl_p50_ms": r.ITLP50Ms,
		"itl_p95_ms": r.ITLP95Ms, "round_gap_p50_ms": r.RoundGapP50Ms, "round_gap_p95_ms": r.RoundGapP95Ms} {
		checkNull(t, name+" "+what, v)
	}
	if r.RoundGapsMs != nil || r.RoundGapHist != nil {
		t.Errorf("%s: gaps kept for pooling: %v", name, r.RoundGapsMs)
	}
	line, _ := json.Marshal(r)
	if !strings.Contains(string(line), `"slo_met":null,"decode_unmeasured":"one_read"`) {
		t.Errorf("%s: line %s", name, line)
	}
}

func checkMeasured(t *testing.T, name string, r Result) {
	t.Helper()
	if !r.Successful || r.DecodeUnmeasured != nil || r.DecodeSpeed == nil || r.ITLMeanMs == nil {
		t.Errorf("%s: successful %v decode_unmeasured %v decode %v itl %v", name, r.Successful, r.DecodeUnmeasured, r.DecodeSpeed, r.ITLMeanMs)
	}
	if line, _ := json.Marshal(r); strings.Contains(string(line), "decode_unmeasured") {
		t.Errorf("%s: decode_unmeasured on a measured line: %s", name, line)
	}
}

// Output that arrived in one read has no decode interval: decode speed,
// ITL and round gaps are null and the line says why.
func TestOneReadDecodeUnmeasured(t *testing.T) {
	stream := vllmStream(20, 0, "a", "b", "c", "d")
	checkOneRead(t, "one read", measureString(stream))

	// Every content chunk in one read, [DONE] much later: still no decode
	// interval (the span would be the [DONE]'s latency).
	i := strings.Index(stream, finishChunk)
	checkOneRead(t, "late [DONE]", measureSegs(nil, 0, seg{10 * time.Millisecond, stream[:i]}, seg{500 * time.Millisecond, stream[i:]}))

	// One chunk of five tokens.
	one := roleChunk + chatChunk("five tokens here") + usageChunk(20, 0, 5) + doneEvent
	checkOneRead(t, "one chunk", measureSegs(nil, 0, seg{10 * time.Millisecond, one}))

	// One token: decode is undefined for another reason, not "one_read".
	single := roleChunk + chatChunk("x") + usageChunk(20, 0, 1) + doneEvent
	if r := measureString(single); r.DecodeUnmeasured != nil || r.DecodeSpeed != nil {
		t.Errorf("one token: decode_unmeasured %v decode %v", r.DecodeUnmeasured, r.DecodeSpeed)
	}
	// Failed requests have no decode figures to explain.
	if r := measureString(strings.TrimSuffix(stream, doneEvent)); r.DecodeUnmeasured != nil {
		t.Errorf("incomplete: decode_unmeasured %v", *r.DecodeUnmeasured)
	}

	// Two reads: measured.
	r := measureSegs(nil, 0, eventsEvery(stream, 10*time.Millisecond)...)
	checkMeasured(t, "event per read", r)
	checkFloat(t, "decode_speed", r.DecodeSpeed, 4/0.060) // first token at 20ms, [DONE] at 80ms
}

// clockedReader serves a body as a socket would: what is pending comes
// back at once, each read costing readCost on the clock; a read past the
// pending bytes blocks until the next delivery. With fill, the read that
// ends the first delivery fills its buffer exactly (blank lines pad it).
type clockedReader struct {
	deliveries []seg // at: the delivery's time, absolute since submit
	i          int
	pend       string
	cur        time.Duration
	readCost   time.Duration
	base       time.Time
	fill       bool
}

func (c *clockedReader) Read(p []byte) (int, error) {
	if c.pend == "" {
		if c.i >= len(c.deliveries) {
			return 0, io.EOF
		}
		c.cur = max(c.cur, c.deliveries[c.i].at)
		c.pend = c.deliveries[c.i].data
		c.i++
	}
	c.cur += c.readCost
	n := copy(p, c.pend)
	c.pend = c.pend[n:]
	if c.fill && c.i == 1 && c.pend == "" {
		for ; n < len(p); n++ {
			p[n] = '\n'
		}
	}
	return n, nil
}

func (c *clockedReader) now() time.Time { return c.base.Add(c.cur) }

// Bytes delivered together but larger than the read buffer take several
// reads a few microseconds apart: they still share one arrival time, so
// the whole reply written at once reads as one read (and no absurd decode
// speed comes from the microseconds between the reads).
func TestChainedReadsShareArrival(t *testing.T) {
	// Over the largest read buffer a pooled stream keeps, so that it
	// takes several reads whatever buffer the pool hands out.
	pieces := make([]string, maxPooledBuf/100)
	for i := range pieces {
		pieces[i] = strings.Repeat("w", 20)
	}
	stream := vllmStream(20, 0, pieces...)
	if len(stream) <= maxPooledBuf {
		t.Fatalf("the stream (%d bytes) must take several reads", len(stream))
	}
	cr := &clockedReader{deliveries: []seg{{10 * time.Millisecond, stream}}, readCost: 5 * time.Microsecond, base: testSubmit}
	checkOneRead(t, "one delivery, many reads", Measure(cr, &Request{KeepGaps: true}, testSubmit, cr.now, 0))

	// Two deliveries 5 ms apart, the first exactly filling the buffer of
	// its last read: the read after it blocks, so its bytes are a new
	// arrival.
	short := vllmStream(20, 0, "a", "b", "c", "d")
	i := strings.Index(short, chatChunk("c"))
	cr = &clockedReader{deliveries: []seg{{10 * time.Millisecond, short[:i]}, {15 * time.Millisecond, short[i:]}},
		readCost: 5 * time.Microsecond, base: testSubmit, fill: true}
	r := Measure(cr, &Request{KeepGaps: true}, testSubmit, cr.now, 0)
	checkMeasured(t, "two deliveries", r)
	if r.RoundGapP95Ms == nil || *r.RoundGapP95Ms < 4.9 {
		t.Errorf("round gap p95 %v, want the 5 ms between the deliveries", r.RoundGapP95Ms)
	}
}

// Over HTTP: a reply written in one write is one read; the engine's
// spaced chunks are not.
func TestOneWriteOverHTTP(t *testing.T) {
	e := hostileengine.Start(t, hostileengine.Config{Replies: []hostileengine.Reply{hostileengine.OneWrite}, Chunks: 6})
	c := hostileClient(t, e, Options{})
	for range 3 {
		r := c.Do(context.Background(), &Request{Messages: []Message{{"user", "hi"}}})
		checkOneRead(t, "one write", r)
		if r.Chunks != 6 || r.TokensPerChunk == nil {
			t.Errorf("chunks %d tokens_per_chunk %v", r.Chunks, r.TokensPerChunk)
		}
	}
}
