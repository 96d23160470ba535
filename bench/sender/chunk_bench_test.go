package sender

import (
	"testing"

	"github.com/kvbench/kvbench/internal/jsonscan"
)

// BenchmarkParseChunk decodes whole chunks with the scanner, as the
// first chunk of a stream and every chunk that is not a template copy
// (usage, finish, reasoning, escapes) are.
func BenchmarkParseChunk(b *testing.B) {
	docs := [][]byte{
		[]byte(`{"id":"chatcmpl-8c6b5f2a9e3d4b1c8a7f6e5d4c3b2a19","object":"chat.completion.chunk","created":1764450000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"role":"assistant","content":"The prefix cache"},"logprobs":null,"finish_reason":null}]}`),
		[]byte(`{"id":"chatcmpl-8c6b5f2a9e3d4b1c8a7f6e5d4c3b2a19","object":"chat.completion.chunk","created":1764450000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"reasoning_content":"line one\nline \"two\" \u00e9"},"logprobs":null,"finish_reason":"length"}]}`),
		[]byte(`{"id":"chatcmpl-8c6b5f2a9e3d4b1c8a7f6e5d4c3b2a19","object":"chat.completion.chunk","created":1764450000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[],"usage":{"prompt_tokens":2048,"total_tokens":2176,"completion_tokens":128,"prompt_tokens_details":{"cached_tokens":2032}}}`),
		[]byte(`{"index":0,"content":" tokens","tokens":[1234],"stop":false,"timings":{"cache_n":1987,"prompt_n":61,"predicted_n":12}}`),
	}
	var s jsonscan.Scanner
	var c chunk
	n := 0
	for _, d := range docs {
		n += len(d)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range docs {
			if !parseChunk(&s, &c, d) {
				b.Fatalf("%s", d)
			}
		}
	}
}
