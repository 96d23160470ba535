package sender

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/enginehttp"
	"github.com/kvbench/kvbench/internal/hostileengine"
)

const plantedKey = "sk-planted-9f8e7d6c5b4a"

func hostileClient(t *testing.T, e *hostileengine.Engine, opts Options) *Client {
	t.Helper()
	base, err := NormalizeURL(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	opts.BaseURL, opts.Model = base, "m"
	c := New(opts)
	t.Cleanup(c.Close)
	return c
}

// checkDetail fails when a detail (or a whole record line) holds a
// secret, the start of one, or a byte a terminal would act on.
func checkDetail(t *testing.T, what, text string, secrets ...string) {
	t.Helper()
	for _, k := range secrets {
		if strings.Contains(text, k[:min(len(k), 5)]) {
			t.Errorf("%s holds a secret (%q): %q", what, k, text)
		}
	}
	if i := hostileengine.Unsafe([]byte(text)); i >= 0 {
		t.Errorf("%s holds a control byte at %d: %q", what, i, text)
	}
	if strings.Contains(text, `\u001b`) || strings.Contains(text, `\u009b`) {
		t.Errorf("%s holds an escaped control: %q", what, text)
	}
}

// Every path by which an engine's text becomes an error detail: the key
// (as a bearer token, or a URL password sent as Basic authentication)
// never comes back out, and neither does any terminal control.
func TestEchoedCredentialsRedacted(t *testing.T) {
	replies := []struct {
		reply hostileengine.Reply
		code  string
	}{
		{hostileengine.ErrorObject, ErrStreamError},
		{hostileengine.ErrorEvent, ErrStreamError},
		{hostileengine.MalformedChunk, ErrInvalidJSON},
		{hostileengine.HTTPError, "http_503"},
		{hostileengine.HTTPErrorText, "http_500"},
	}
	const user, pass = "alice", "PLANTED-pw-77aa11"
	basic := strings.TrimPrefix(enginehttp.Basic(user, pass), "Basic ")
	for _, auth := range []struct {
		name    string
		opts    Options
		secrets []string
	}{
		{"bearer", Options{APIKey: plantedKey}, []string{plantedKey}},
		{"basic", Options{UserInfo: url.UserPassword(user, pass)}, []string{pass, basic}},
	} {
		for _, rc := range replies {
			e := hostileengine.Start(t, hostileengine.Config{Replies: []hostileengine.Reply{rc.reply}})
			c := hostileClient(t, e, auth.opts)
			r := c.Do(context.Background(), &Request{ID: "r", Messages: []Message{{"user", "hi"}}})
			name := auth.name + "/" + rc.reply.String()
			if errCode(r) != rc.code || r.ErrorDetail == nil || *r.ErrorDetail == "" {
				t.Errorf("%s: error %q detail %v, want %s", name, errCode(r), r.ErrorDetail, rc.code)
				continue
			}
			checkDetail(t, name+" detail", *r.ErrorDetail, auth.secrets...)
			line, _ := json.Marshal(r)
			checkDetail(t, name+" line", string(line), auth.secrets...)
			if !strings.Contains(*r.ErrorDetail, redacted) {
				t.Errorf("%s: the echoed credential is not marked redacted: %q", name, *r.ErrorDetail)
			}
			if len(*r.ErrorDetail) > maxDetailLen+3 {
				t.Errorf("%s: detail of %d bytes", name, len(*r.ErrorDetail))
			}
			if a := e.Authorizations(); len(a) != 1 || !strings.Contains(a[0], auth.secrets[len(auth.secrets)-1]) {
				t.Errorf("%s: the engine saw Authorization %q", name, a)
			}
		}
	}
}

// A secret cut by a limit leaves none of itself behind: not at the
// detail's length limit, not at the end of the window read from a long
// body.
func TestRedactionAcrossCuts(t *testing.T) {
	red := newRedactor(plantedKey, nil)
	for _, text := range []string{
		strings.Repeat("a ", maxDetailLen/2-3) + plantedKey + " tail",
		strings.Repeat("x", maxDetailLen-6) + plantedKey,
		"key\n\n\t" + plantedKey + "\x1b[2J",
	} {
		checkDetail(t, "detail", red.detail(text), plantedKey)
	}
	// The window of a long body ends inside the key; the blank run before
	// it collapses, so only the window's rule keeps the key's start out.
	body := strings.Repeat(" ", maxDetailScanLen-6) + plantedKey + strings.Repeat(" ", 100)
	w := red.window([]byte(body), maxDetailScanLen)
	checkDetail(t, "window", red.detail(string(w)), plantedKey)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	r := newClient(t, srv, Options{APIKey: plantedKey}).Do(context.Background(), &Request{})
	if errCode(r) != "http_502" {
		t.Fatalf("error %q", errCode(r))
	}
	checkDetail(t, "http detail", *r.ErrorDetail, plantedKey)
	// A text with no secret is kept as it was (but one line).
	if got := red.detail("plain  text\nhere"); got != "plain text here" {
		t.Errorf("detail = %q", got)
	}
}

// Model ids come out clean: no terminal control, no echoed key.
func TestModelIDsCleaned(t *testing.T) {
	e := hostileengine.Start(t, hostileengine.Config{})
	c := hostileClient(t, e, Options{APIKey: plantedKey})
	ids, err := c.Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(hostileengine.EscapeModelIDs) {
		t.Fatalf("ids %q", ids)
	}
	for _, id := range ids {
		checkDetail(t, "model id", id, plantedKey)
	}
	if !strings.HasPrefix(ids[0], "hostile\uFFFD]52;c;aGFja2Vk\uFFFD-Bearer "+redacted) {
		t.Errorf("first id %q", ids[0])
	}
	// The models endpoint's own errors are cleaned and redacted too.
	e2 := hostileengine.Start(t, hostileengine.Config{ModelIDs: []string{}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "boom "+hostileengine.Escapes+" "+r.Header.Get("Authorization"))
	}))
	t.Cleanup(srv.Close)
	for _, c := range []*Client{hostileClient(t, e2, Options{APIKey: plantedKey}), newClient(t, srv, Options{APIKey: plantedKey})} {
		_, err := c.Models(context.Background())
		if err == nil {
			t.Fatal("no error")
		}
		checkDetail(t, "models error", err.Error(), plantedKey)
	}
}

