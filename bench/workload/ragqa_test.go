package workload

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
)

func TestRAGFinalAnswer(t *testing.T) {
	for reply, want := range map[string]struct {
		answer string
		ok     bool
	}{
		"<final_answer>Paris</final_answer>":                                               {"Paris", true},
		"think <final_answer>Rome</final_answer> no, <final_answer> Paris </final_answer>": {"Paris", true},
		"<final_answer>Rome</final_answer> then <final_answer>Par":                         {"", false}, // unterminated last region
		"Paris": {"", false},
	} {
		a, ok := RAGFinalAnswer(reply)
		if a != want.answer || ok != want.ok {
			t.Errorf("RAGFinalAnswer(%q) = %q, %v; want %q, %v", reply, a, ok, want.answer, want.ok)
		}
	}
}

func TestRAGNormalizeAndF1(t *testing.T) {
	if got := RAGNormalize("  The  Eiffel-Tower, in PARIS!  "); got != "eiffeltower in paris" {
		t.Errorf("normalise = %q", got)
	}
	if got := RAGNormalize("A cat and an owl"); got != "cat and owl" {
		t.Errorf("articles: %q", got)
	}
	cases := []struct {
		pred, gold string
		want       float64
	}{
		{"Paris", "paris", 1},
		{"the Seine", "Seine", 1},
		{"Paris France", "Paris", 2 * 0.5 * 1 / 1.5},
		{"New York City", "New York", 2 * (2.0 / 3) * 1 / (2.0/3 + 1)},
		{"Berlin", "Paris", 0},
		{"", "", 1},
		{"", "Paris", 0},
	}
	for _, c := range cases {
		if got := RAGTokenF1(c.pred, c.gold); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("F1(%q, %q) = %v, want %v", c.pred, c.gold, got, c.want)
		}
	}
	if got := RAGBestF1("Roma", []string{"Rome", "Roma"}); got != 1 {
		t.Errorf("best of golds = %v", got)
	}
}

func TestRAGTemplateKwargs(t *testing.T) {
	got := RAGTemplateKwargs([]string{"enable_thinking=false", "depth=3", "style=brief", "on=true"})
	want := map[string]any{"enable_thinking": false, "depth": int64(3), "style": "brief", "on": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("kwargs %#v, want %#v", got, want)
	}
}

