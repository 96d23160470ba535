package workload

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
)

func TestCEBuiltinPrompts(t *testing.T) {
	ps := CEBuiltinPrompts()
	if len(ps) != 16 {
		t.Fatalf("%d built-in prompts, want 16", len(ps))
	}
	kinds := map[string]int{}
	for _, p := range ps {
		kinds[p.Kind]++
	}
	if kinds["chat"] == 0 || kinds["completion"] == 0 {
		t.Fatalf("kinds %v: want both chat and completion prompts", kinds)
	}
}

func TestParseCEPrompts(t *testing.T) {
	ok := `[{"name": "a", "kind": "chat", "prompt": "x"}, {"name": "b", "kind": "completion", "prompt": "y", "note": "ignored"}]`
	ps, err := ParseCEPrompts([]byte(ok))
	if err != nil || len(ps) != 2 || ps[1] != (CEPrompt{"b", "completion", "y"}) {
		t.Fatalf("%+v %v", ps, err)
	}
	bad := map[string]string{
		`[]`: "empty",
		`{}`: "not a JSON list",
		`[{"name": "a", "kind": "chat", "prompt": "x"}, {"name": "a", "kind": "chat", "prompt": "z"}]`: `name "a" is already used`,
		`[{"name": "a", "kind": "text", "prompt": "x"}]`:                                               `kind must be chat or completion (got "text")`,
		`[{"name": "a", "prompt": "x"}]`:                                                               "kind must be chat or completion (got missing)",
		`[{"name": "", "kind": "chat", "prompt": "x"}]`:                                                "name must be a non-empty string",
		`[{"name": "a", "kind": "chat"}]`:                                                              "prompt must be a non-empty string",
		`[{"name": "a", "kind": "chat", "prompt": 5}]`:                                                 "want an object",
		`[null]`: "want an object",
		`[1]`:    "want an object",
	}
	for in, want := range bad {
		if _, err := ParseCEPrompts([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", in, err, want)
		}
	}
}

func TestCEValidation(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.json")
	os.WriteFile(file, []byte(`[{"name": "a", "kind": "poem", "prompt": "x"}]`), 0o644)
	_, err := New(context.Background(), mkParams(t, config.ConcurrentExactness, 0, map[string]any{"ce_prompts": file}))
	if err == nil || !strings.Contains(err.Error(), "--ce-prompts "+file+": item 0 (a): kind") {
		t.Fatalf("bad prompts file: %v", err)
	}
	_, err = New(context.Background(), mkParams(t, config.ConcurrentExactness, 0, map[string]any{"ce_levels": []int{}}))
	if err == nil || !strings.Contains(err.Error(), "--ce-levels") {
		t.Fatalf("no levels: %v", err)
	}
	_, err = New(context.Background(), mkParams(t, config.ConcurrentExactness, 0, map[string]any{"ce_reference_extra_body": "[1]"}))
	if err == nil || !strings.Contains(err.Error(), "--ce-reference-extra-body") {
		t.Fatalf("bad extra body: %v", err)
	}
}

// ceFakeEnv answers with an output fingerprint chosen by reply(req).
func ceFakeEnv(reply func(req *sender.Request) string) (Env, func() []*sender.Request) {
	var mu sync.Mutex
	var sent []*sender.Request
	env := Env{
		Send: func(ctx context.Context, req *sender.Request) (sender.Result, bool) {
			mu.Lock()
			sent = append(sent, req)
			mu.Unlock()
			n := 5
			h := reply(req)
			t0 := time.Unix(100, 0)
			ttft := 0.002
			return sender.Result{RequestID: req.ID, Phase: req.Phase, Successful: true, Complete: true,
				CompletionTokens: &n, Chunks: 3, OutputSHA256: &h, TTFT: &ttft,
				RoundGapsMs: []float64{4, 2},
				Submit:      t0, FirstToken: t0.Add(2 * time.Millisecond), Finish: t0.Add(12 * time.Millisecond)}, true
		},
		Phase: func(string, int, time.Duration) {}, Logf: func(string, ...any) {}, Now: time.Now,
	}
	return env, func() []*sender.Request { mu.Lock(); defer mu.Unlock(); return slices.Clone(sent) }
}

func TestCERunAgainstAlone(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.json")
	os.WriteFile(file, []byte(`[{"name": "c", "kind": "chat", "prompt": "hello"}, {"name": "k", "kind": "completion", "prompt": "def f():"}, {"name": "m", "kind": "chat", "prompt": "2+2"}]`), 0o644)
	p := mkParams(t, config.ConcurrentExactness, 0, map[string]any{
		"ce_prompts": file, "ce_levels": []int{1, 4}, "ce_alone": true, "ce_reference_extra_body": `{"draft": false}`, "ce_tokens": 5,
	})
	wl, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	env, sent := ceFakeEnv(func(req *sender.Request) string {
		// Prompt "m" answers differently under concurrency.
		text := req.Prompt
		if len(req.Messages) > 0 {
			text = req.Messages[0].Content
		}
		if text == "2+2" && strings.HasPrefix(req.ID, "level4") {
			return "other"
		}
		return "h-" + text
	})
	if err := wl.Run(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	reqs := sent()
	var ids []string
	for _, r := range reqs {
		ids = append(ids, r.ID+"/"+r.Phase)
		if r.MaxTokens != 5 || r.Temperature != 0 || r.Seed != nil {
			t.Fatalf("%s: max_tokens %d temperature %v seed %v", r.ID, r.MaxTokens, r.Temperature, r.Seed)
		}
		isExtra := strings.HasPrefix(r.ID, "extra_")
		if isExtra != (r.ExtraBody != nil) {
			t.Fatalf("%s: extra body %v", r.ID, r.ExtraBody)
		}
		if r.ID == "alone_p1" && (r.Endpoint != sender.Completions || r.Prompt != "def f():") {
			t.Fatalf("completion prompt sent as %+v", r)
		}
		if r.ID == "alone_p0" && (r.Endpoint != sender.Chat || r.Messages[0].Content != "hello") {
			t.Fatalf("chat prompt sent as %+v", r)
		}
	}
	slices.Sort(ids[7:])
	want := []string{"alone_p0/reference", "alone_p1/reference", "alone_p2/reference",
		"extra_p0/reference", "extra_p1/reference", "extra_p2/reference",
		"level1_rep0_req0/measured",
		"level4_rep0_req0/measured", "level4_rep0_req1/measured", "level4_rep0_req2/measured", "level4_rep0_req3/measured"}
	if !slices.Equal(ids, want) {
		t.Fatalf("ids\n%v\nwant\n%v", ids, want)
	}
	// Request 3 of level 4 sends prompt 3 mod 3 = 0.
	for _, r := range reqs {
		if r.ID == "level4_rep0_req3" && r.Messages[0].Content != "hello" {
			t.Fatalf("level4 req3 sent %+v", r.Messages)
		}
	}
	o := wl.Outcome()
	if !o.Failed {
		t.Fatal("a different reply must fail the run")
	}
	if !slices.Equal(o.Reasons, []string{"level 4: 1 differ from alone", "level 4: 1 differ from extra body"}) {
		t.Fatalf("reasons %q", o.Reasons)
	}
	cells := o.Block.(map[string]any)["cells"].([]ceCellFigures)
	c4 := cells[1]
	if c4.Requests != 4 || c4.Output[ceRefAlone] != (ceCounts{Equal: 3, Different: 1}) || c4.Tokens[ceRefAlone].Unverified != 4 {
		t.Fatalf("level 4 figures %+v", c4)
	}
	// Pooled ITL: per request gaps 4, 2 and 5-3 = 2 zeros (p50 of 16 samples,
	// half zeros, is 0); round gaps 4, 2.
	if *c4.ITLP50Ms != 0 || *c4.ITLP95Ms != 4 || *c4.RoundGapP50Ms != 2 || *c4.RoundGapP95Ms != 4 {
		t.Fatalf("pooled ITL %v/%v, round gaps %v/%v", *c4.ITLP50Ms, *c4.ITLP95Ms, *c4.RoundGapP50Ms, *c4.RoundGapP95Ms)
	}
	// 4 x 5 tokens over the 10 ms from first token to finish.
	if c4.AggDecodeTPS == nil || fmt.Sprintf("%.0f", *c4.AggDecodeTPS) != "2000" || *c4.TTFTMaxMs != 2 {
		t.Fatalf("decode %v ttft max %v", c4.AggDecodeTPS, c4.TTFTMaxMs)
	}
}

func TestCEFirstReplyReference(t *testing.T) {
	p := mkParams(t, config.ConcurrentExactness, 0, map[string]any{"ce_levels": []int{4, 2}, "ce_reps": 2, "ce_temperature": 0.7})
	wl, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	env, sent := ceFakeEnv(func(req *sender.Request) string { return "same" })
	wl.Run(context.Background(), env)
	if n := len(sent()); n != 12 {
		t.Fatalf("%d requests, want (4+2) x 2", n)
	}
	for _, r := range sent() {
		if r.Seed == nil || *r.Seed != 42 || r.Temperature != 0.7 {
			t.Fatalf("sampled request %s: seed %v temperature %v", r.ID, r.Seed, r.Temperature)
		}
	}
	o := wl.Outcome()
	if o.Failed {
		t.Fatalf("identical replies failed: %v", o.Reasons)
	}
	cells := o.Block.(map[string]any)["cells"].([]ceCellFigures)
	// The lowest level (2) holds the references of prompts 0 and 1; level 4
	// holds those of prompts 2 and 3. References are not compared.
	if cells[1].Level != 2 || cells[1].ReferenceReqs != 2 || cells[1].Output[ceRefFirst].Equal != 2 {
		t.Fatalf("level 2 %+v", cells[1])
	}
	if cells[0].ReferenceReqs != 2 || cells[0].Output[ceRefFirst].Equal != 6 {
		t.Fatalf("level 4 %+v", cells[0])
	}
}
