package sender

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

const benchChunks = 128

// benchEvents is a realistic vLLM chat stream: a role chunk, 128 content
// chunks of a few bytes, a finish chunk, a usage chunk and [DONE], one
// SSE event per element.
func benchEvents() []string {
	head := `data: {"id":"chatcmpl-8c6b5f2a9e3d4b1c8a7f6e5d4c3b2a19","object":"chat.completion.chunk","created":1764450000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":`
	tail := `,"logprobs":null,"finish_reason":null}]}` + "\n\n"
	words := strings.Fields("The prefix cache keeps the key and value tensors of earlier tokens so a repeated prompt skips most of its prefill; " +
		"long documents, multi-round chats and shared system prompts all benefit, and a tiered cache extends the reach beyond GPU memory.")
	ev := []string{head + `{"role":"assistant","content":""}` + tail}
	for i := range benchChunks {
		w := words[i%len(words)]
		if i > 0 {
			w = " " + w
		}
		b, _ := json.Marshal(w)
		ev = append(ev, head+`{"content":`+string(b)+`}`+tail)
	}
	ev = append(ev,
		head+`{"content":""}`+strings.Replace(tail, `"finish_reason":null`, `"finish_reason":"length"`, 1),
		`data: {"id":"chatcmpl-8c6b5f2a9e3d4b1c8a7f6e5d4c3b2a19","object":"chat.completion.chunk","created":1764450000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[],"usage":{"prompt_tokens":2048,"total_tokens":2176,"completion_tokens":128,"prompt_tokens_details":{"cached_tokens":2032}}}`+"\n\n",
		"data: [DONE]\n\n")
	return ev
}

// eventReader returns one SSE event per read, as a network read would at
// decode speed.
type eventReader struct {
	ev  []string
	i   int
	off int
}

func (r *eventReader) reset() { r.i, r.off = 0, 0 }

func (r *eventReader) Read(p []byte) (int, error) {
	if r.i >= len(r.ev) {
		return 0, io.EOF
	}
	n := copy(p, r.ev[r.i][r.off:])
	if r.off += n; r.off == len(r.ev[r.i]) {
		r.i, r.off = r.i+1, 0
	}
	return n, nil
}

// perChunk reports wall time, CPU time and allocations per content
// chunk (this process only: the HTTP benchmarks' server runs in another);
// call the returned function after the loop.
func perChunk(b *testing.B, chunks int) func() {
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cpuNanos()
	return func() {
		b.StopTimer()
		cpu := cpuNanos() - cpu0
		var m1 runtime.MemStats
		runtime.ReadMemStats(&m1)
		n := float64(b.N) * float64(chunks)
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/chunk")
		if cpu > 0 {
			b.ReportMetric(float64(cpu)/n, "cpu-ns/chunk")
		}
		b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/n, "allocs/chunk")
	}
}

func BenchmarkParse(b *testing.B) {
	ev := benchEvents()
	req := &Request{}
	now := time.Now()
	b.Run("event-per-read", func(b *testing.B) {
		rd := &eventReader{ev: ev}
		done := perChunk(b, benchChunks)
		for b.Loop() {
			rd.reset()
			if r := Measure(rd, req, now, nil, 0); r.Chunks != benchChunks || !r.Complete {
				b.Fatalf("chunks %d", r.Chunks)
			}
		}
		done()
	})
	b.Run("one-read", func(b *testing.B) {
		all := []byte(strings.Join(ev, ""))
		rd := bytes.NewReader(all)
		b.SetBytes(int64(len(all)))
		done := perChunk(b, benchChunks)
		for b.Loop() {
			rd.Reset(all)
			Measure(rd, req, now, nil, 0)
		}
		done()
	})
}

// BenchmarkParseBaseline is the floor the parser is held to: a reader
// that only splits lines and byte-searches `"content":"`, fed the same
// one-event reads.
func BenchmarkParseBaseline(b *testing.B) {
	ev := benchEvents()
	rd := &eventReader{ev: ev}
	br := bufio.NewReaderSize(rd, 16<<10)
	done := perChunk(b, benchChunks)
	for b.Loop() {
		rd.reset()
		br.Reset(rd)
		if n := minimalRead(br); n != benchChunks+2 {
			b.Fatalf("%d", n)
		}
	}
	done()
}

var contentKey = []byte(`"content":"`)

func minimalRead(br *bufio.Reader) int {
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		if bytes.Contains(line, contentKey) {
			n++
		}
		if err != nil {
			return n
		}
	}
}

// streamHandler streams the benchmark events with a flush after each, as
// an engine does.
func streamHandler() http.Handler {
	ev := benchEvents()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for _, e := range ev {
			io.WriteString(w, e)
			f.Flush()
		}
	})
}

const serverEnv = "KVBENCH_SENDER_BENCH_SERVER"

// TestMain doubles as the benchmark's engine: run with serverEnv set, the
// test binary serves the benchmark stream on loopback, prints its URL and
// exits when stdin closes. A separate process keeps the server's CPU out
// of the client's figures.
func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		srv := httptest.NewServer(streamHandler())
		fmt.Println(srv.URL)
		io.Copy(io.Discard, os.Stdin)
		srv.Close()
		return
	}
	os.Exit(m.Run())
}

// benchServer returns the URL of a stream server in another process, or
// in this one if that cannot start.
func benchServer(b *testing.B) string {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverEnv+"=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err == nil {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err == nil && strings.HasPrefix(line, "http://") {
			b.Cleanup(func() { stdin.Close(); cmd.Wait() })
			return strings.TrimSpace(line)
		}
		stdin.Close()
		cmd.Wait()
	}
	b.Log("stream server in-process: its CPU counts in cpu-ns/chunk")
	srv := httptest.NewServer(streamHandler())
	b.Cleanup(srv.Close)
	return srv.URL
}

func BenchmarkDo(b *testing.B) {
	base, _ := NormalizeURL(benchServer(b))
	c := New(Options{BaseURL: base, Model: "meta-llama/Llama-3.1-8B-Instruct"})
	defer c.Close()
	req := &Request{Messages: []Message{{"user", "Summarise the document."}}, MaxTokens: benchChunks}
	ctx := context.Background()
	c.Do(ctx, req) // warm the connection
	b.ReportAllocs()
	done := perChunk(b, benchChunks)
	for b.Loop() {
		if r := c.Do(ctx, req); r.Chunks != benchChunks || !r.Successful {
			b.Fatalf("%v %v", r.Chunks, r.ErrorDetail)
		}
	}
	done()
}

// BenchmarkDoBaseline sends the same request with net/http and reads the
// reply with the minimal reader: the end-to-end floor, server included.
func BenchmarkDoBaseline(b *testing.B) {
	url := benchServer(b) + "/v1/chat/completions"
	hc := &http.Client{Transport: newTransport()}
	body := []byte(`{"model":"meta-llama/Llama-3.1-8B-Instruct","messages":[{"role":"user","content":"Summarise the document."}],"max_tokens":128,"temperature":0,"stream":true,"stream_options":{"include_usage":true}}`)
	br := bufio.NewReaderSize(nil, 16<<10)
	run := func() {
		resp, err := hc.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		br.Reset(resp.Body)
		if n := minimalRead(br); n != benchChunks+2 {
			b.Fatalf("%d", n)
		}
		resp.Body.Close()
	}
	run()
	b.ReportAllocs()
	done := perChunk(b, benchChunks)
	for b.Loop() {
		run()
	}
	done()
}