func TestLoadRAGSamples(t *testing.T) {
	got, err := LoadRAGSamples("testdata/rag_musique.jsonl", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d samples, want 3 (the record without a question is skipped)", len(got))
	}
	if s := got[0]; s.ID != "2hop_1" || len(s.Passages) != 2 || s.Passages[0] != "Paris\nParis is the capital of France." ||
		!reflect.DeepEqual(s.Answers, []string{"Paris", "City of Light"}) {
		t.Errorf("sample 0 %+v", s)
	}
	// A passage whose text is blank is kept as its title, as LMCache keeps it.
	if s := got[1]; len(s.Passages) != 2 || s.Passages[1] != "Empty\n" {
		t.Errorf("the blank passage is not kept as LMCache keeps it: %q", s.Passages)
	}
	if s := got[2]; s.ID != "3hop_3" || s.Question != "Capital of Italy?" || !reflect.DeepEqual(s.Answers, []string{"Rome", "Roma"}) {
		t.Errorf("ctxs/query/answers/_id shape: %+v", s)
	}
	first, _ := LoadRAGSamples("testdata/rag_musique.jsonl", 1)
	if len(first) != 1 || first[0].ID != "2hop_1" {
		t.Errorf("--rag-num-samples 1: %+v", first)
	}

	hp, err := LoadRAGSamples("testdata/rag_hotpot.json", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hp) != 2 || hp[0].Passages[0] != "Seine\nThe Seine is a river. It flows through Paris." ||
		hp[1].ID != "hp2" || hp[1].Passages[0] != "Hamlet\nHamlet is a tragedy by William Shakespeare." {
		t.Errorf("hotpot shapes %+v", hp)
	}

	// Parquet, in HotpotQA's column layout.
	type row struct {
		ID       string `parquet:"id"`
		Question string `parquet:"question"`
		Answer   string `parquet:"answer"`
		Context  struct {
			Title     []string   `parquet:"title,list"`
			Sentences [][]string `parquet:"sentences,list"`
		} `parquet:"context"`
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf)
	r := row{ID: "pq1", Question: "Who wrote Hamlet?", Answer: "Shakespeare"}
	r.Context.Title = []string{"Hamlet"}
	r.Context.Sentences = [][]string{{"Hamlet is a tragedy", " by Shakespeare."}}
	if _, err := w.Write([]row{r, {ID: "pq2", Question: "no passages", Answer: "x"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "d.parquet")
	os.WriteFile(p, buf.Bytes(), 0o644)
	pq, err := LoadRAGSamples(p, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(pq) != 1 || pq[0].ID != "pq1" || pq[0].Passages[0] != "Hamlet\nHamlet is a tragedy by Shakespeare." || pq[0].Answers[0] != "Shakespeare" {
		t.Errorf("parquet samples %+v", pq)
	}

	bad := filepath.Join(t.TempDir(), "none.jsonl")
	os.WriteFile(bad, []byte(`{"question": "q"}`+"\n"), 0o644)
	if _, err := LoadRAGSamples(bad, 5); err == nil || !strings.Contains(err.Error(), "no usable record") {
		t.Errorf("no usable record: %v", err)
	}
}

// TestRAGRun: passages are prefilled alone once each, aligned to the
// block size, the measured prompts stitch them in dataset order, and the
// answers are scored into rag_qa_quality.json.
func TestRAGRun(t *testing.T) {
	p := mkParams(t, config.RAGQAQuality, 0, map[string]any{
		"rag_dataset": "testdata/rag_musique.jsonl", "rag_doc_align_tokens": 16,
		"rag_template_kwargs": []string{"enable_thinking=false"},
	})
	p.Tokenize = fakeTokenize
	wl, err := New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	w := wl.(*RAGQAQuality)
	// Every padded block is a multiple of 16 tokens on the engine's tokenizer.
	for _, b := range append([]string{w.instruction}, w.passages["Paris\nParis is the capital of France."], w.passages["Rome\nRome is the capital of Italy."]) {
		ids, _ := fakeTokenize(context.Background(), b)
		if (len(ids)-1)%16 != 0 {
			t.Errorf("block of %d tokens is not aligned:\n%s", len(ids)-1, b)
		}
	}
	replies := map[string]string{
		"What is the capital of France?":  "Let me see. <final_answer>Paris</final_answer>",
		"What is the capital of Germany?": "<final_answer>Munich</final_answer>",
		"Capital of Italy?":               "I do not know",
	}
	env, sent := sendAll()
	inner := env.Send
	env.Send = func(ctx context.Context, req *sender.Request) (sender.Result, bool) {
		res, ok := inner(ctx, req)
		for q, a := range replies {
			if strings.Contains(req.Messages[0].Content, "Question: "+q+"\nAnswer:") {
				res.Text = a
			}
		}
		return res, ok
	}
	env.RunDir = t.TempDir()
	if err := w.Run(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	reqs := sent()
	// Paris, Berlin, the blank-bodied Empty (kept, as LMCache keeps it)
	// and Rome, then the three questions.
	if len(reqs) != 4+3 || reqs[0].ID != "prefill_doc0" || reqs[4].ID != "sample0" {
		t.Fatalf("%d requests (%s ...), want 4 distinct passages then 3 samples", len(reqs), reqs[0].ID)
	}
	if reqs[0].MaxTokens != 1 || reqs[4].Temperature != 0 || reqs[4].MaxTokens != 1024 {
		t.Errorf("warmup max_tokens %d, sample max_tokens %d", reqs[0].MaxTokens, reqs[4].MaxTokens)
	}
	if kw := reqs[4].ExtraBody["chat_template_kwargs"].(map[string]any); kw["enable_thinking"] != false {
		t.Errorf("chat_template_kwargs %v", reqs[4].ExtraBody)
	}
	// LMCache's layout: a prefill is the system block then the passage;
	// a question is the system block, its passages back to back, then
	// the question template, each passage byte-identical to its prefill.
	paris, berlin := w.passages["Paris\nParis is the capital of France."], w.passages["Berlin\nBerlin is the capital of Germany."]
	if !strings.HasPrefix(w.instruction, ragSystemPrompt) || reqs[0].Messages[0].Content != w.instruction+paris {
		t.Errorf("prefill_doc0 %q, want the system block then the Paris passage", reqs[0].Messages[0].Content)
	}
	want := w.instruction + paris + berlin + "\n\nAnswer the question using only the passages above. End with exactly one concise answer in this form: <final_answer>answer</final_answer>.\n\nQuestion: What is the capital of France?\nAnswer:"
	if got := reqs[4].Messages[0].Content; got != want {
		t.Errorf("sample0\n%q\nwant\n%q", got, want)
	}
	if !strings.HasPrefix(paris, "Paris\nParis is the capital of France.\n ") || w.passages["Empty\n"] == "" {
		t.Errorf("padded passages %q / %q: want the text, a newline, then filler words after a space", paris, w.passages["Empty\n"])
	}
	data, err := os.ReadFile(filepath.Join(env.RunDir, "rag_qa_quality.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Fingerprint string            `json:"run_fingerprint"`
		Summary     record.RAGSummary `json:"summary"`
		PerSample   []struct {
			SampleID    string   `json:"sample_id"`
			F1          *float64 `json:"f1"`
			Parsed      bool     `json:"parsed"`
			RequestID   string   `json:"request_id"`
			GoldAnswers []string `json:"gold_answers"`
		} `json:"per_sample"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Fingerprint) != 16 || doc.Summary.NumSamples != 3 || doc.Summary.NumParsed != 2 ||
		*doc.Summary.ParseRate != 2.0/3 || *doc.Summary.F1Mean != 0.5 {
		t.Fatalf("quality file %s", data)
	}
	if doc.PerSample[0].SampleID != "2hop_1" || *doc.PerSample[0].F1 != 1 || doc.PerSample[2].Parsed || doc.PerSample[2].F1 != nil {
		t.Errorf("per_sample %+v", doc.PerSample)
	}
	// Each sample names its request and the answers it was scored against.
	for i, want := range [][]string{{"Paris", "City of Light"}, {"Berlin"}, {"Rome", "Roma"}} {
		ps := doc.PerSample[i]
		if ps.RequestID != fmt.Sprintf("sample%d", i) || strings.Join(ps.GoldAnswers, "|") != strings.Join(want, "|") {
			t.Errorf("per_sample[%d]: request %q, gold %q; want sample%d, %q", i, ps.RequestID, ps.GoldAnswers, i, want)
		}
	}
	block := w.Outcome().Block.(map[string]any)
	if block["num_parsed"] != 2 || *block["f1_mean"].(*float64) != 0.5 {
		t.Errorf("workload block %v", block)
	}
}
