package bench

import (
	"strings"
	"testing"

	"github.com/kvbench/kvbench/bench/sender"
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