// A reply that echoes the key keeps its text as sent (escapes and all:
// whoever prints it cleans it) but not the key.
func TestEchoInContentRedacted(t *testing.T) {
	e := hostileengine.Start(t, hostileengine.Config{EchoInContent: true})
	c := hostileClient(t, e, Options{APIKey: plantedKey})
	r := c.Do(context.Background(), &Request{Messages: []Message{{"user", "hi"}}, KeepText: true})
	if !r.Successful || !strings.Contains(r.Text, "tok Bearer "+redacted+" "+hostileengine.Escapes+" 0 ") || strings.Contains(r.Text, plantedKey[:5]) {
		t.Errorf("successful %v text %q", r.Successful, r.Text)
	}
	if r.OutputSHA256 == nil {
		t.Error("no output hash")
	}
}

// A finish_reason is cleaned and bounded.
func TestFinishReasonCleaned(t *testing.T) {
	long := "stop\x1b]0;pwned\x07\xc2\x9b" + strings.Repeat("y", 1000)
	stream := roleChunk + chatChunk("a") + strings.Replace(finishChunk, `"finish_reason":"stop"`, `"finish_reason":`+mustJSON(long), 1) +
		usageChunk(10, 0, 1) + doneEvent
	r := measureString(stream)
	if r.FinishReason == nil {
		t.Fatal("no finish_reason")
	}
	checkDetail(t, "finish_reason", *r.FinishReason)
	if !strings.HasPrefix(*r.FinishReason, "stop\uFFFD]0;pwned") || len(*r.FinishReason) > 3*maxFinishLen {
		t.Errorf("finish_reason %q", *r.FinishReason)
	}
}

