package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
)

func chatReq(first string, more ...string) *sender.Request {
	r := &sender.Request{Messages: []sender.Message{{Role: "user", Content: first}}}
	for _, m := range more {
		r.Messages = append(r.Messages, sender.Message{Role: "user", Content: m})
	}
	return r
}

func TestPromptSaltNoneIsByteIdentical(t *testing.T) {
	s := NewPromptSalt(SaltNone, "run-1", "")
	r := chatReq("Document 0: hi hi")
	c := &sender.Request{Prompt: "Request 0: hi"}
	s.Apply(r)
	s.Apply(c)
	if r.Messages[0].Content != "Document 0: hi hi" || c.Prompt != "Request 0: hi" || s.Mode() != "none" {
		t.Errorf("none changed the prompts: %q %q", r.Messages[0].Content, c.Prompt)
	}
}

func TestPromptSaltAuto(t *testing.T) {
	doc := "Document 3: " + strings.Repeat("hi ", 100)
	a := NewPromptSalt(SaltAuto, "20260101-000000-long-doc-qa", "")
	if a.Mode() != "auto" {
		t.Errorf("mode %q", a.Mode())
	}
	warm, q1, other := chatReq(doc), chatReq(doc+"\n\nQuestion 1: why?"), chatReq("Document 4: "+strings.Repeat("hi ", 100))
	shared := warm.Messages
	a.Apply(warm)
	a.Apply(q1)
	a.Apply(other)
	line := a.Line(doc)
	if !strings.HasSuffix(line, "\n") || strings.Count(line, "\n") != 1 || !strings.Contains(line, "20260101-000000-long-doc-qa") {
		t.Fatalf("salt line %q: want one line naming the run", line)
	}
	// A document and its question still share the document whole.
	if warm.Messages[0].Content != line+doc || !strings.HasPrefix(q1.Messages[0].Content, line+doc) {
		t.Errorf("warmup %q / question %q do not share the salted document", warm.Messages[0].Content[:40], q1.Messages[0].Content[:40])
	}
	// Prompts that differ early differ from the salt's first byte on:
	// the salt adds no prefix they share.
	if o := other.Messages[0].Content; o[0] == warm.Messages[0].Content[0] && o[:8] == warm.Messages[0].Content[:8] {
		t.Errorf("different documents got the same tag: %q / %q", o[:20], warm.Messages[0].Content[:20])
	}
	if shared[0].Content != doc {
		t.Errorf("Apply changed the workload's messages in place")
	}
	// Another run salts differently.
	b := NewPromptSalt(SaltAuto, "20260101-000000-long-doc-qa", "")
	if b.Line(doc) == line {
		t.Errorf("two runs share a salt line %q", line)
	}
	// The shards of one run salt alike.
	s1, s2 := NewPromptSalt(SaltAuto, "a", "key"), NewPromptSalt(SaltAuto, "a", "key")
	if s1.Line(doc) != s2.Line(doc) {
		t.Errorf("shards salt differently")
	}
}

