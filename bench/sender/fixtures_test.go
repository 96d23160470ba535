package sender

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type fixtureWant struct {
	state, reason                      string
	prompt, cached, completion, cacheN string // "null" or the count
	chunks                             int
	firstEvent                         int // 1-based event of the first token, 0: none
	complete, successful               bool
	err                                string
	finish                             string
	hashed                             bool   // output_sha256 is not null
	sha                                string // known output_sha256, when checked by hand
	tokenSHA                           string
	reasoningField                     string
}

// fixtures describes every stream in testdata/streams; a stream without an
// entry fails the test.
var fixtures = map[string]fixtureWant{
	"llamacpp-chat-include-usage.sse": {
		state: StateReused, prompt: "67", cached: "66", completion: "16", cacheN: "66",
		chunks: 16, firstEvent: 2, complete: true, successful: true, finish: "length", hashed: true,
		sha: "a03d61a71860287f4f719f49b188b594aa1fe55dd8fbeb7634913b38ae3193f2",
	},
	"llamacpp-chat-first.sse": {
		state: StateReused, prompt: "51", cached: "8", completion: "8", cacheN: "8",
		chunks: 8, firstEvent: 2, complete: true, successful: true, finish: "length", hashed: true,
	},
	"llamacpp-chat-warm.sse": {
		state: StateReused, prompt: "51", cached: "50", completion: "8", cacheN: "50",
		chunks: 8, firstEvent: 2, complete: true, successful: true, finish: "length", hashed: true,
	},
	"llamacpp-completions.sse": {
		state: StateCold, prompt: "10", cached: "0", completion: "8", cacheN: "0",
		chunks: 8, firstEvent: 1, complete: true, successful: true, finish: "length", hashed: true,
		sha: "0315fbd968d655f2e399b65038710378cc05a8e5b815c278a5bbef8a69cc380e",
	},
	"ollama-chat.sse": {
		state: StateUnverified, reason: ReasonDetailsAbsent, prompt: "18", cached: "null", completion: "8", cacheN: "null",
		chunks: 8, firstEvent: 1, complete: true, successful: true, finish: "length", hashed: true,
		sha: "f0cb9ed891108d8f32893f2297621bd600403c966b83c3a6f3a2cfb86cfa85cd",
	},
	"ollama-completions.sse": {
		state: StateUnverified, reason: ReasonDetailsAbsent, prompt: "10", cached: "null", completion: "4", cacheN: "null",
		chunks: 4, firstEvent: 1, complete: true, successful: true, finish: "length", hashed: true,
	},
	"hand-vllm-reasoning.sse": {
		state: StateCold, prompt: "24", cached: "0", completion: "14", cacheN: "null",
		chunks: 12, firstEvent: 2, complete: true, successful: true, finish: "stop", hashed: true,
		reasoningField: "reasoning_content",
	},
	"hand-crlf-token-sha.sse": {
		state: StateReused, prompt: "128", cached: "112", completion: "5", cacheN: "null",
		chunks: 5, firstEvent: 3, complete: true, successful: true, finish: "stop", hashed: true,
		tokenSHA: "9f2c4e1a7b3d5f608192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8",
	},
	"hand-tool-calls.sse": {
		state: StateReused, prompt: "40", cached: "32", completion: "12", cacheN: "null",
		chunks: 0, complete: true, successful: true, finish: "tool_calls",
	},
	"hand-truncated.sse": {
		state: StateUnverified, reason: ReasonIncomplete, prompt: "12", cached: "0", completion: "2", cacheN: "null",
		chunks: 2, firstEvent: 2, err: ErrIncomplete, finish: "length",
	},
	"hand-midstream-error.sse": {
		state: StateUnverified, reason: ReasonError, prompt: "null", cached: "null", completion: "null", cacheN: "null",
		chunks: 2, firstEvent: 2, err: ErrStreamError,
	},
}