// A count is valid up to 2^40; anything larger is an invalid count, so
// sums over a run cannot overflow.
func TestCountBound(t *testing.T) {
	for _, c := range []struct {
		prompt, cached string
		valid          bool
	}{
		{"1099511627776", "1099511627776", true},
		{"1099511627777", "0", false},
		{"4611686018427387904", "0", false},
		{"100", "1099511627777", false},
		{"9223372036854775807", "9223372036854775807", false},
		{"18446744073709551616", "0", false},
	} {
		usage := `data: {"choices":[],"usage":{"prompt_tokens":` + c.prompt + `,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":` + c.cached + `}},"timings":{"cache_n":` + c.cached + `}}` + "\n\n"
		r := measureString(roleChunk + chatChunk("a") + usage + doneEvent)
		if c.valid {
			if r.CacheState != StateReused || r.PromptTokens == nil || *r.PromptTokens != MaxCount || r.CacheN == nil {
				t.Errorf("%s/%s: state %s prompt %s cache_n %s", c.prompt, c.cached, r.CacheState, intp(r.PromptTokens), intp(r.CacheN))
			}
			continue
		}
		if r.CacheState != StateUnverified || reason(r) != ReasonInvalidCount {
			t.Errorf("%s/%s: state %s (%s), want unverified invalid_count", c.prompt, c.cached, r.CacheState, reason(r))
		}
		if c.cached != "0" && r.CacheN != nil {
			t.Errorf("%s/%s: cache_n %d kept", c.prompt, c.cached, *r.CacheN)
		}
	}
	// The hostile engine's counts near 2^62 end the same way, over HTTP.
	e := hostileengine.Start(t, hostileengine.Config{Replies: []hostileengine.Reply{hostileengine.HugeCounts}})
	r := hostileClient(t, e, Options{}).Do(context.Background(), &Request{Messages: []Message{{"user", "hi"}}})
	if !r.Successful || reason(r) != ReasonInvalidCount || r.PromptTokens != nil || r.CachedTokens != nil || r.CompletionTokens != nil || r.CacheN != nil {
		t.Errorf("huge counts: successful %v reason %s prompt %s cached %s completion %s cache_n %s",
			r.Successful, reason(r), intp(r.PromptTokens), intp(r.CachedTokens), intp(r.CompletionTokens), intp(r.CacheN))
	}
}

// An endless stream ends as response_too_long once the body passes the
// limit, with the engine still sending.
func TestEndlessStream(t *testing.T) {
	e := hostileengine.Start(t, hostileengine.Config{Replies: []hostileengine.Reply{hostileengine.Endless}})
	const limit = 4 << 20
	c := hostileClient(t, e, Options{MaxResponseBytes: limit})
	r := c.Do(context.Background(), &Request{Messages: []Message{{"user", "hi"}}, KeepText: true, KeepGaps: true})
	if errCode(r) != ErrResponseTooLong || r.Successful || r.Complete {
		t.Fatalf("error %q successful %v: %v", errCode(r), r.Successful, ptrStr(r.ErrorDetail))
	}
	if !strings.Contains(*r.ErrorDetail, "4194304") || !strings.Contains(*r.ErrorDetail, "--max-response-bytes") {
		t.Errorf("detail %q", *r.ErrorDetail)
	}
	if r.Chunks < 10000 || len(r.Text) > limit {
		t.Errorf("%d chunks, %d bytes of text", r.Chunks, len(r.Text))
	}
	if r.CacheState != StateUnverified || reason(r) != ReasonError {
		t.Errorf("state %s (%s)", r.CacheState, reason(r))
	}
	// The default limit applies without an option.
	if New(Options{}).opts.MaxResponseBytes != DefaultMaxResponseBytes {
		t.Error("no default response limit")
	}
}

// longStream is a reader of a complete stream of n content chunks; chunk
// k arrives at gapAt(k) after the previous one (an exact clock), so the
// stream need not be held in memory, nor allocated chunk by chunk.
type longStream struct {
	n, k  int
	gapAt func(k int) time.Duration
	cur   time.Duration
	base  time.Time
	pend  string
	ended bool
}

var longChunk, longFirst = chatChunk("t"), roleChunk + chatChunk("t")

func (l *longStream) Read(p []byte) (int, error) {
	if l.pend == "" {
		switch {
		case l.k < l.n:
			l.cur += l.gapAt(l.k)
			l.pend = longChunk
			if l.k == 0 {
				l.pend = longFirst
			}
			l.k++
		case !l.ended:
			l.ended = true
			l.cur += time.Millisecond
			l.pend = usageChunk(10, 0, 2*l.n) + doneEvent
		default:
			return 0, io.EOF
		}
	}
	n := copy(p, l.pend)
	l.pend = l.pend[n:]
	return n, nil
}

func (l *longStream) now() time.Time { return l.base.Add(l.cur) }