func TestPromptSaltFixedAndVerbatim(t *testing.T) {
	a, b := NewPromptSalt("warm-1", "run-a", ""), NewPromptSalt("warm-1", "run-b", "")
	if a.Mode() != "warm-1" || a.Line("x") != b.Line("x") || !strings.Contains(a.Line("x"), "warm-1") {
		t.Errorf("a fixed salt must be the same in every run: %q %q", a.Line("x"), b.Line("x"))
	}
	user := chatReq("my own prompt")
	user.Verbatim = true
	ids := &sender.Request{PromptIDs: []uint32{1, 2, 3}, Prompt: "ignored"}
	a.Apply(user)
	a.Apply(ids)
	if user.Messages[0].Content != "my own prompt" || ids.Prompt != "ignored" {
		t.Errorf("verbatim or token-id prompts were salted: %q %q", user.Messages[0].Content, ids.Prompt)
	}
	comp := &sender.Request{Prompt: "Request 1: hi"}
	a.Apply(comp)
	if comp.Prompt != a.Line("Request 1: hi")+"Request 1: hi" {
		t.Errorf("completion prompt %q", comp.Prompt)
	}
	// A workload's messages joined into the prompt (--endpoint completions):
	// the prompt that is sent is salted too, with the messages' line.
	long := "Request 1: " + strings.Repeat("hi ", 40)
	both := &sender.Request{Endpoint: sender.Completions, Messages: []sender.Message{{Role: "user", Content: long}}, Prompt: long}
	a.Apply(both)
	if both.Prompt != a.Line(long)+long || both.Messages[0].Content != both.Prompt {
		t.Errorf("completions prompt %q, message %q", both.Prompt, both.Messages[0].Content)
	}
	// The system message of a chat carries the salt: it is the prompt's start.
	sys := &sender.Request{Messages: []sender.Message{{Role: "system", Content: "Session 1."}, {Role: "user", Content: "hello"}}}
	a.Apply(sys)
	if !strings.HasPrefix(sys.Messages[0].Content, a.Line("Session 1.")) || sys.Messages[1].Content != "hello" {
		t.Errorf("system %q user %q", sys.Messages[0].Content, sys.Messages[1].Content)
	}
}

// promptEngine is an engine that answers every chat request and keeps
// the first message of each; prompts returns them (sorted) and forgets.
func promptEngine(t *testing.T) (url string, prompts func() []string) {
	t.Helper()
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if json.NewDecoder(r.Body).Decode(&body) == nil && len(body.Messages) > 0 {
			mu.Lock()
			got = append(got, body.Messages[0].Content)
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,\"prompt_tokens_details\":{\"cached_tokens\":0}}}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := slices.Sorted(slices.Values(got))
		got = nil
		return out
	}
}

// A sharded run's prompts are salted by its run key: a rerun with the
// same key sends the same prompts byte for byte (as the other shards of
// the run do), and a rerun with another --run-key or --start-at sends
// prompts that share nothing with the last run's, so its cache is cold.
func TestShardedRerunsSaltByRunKey(t *testing.T) {
	url, prompts := promptEngine(t)
	run := func(set map[string]string) []string {
		t.Helper()
		cfg := config.Default()
		for k, v := range map[string]string{"workload": config.RandomPrefill, "model": "m", "output_dir": t.TempDir(), "no_csv": "true",
			"rp_num_requests": "4", "rp_request_length": "20", "shard": "0/2"} {
			cfg.SetString(k, v)
		}
		for k, v := range set {
			cfg.SetString(k, v)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		r, err := New(context.Background(), &Prepared{Config: cfg, EngineURL: url})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for range r.Events() {
			}
		}()
		if code := r.Run(context.Background()).ExitCode; code != 0 {
			t.Fatalf("%v: exit %d", set, code)
		}
		p := prompts()
		if all := strings.Join(p, "|"); len(p) != 2 || !strings.Contains(all, "Request 0: ") || !strings.Contains(all, "Request 2: ") {
			t.Fatalf("shard 0/2 of 4 requests sent %q", p)
		}
		return p
	}
	shareNothing := func(what string, a, b []string) {
		t.Helper()
		for _, x := range a {
			for _, y := range b {
				if x[:12] == y[:12] {
					t.Errorf("%s: prompts begin alike: %q and %q", what, x[:30], y[:30])
				}
			}
		}
	}
	a1 := run(map[string]string{"run_key": "nightly-1"})
	a2 := run(map[string]string{"run_key": "nightly-1"})
	if !slices.Equal(a1, a2) {
		t.Errorf("the same run key salts differently:\n%q\n%q", a1, a2)
	}
	shareNothing("another --run-key", a1, run(map[string]string{"run_key": "nightly-2"}))
	at := time.Now().Add(50 * time.Millisecond).UTC()
	s1 := run(map[string]string{"start_at": at.Format(time.RFC3339Nano)})
	s2 := run(map[string]string{"start_at": at.Add(100 * time.Millisecond).Format(time.RFC3339Nano)})
	shareNothing("another --start-at", s1, s2)
	shareNothing("a start time or a key", s1, a1)
}