func TestFixtureStreams(t *testing.T) {
	files, err := filepath.Glob("../../testdata/streams/*.sse")
	if err != nil || len(files) == 0 {
		t.Fatalf("no streams: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		name := filepath.Base(f)
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			want, ok := fixtures[name]
			if !ok {
				t.Fatalf("no expectation for %s: add it to fixtures", name)
			}
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			const step = 10 * time.Millisecond
			segs := eventsEvery(string(raw), step)
			r := measureSegs(&Request{ID: name, Phase: PhaseMeasured}, 0, segs...)
			checkFixture(t, r, want, string(raw))
			if want.firstEvent > 0 {
				checkFloat(t, "ttft_s", r.TTFT, (time.Duration(want.firstEvent) * step).Seconds())
			} else if r.TTFT != nil || r.FirstTokenTime != nil {
				t.Errorf("first token at %v, want none", *r.TTFT)
			}
			if r.Complete {
				if got, want := r.RequestLatency, (time.Duration(len(segs)) * step).Seconds(); !approx(got, want) {
					t.Errorf("latency %v, want %v ([DONE] is the last event)", got, want)
				}
			}
			// The same bytes one at a time, and in odd sizes, measure the same.
			for _, body := range []interface{ Read([]byte) (int, error) }{
				&byteReader{raw},
				&sizedReader{b: raw, sizes: []int{7, 1, 300, 2, 4096, 3}},
			} {
				again := Measure(body, &Request{ID: name}, testSubmit, fixedClock, 0)
				checkFixture(t, again, want, string(raw))
			}
		})
	}
	for name := range fixtures {
		if !seen[name] {
			t.Errorf("fixture %s described but missing", name)
		}
	}
}

func checkFixture(t *testing.T, r Result, want fixtureWant, raw string) {
	t.Helper()
	if r.CacheState != want.state || reason(r) != want.reason {
		t.Errorf("receipt %s/%s, want %s/%s", r.CacheState, reason(r), want.state, want.reason)
	}
	for _, c := range []struct {
		name string
		got  *int
		want string
	}{{"prompt_tokens", r.PromptTokens, want.prompt}, {"cached_tokens", r.CachedTokens, want.cached},
		{"completion_tokens", r.CompletionTokens, want.completion}, {"cache_n", r.CacheN, want.cacheN}} {
		if intp(c.got) != c.want {
			t.Errorf("%s = %s, want %s", c.name, intp(c.got), c.want)
		}
	}
	if r.Chunks != want.chunks {
		t.Errorf("chunks = %d, want %d", r.Chunks, want.chunks)
	}
	if r.Complete != want.complete || r.Successful != want.successful || errCode(r) != want.err {
		t.Errorf("complete %v successful %v error %q, want %v %v %q (%v)", r.Complete, r.Successful, errCode(r),
			want.complete, want.successful, want.err, r.ErrorDetail)
	}
	finish := ""
	if r.FinishReason != nil {
		finish = *r.FinishReason
	}
	if finish != want.finish {
		t.Errorf("finish_reason %q, want %q", finish, want.finish)
	}
	if (r.OutputSHA256 != nil) != want.hashed {
		t.Errorf("output_sha256 %v, want hashed=%v", r.OutputSHA256, want.hashed)
	}
	if r.OutputSHA256 != nil {
		if ref := refOutputSHA(t, raw); *r.OutputSHA256 != ref {
			t.Errorf("output_sha256 %s, oracle %s", *r.OutputSHA256, ref)
		}
		if want.sha != "" && *r.OutputSHA256 != want.sha {
			t.Errorf("output_sha256 %s, want %s", *r.OutputSHA256, want.sha)
		}
	}
	tok := ""
	if r.TokenSHA != nil {
		tok = *r.TokenSHA
	}
	if tok != want.tokenSHA {
		t.Errorf("token_sha %q, want %q", tok, want.tokenSHA)
	}
	if r.ReasoningField != want.reasoningField {
		t.Errorf("reasoning field %q, want %q", r.ReasoningField, want.reasoningField)
	}
	if want.err == "" && strings.Contains(raw, "\"error\"") {
		t.Errorf("stream has an error object but none was expected")
	}
}