// A stream of more chunks than a stream keeps arrival times for keeps a
// bounded store, and its ITL and round-gap percentiles stay within the
// histogram's 1/128 of the exact ones.
func TestLongStreamBounded(t *testing.T) {
	const n = 5 * maxExactChunks
	gapAt := func(k int) time.Duration { return time.Duration(1+k%7) * time.Millisecond * time.Duration(1+k%3) / 2 }
	exact := make([]time.Duration, 0, n-1)
	for k := 1; k < n; k++ {
		exact = append(exact, gapAt(k))
	}
	slices.Sort(exact)
	var span time.Duration
	for _, g := range exact {
		span += g
	}

	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	ls := &longStream{n: n, gapAt: gapAt, base: testSubmit}
	r := Measure(ls, &Request{ID: "long", KeepGaps: true, MaxTokens: 1 << 30}, testSubmit, ls.now, 0)
	runtime.ReadMemStats(&m1)
	if !r.Successful || r.Chunks != n {
		t.Fatalf("successful %v chunks %d: %v", r.Successful, r.Chunks, ptrStr(r.ErrorDetail))
	}
	// 5 * 16384 chunks: arrival times for all of them would be 640 KiB
	// (1.3 MiB allocated while doubling); the bounded store is 128 KiB of
	// arrivals and a 21 KiB histogram.
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 400<<10 {
		t.Errorf("%d KiB allocated for one stream of %d chunks", alloc>>10, n)
	}
	if r.RoundGapsMs != nil || r.RoundGapHist == nil || r.RoundGapHist.Count() != n-1 || r.RoundGapHist.Sum() != span {
		t.Fatalf("gaps: %d exact, histogram %v", len(r.RoundGapsMs), r.RoundGapHist != nil)
	}
	within := func(name string, got *float64, want time.Duration) {
		t.Helper()
		if got == nil {
			t.Errorf("%s null", name)
			return
		}
		if w := ms(want); *got < w*(1-1.0/128) || *got > w*(1+1.0/128) {
			t.Errorf("%s = %v, exact %v", name, *got, w)
		}
	}
	tokens := 2 * n
	zeros := tokens - n
	itl := func(p int) time.Duration {
		k := nearestRank(tokens-1, p)
		if k <= zeros {
			return 0
		}
		return exact[k-zeros-1]
	}
	checkFloat(t, "itl_mean_ms", r.ITLMeanMs, ms(span)/float64(tokens-1))
	within("round_gap_p50_ms", r.RoundGapP50Ms, exact[nearestRank(n-1, 50)-1])
	within("round_gap_p95_ms", r.RoundGapP95Ms, exact[nearestRank(n-1, 95)-1])
	within("itl_p95_ms", r.ITLP95Ms, itl(95))
	checkFloat(t, "itl_p50_ms", r.ITLP50Ms, 0)
}

func TestGapHistogram(t *testing.T) {
	var h GapHistogram
	if h.Rank(1) != 0 || h.Count() != 0 {
		t.Fatal("empty histogram")
	}
	// Exact below 128 ns, within 1/128 above, clamped at both ends.
	for _, d := range []time.Duration{0, 1, 127, 128, 129, 255, 256, 1000, 12345678, time.Second, 30 * time.Hour} {
		h.Reset()
		h.Add(d)
		got := h.Rank(1)
		if d < 128 && got != d || float64(got) < float64(d)*(1-1.0/128) || float64(got) > float64(d)*(1+1.0/128) {
			t.Errorf("Rank of %d = %d", d, got)
		}
	}
	h.Reset()
	h.Add(-5)
	h.Add(1000 * time.Hour)
	if h.Rank(1) != 0 || h.Rank(2) < 38*time.Hour || h.Rank(2) > 40*time.Hour || h.Sum() != histMax {
		t.Errorf("clamping: %v %v sum %v", h.Rank(1), h.Rank(2), h.Sum())
	}
	var a, b GapHistogram
	a.AddN(time.Millisecond, 3)
	b.Add(2 * time.Millisecond)
	a.Merge(&b)
	a.Merge(nil)
	if a.Count() != 4 || a.Sum() != 5*time.Millisecond || a.Rank(3) >= 2*time.Millisecond-30*time.Microsecond || a.Rank(4) < 2*time.Millisecond-20*time.Microsecond {
		t.Errorf("merge: n %d sum %v ranks %v %v", a.Count(), a.Sum(), a.Rank(3), a.Rank(4))
	}
}
