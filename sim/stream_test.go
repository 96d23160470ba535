package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestChatStreamFraming(t *testing.T) {
	r := startSim(t, nil)
	res := streamChat(t, r.URL(), "tell me about the cache", map[string]any{"max_tokens": 8, "ignore_eos": true})

	if !res.RoleFirst {
		t.Errorf("first event is not the role chunk: %s", res.Events[0])
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(res.Events[0]), &first); err != nil {
		t.Fatal(err)
	}
	delta := first["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
	if delta["role"] != "assistant" || delta["content"] != "" {
		t.Errorf("role chunk delta = %v", delta)
	}
	n := len(res.Events)
	if !res.Done || res.Events[n-1] != "[DONE]" {
		t.Fatalf("stream does not end with [DONE]: %v", res.Events[n-1])
	}
	// ... finish chunk, usage chunk with no choices, [DONE].
	var usageChunk struct {
		Choices []any           `json:"choices"`
		Usage   json.RawMessage `json:"usage"`
		Object  string          `json:"object"`
	}
	if err := json.Unmarshal([]byte(res.Events[n-2]), &usageChunk); err != nil {
		t.Fatal(err)
	}
	if usageChunk.Choices == nil || len(usageChunk.Choices) != 0 || usageChunk.Usage == nil {
		t.Errorf("usage chunk = %s", res.Events[n-2])
	}
	if usageChunk.Object != "chat.completion.chunk" {
		t.Errorf("object = %q", usageChunk.Object)
	}
	if !strings.Contains(res.Events[n-3], `"finish_reason":"length"`) {
		t.Errorf("finish chunk = %s", res.Events[n-3])
	}
	if res.ContentChunks != 8 || res.Usage.CompletionTokens != 8 {
		t.Errorf("chunks %d, completion_tokens %d, want 8 and 8", res.ContentChunks, res.Usage.CompletionTokens)
	}
	if got := len(tokenize(nil, res.Content)); got != 8 {
		t.Errorf("reply %q is %d tokens, want 8", res.Content, got)
	}
	if res.Usage.TotalTokens != res.Usage.PromptTokens+res.Usage.CompletionTokens {
		t.Errorf("usage %+v does not add up", res.Usage)
	}
	for _, ev := range res.Events {
		if strings.Contains(ev, "token_sha") || strings.Contains(ev, "tensorfold") {
			t.Errorf("event carries a token fingerprint: %s", ev)
		}
	}
}

func TestCompletionsStreamUsesText(t *testing.T) {
	r := startSim(t, nil)
	for _, prompt := range []any{"hi tell help", []int{5, 6, 7}} {
		res := streamCompletion(t, r.URL(), prompt, map[string]any{"max_tokens": 5, "ignore_eos": true})
		if res.RoleFirst {
			t.Error("completions stream sent a role chunk")
		}
		if res.ContentChunks != 5 || res.Usage.CompletionTokens != 5 || res.Usage.PromptTokens != 3 {
			t.Errorf("prompt %v: chunks %d usage %+v", prompt, res.ContentChunks, res.Usage)
		}
		if !strings.Contains(res.Events[0], `"object":"text_completion"`) || !strings.Contains(res.Events[0], `"text":`) {
			t.Errorf("first chunk = %s", res.Events[0])
		}
		if !res.Done {
			t.Error("no [DONE]")
		}
	}
}

func TestNoUsageChunkWithoutIncludeUsage(t *testing.T) {
	r := startSim(t, nil)
	res := streamChat(t, r.URL(), "hi", map[string]any{"stream_options": nil})
	if res.Usage != nil || !res.Done {
		t.Errorf("usage %v, done %v", res.Usage, res.Done)
	}
}

func TestTokensPerChunk(t *testing.T) {
	r := startSim(t, func(c *Config) { c.TokensPerChunk = 3 })
	res := streamChat(t, r.URL(), "hi", map[string]any{"max_tokens": 10, "ignore_eos": true})
	if res.ContentChunks != 4 || res.Usage.CompletionTokens != 10 {
		t.Errorf("chunks %d tokens %d, want 4 and 10", res.ContentChunks, res.Usage.CompletionTokens)
	}
	if got := len(tokenize(nil, res.Content)); got != 10 {
		t.Errorf("reply %q is %d tokens", res.Content, got)
	}
}

func TestReasoningBeforeContent(t *testing.T) {
	r := startSim(t, func(c *Config) { c.ReasoningTokens = 4 })
	res := streamChat(t, r.URL(), "hi", map[string]any{"max_tokens": 10, "ignore_eos": true})
	if res.ReasonChunks != 4 || res.ContentChunks != 6 || res.Usage.CompletionTokens != 10 {
		t.Fatalf("reasoning %d content %d usage %d", res.ReasonChunks, res.ContentChunks, res.Usage.CompletionTokens)
	}
	// Every reasoning chunk comes before the first content chunk.
	seenContent := false
	for _, ev := range res.Events {
		if strings.Contains(ev, `"content":"`) && !strings.Contains(ev, `"role"`) {
			seenContent = true
		}
		if strings.Contains(ev, "reasoning_content") && seenContent {
			t.Fatalf("reasoning after content: %s", ev)
		}
	}
	if got := len(tokenize(nil, res.Reasoning)); got != 4 {
		t.Errorf("reasoning %q is %d tokens", res.Reasoning, got)
	}
}

func TestEOSRule(t *testing.T) {
	r := startSim(t, nil)
	short := streamChat(t, r.URL(), "hi", map[string]any{"max_tokens": 5})
	if short.Usage.CompletionTokens != 5 || short.Finish != "length" {
		t.Errorf("max_tokens 5: %d tokens, finish %q", short.Usage.CompletionTokens, short.Finish)
	}
	long := streamChat(t, r.URL(), "hi", map[string]any{"max_tokens": 2000})
	n := long.Usage.CompletionTokens
	if n < eosMin || n >= eosMin+eosSpan || long.Finish != "stop" {
		t.Errorf("natural end: %d tokens, finish %q", n, long.Finish)
	}
	ignore := streamChat(t, r.URL(), "hi", map[string]any{"max_tokens": 2000, "ignore_eos": true})
	if ignore.Usage.CompletionTokens != 2000 || ignore.Finish != "length" {
		t.Errorf("ignore_eos: %d tokens, finish %q", ignore.Usage.CompletionTokens, ignore.Finish)
	}
	// The natural reply is a prefix of the longer one: the same greedy text.
	if !strings.HasPrefix(ignore.Content, long.Content) {
		t.Error("ignore_eos reply does not extend the natural one")
	}
}

func TestGreedyDeterminism(t *testing.T) {
	a := startSim(t, nil)
	b := startSim(t, nil)
	prompt := "tell me how a prefix cache works"
	extra := map[string]any{"max_tokens": 64, "ignore_eos": true, "seed": 7}
	r1 := streamChat(t, a.URL(), prompt, extra)
	r2 := streamChat(t, a.URL(), prompt, extra)
	r3 := streamChat(t, b.URL(), prompt, map[string]any{"max_tokens": 64, "ignore_eos": true})
	if r1.Content != r2.Content || r1.Content != r3.Content {
		t.Errorf("greedy replies differ:\n%s\n%s\n%s", r1.Content, r2.Content, r3.Content)
	}
	other := streamChat(t, a.URL(), prompt+" please", extra)
	if other.Content == r1.Content {
		t.Error("a different prompt gave the same reply")
	}
	// Token-id prompts: the same ids give the same reply as the text.
	ids := tokenize(nil, "hi tell help")
	c1 := streamCompletion(t, a.URL(), "hi tell help", map[string]any{"max_tokens": 32, "ignore_eos": true})
	c2 := streamCompletion(t, a.URL(), ids, map[string]any{"max_tokens": 32, "ignore_eos": true})
	if c1.Content != c2.Content {
		t.Error("a token-id prompt and its text gave different replies")
	}
}

func TestSampledReplies(t *testing.T) {
	r := startSim(t, nil)
	hot := map[string]any{"temperature": 0.8, "max_tokens": 64, "ignore_eos": true}
	a := streamChat(t, r.URL(), "hi", hot)
	b := streamChat(t, r.URL(), "hi", hot)
	if a.Content == b.Content {
		t.Error("two sampled replies without a seed are identical")
	}
	seeded := map[string]any{"temperature": 0.8, "max_tokens": 64, "ignore_eos": true, "seed": 3}
	c := streamChat(t, r.URL(), "hi", seeded)
	d := streamChat(t, r.URL(), "hi", seeded)
	if c.Content != d.Content {
		t.Error("two sampled replies with the same seed differ")
	}
}

func TestNondeterministicRate(t *testing.T) {
	greedy := startSim(t, nil)
	flaky := startSim(t, func(c *Config) { c.NondeterministicRate = 1 })
	extra := map[string]any{"max_tokens": 40, "ignore_eos": true}
	want := streamChat(t, greedy.URL(), "tell", extra)
	got := streamChat(t, flaky.URL(), "tell", extra)
	if got.Content == want.Content {
		t.Fatal("--nondeterministic-rate 1 gave the greedy reply")
	}
	if got.Usage.CompletionTokens != want.Usage.CompletionTokens || len(tokenize(nil, got.Content)) != 40 {
		t.Errorf("the altered reply changed length: %d vs %d", got.Usage.CompletionTokens, want.Usage.CompletionTokens)
	}
}

func TestNonStreaming(t *testing.T) {
	r := startSim(t, func(c *Config) { c.ReasoningTokens = 2 })
	body := chat("hi tell help", map[string]any{"stream": false, "stream_options": nil, "max_tokens": 6, "ignore_eos": true})
	resp := post(t, r.URL(), "/v1/chat/completions", body)
	defer resp.Body.Close()
	var out struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Role             string `json:"role"`
				Content          string `json:"content"`
				ReasoningContent string `json:"reasoning_content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage usageJSON `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	m := out.Choices[0].Message
	if out.Object != "chat.completion" || m.Role != "assistant" || out.Choices[0].FinishReason != "length" {
		t.Errorf("response %+v", out)
	}
	if len(tokenize(nil, m.Content)) != 4 || len(tokenize(nil, m.ReasoningContent)) != 2 || out.Usage.CompletionTokens != 6 {
		t.Errorf("content %q reasoning %q usage %+v", m.Content, m.ReasoningContent, out.Usage)
	}
	if out.Usage.cached(t) != 0 {
		t.Error("first request reports cached tokens")
	}

	// The streamed reply has the same text.
	s := streamChat(t, r.URL(), "hi tell help", map[string]any{"max_tokens": 6, "ignore_eos": true})
	if s.Content != m.Content || s.Reasoning != m.ReasoningContent {
		t.Errorf("streamed %q/%q, non-streamed %q/%q", s.Content, s.Reasoning, m.Content, m.ReasoningContent)
	}

	comp := post(t, r.URL(), "/v1/completions", completion("hi", map[string]any{"stream": false, "stream_options": nil}))
	raw, _ := io.ReadAll(comp.Body)
	comp.Body.Close()
	if comp.StatusCode != http.StatusOK || !strings.Contains(string(raw), `"object":"text_completion"`) || !strings.Contains(string(raw), `"text":`) {
		t.Errorf("completion: %d %s", comp.StatusCode, raw)
	}
}
