package workload

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
)

// BenchmarkMultiRoundChatFinish is the dispatcher-side cost of one
// finished request (the session freed, the answer kept, the outcome and
// the working set updated) with every session in the cache: O(1)
// whatever the number of sessions, where summing every session's tokens
// twice per request cost 0.55 ms at 200 sessions and 1.45 ms at 50,000.
func BenchmarkMultiRoundChatFinish(b *testing.B) {
	for _, users := range []int{200, 50_000} {
		b.Run(fmt.Sprintf("sessions=%d", users), func(b *testing.B) {
			// users = volume x tokens per GB / (shared + history)
			p := mkParams(b, config.MultiRoundChat, 1000, map[string]any{
				"kv_cache_volume": float64(users) / 100, "mrc_shared_prompt_length": 5, "mrc_chat_history_length": 5})
			wl, err := New(context.Background(), p)
			if err != nil {
				b.Fatal(err)
			}
			w := wl.(*MultiRoundChat)
			if len(w.sessions) != users {
				b.Fatalf("%d sessions, want %d", len(w.sessions), users)
			}
			prompt, out := 40, 10
			for _, s := range w.sessions {
				w.Observe(&sender.Result{RequestID: fmt.Sprintf("warmup_s%d", s.ID), Phase: sender.PhaseWarmup, Successful: true,
					PromptTokens: &prompt, CompletionTokens: &out})
			}
			res := &sender.Result{Phase: sender.PhaseMeasured, Successful: true, PromptTokens: &prompt, CompletionTokens: &out, Text: "ok"}
			for i := 0; b.Loop(); i++ {
				s := w.sessions[i%users]
				if i%users == 0 {
					for _, s := range w.sessions {
						s.Exchanges = s.Exchanges[:0] // the benchmark, not the history, is measured
					}
				}
				res.RequestID = "s" + fmt.Sprint(s.ID) + "_r" + fmt.Sprint(i)
				w.finish(s, true, res)
			}
		})
	}
}

// BenchmarkMultiRoundChatPrompt builds one request of a session whose
// history has grown to about 56k tokens (93 rounds of a 500-token query
// and a 100-token answer): its messages, and for completions the prompt
// joined from them. Joining with += copied the prompt so far once per
// message (31 ms per request at this size); one copy is about what chat's
// body encoding costs anyway.
func BenchmarkMultiRoundChatPrompt(b *testing.B) {
	s := &mrcSession{ID: 1, System: MultiRoundChatSystem(1, 10), History: MultiRoundChatHistory(1, 10)}
	answer := strings.TrimSpace(strings.Repeat("token ", 100))
	query := MultiRoundChatQuery(500)
	for range 93 {
		s.Exchanges = append(s.Exchanges, mrcExchange{Query: query, Answer: answer})
	}
	for _, ep := range []sender.Endpoint{sender.Chat, sender.Completions} {
		b.Run(string(ep), func(b *testing.B) {
			size := 0
			for b.Loop() {
				req := &sender.Request{Endpoint: ep, Messages: s.Messages(query)}
				setPrompt(req)
				size = len(req.Prompt)
			}
			if ep == sender.Completions && size < 56_000*4 {
				b.Fatalf("a prompt of %d bytes", size)
			}
		})
	}
}
