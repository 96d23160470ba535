package workload

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/kvbench/kvbench/bench/load"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/pyrandom"
)

func init() { Register(Kind{Name: config.RAGQAQuality, New: newRAGQAQuality}) }

// ragSystemPrompt opens every request: LMCache's wording, to the byte.
const ragSystemPrompt = "Answer the question using only the given passages. You may reason " +
	"through the problem, but put only the concise final answer between " +
	"<final_answer> and </final_answer>. Always emit both tags.\n\n" +
	"The following are the given passages.\n"

// ragQuestionLead and ragQuestionTail surround a measured request's
// question (LMCache's question template).
const (
	ragQuestionLead = "\n\nAnswer the question using only the passages above. End with exactly " +
		"one concise answer in this form: <final_answer>answer</final_answer>.\n\n" +
		"Question: "
	ragQuestionTail = "\nAnswer:"
)

// ragAlignTries bounds the re-draws of one block's padding.
const ragAlignTries = 8

// ragFillerWords is how many one-token filler words are learned
// (LMCache's filler vocabulary size).
const ragFillerWords = 4096

// RAGTemplateKwargs turns KEY=VALUE settings into chat_template_kwargs:
// true/false become booleans, integers numbers, anything else text.
func RAGTemplateKwargs(kvs []string) map[string]any {
	if len(kvs) == 0 {
		return nil
	}
	out := map[string]any{}
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		switch v = strings.TrimSpace(v); {
		case v == "true" || v == "false":
			out[k] = v == "true"
		default:
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				out[k] = n
			} else {
				out[k] = v
			}
		}
	}
	return out
}

// RAGQAQuality prefills every distinct passage alone, then asks each
// question over its passages stitched together at positions where they
// were never cached, and scores the answers by token F1.
type RAGQAQuality struct {
	opts        ragOptions
	p           Params
	dataset     string
	samples     []RAGSample
	maxOut      int
	align       int
	kwargs      map[string]any
	instruction string            // padded
	passages    map[string]string // raw -> padded
	order       []string          // distinct passages, first-appearance order
	offAlign    int               // blocks still off the alignment after the tries
	instrTokens int               // the padded instruction's tokens
	passTokens  map[string]int    // raw -> the padded passage's tokens
	warmDone    map[string]bool   // passages whose warmup succeeded
	hits        judge
	unjudged    int
	warm        tally
	measured    tally
	per         []record.RAGSample
	sum         record.RAGSummary
	output      string
	writeErr    error
}

func newRAGQAQuality(ctx context.Context, p Params) (Workload, error) {
	c := p.Config
	o := config.DecodeAs[ragOptions](c)
	w := &RAGQAQuality{
		opts:    o,
		p:       p,
		dataset: o.Dataset,
		maxOut:  o.MaxOutputLength,
		align:   o.DocAlignTokens,
		kwargs:  RAGTemplateKwargs(o.TemplateKwargs),
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	path, err := RAGDatasetPath(ctx, w.dataset)
	if err != nil {
		return nil, err
	}
	if w.samples, err = LoadRAGSamples(path, o.NumSamples); err != nil {
		return nil, err
	}
	tokenize := p.tokenizeFunc()
	if tokenize == nil {
		return nil, &UnavailableError{Err: fmt.Errorf("%s needs the engine's /tokenize, and no engine is known", config.RAGQAQuality)}
	}
	filler, err := p.vocabulary(ctx, ragFillerWords, p.Seed)
	if err != nil {
		return nil, err
	}
	base, err := tokenize(ctx, "")
	if err != nil {
		return nil, err
	}
	count := func(text string) (int, error) {
		ids, err := tokenize(ctx, text)
		return len(ids) - len(base), err
	}
	// pad is LMCache's padding: when text's tokens are not a multiple of
	// the alignment, a newline and that many filler words drawn from rng;
	// re-counted, and re-drawn with the count corrected, up to 8 times.
	// The chat template's own prefix is counted as 0 tokens.
	pad := func(text string, rng *pyrandom.Random) (string, int, error) {
		n, err := count(text)
		if err != nil {
			return "", 0, err
		}
		target := (n + w.align - 1) / w.align * w.align
		if target == n {
			return text, n, nil
		}
		need, padded := target-n, text
		for try := 0; try < ragAlignTries; try++ {
			words := make([]string, max(need, 0))
			for i := range words {
				words[i] = pyrandom.ChoiceOf(rng, filler.Words)
			}
			padded = text + "\n" + filler.Join(words)
			if n, err = count(padded); err != nil {
				return "", 0, err
			}
			if n == target {
				return padded, n, nil
			}
			need += target - n
		}
		w.offAlign++
		return padded, n, nil
	}
	if w.instruction, w.instrTokens, err = pad(ragSystemPrompt, pyrandom.New(p.Seed)); err != nil {
		return nil, err
	}
	w.passages, w.passTokens, w.warmDone = map[string]string{}, map[string]int{}, map[string]bool{}
	seen := map[string]bool{}
	for _, s := range w.samples {
		for _, raw := range s.Passages {
			if _, ok := w.passages[raw]; ok {
				continue
			}
			// Seeded from the text (random.Random(f"{seed}:{passage}")),
			// so a passage's padding does not depend on where it appears.
			rng := pyrandom.NewString(fmt.Sprintf("%d:%s", p.Seed, raw))
			if w.passages[raw], w.passTokens[raw], err = pad(raw, rng); err != nil {
				return nil, err
			}
			// Prefilled once per distinct padded block.
			if !seen[w.passages[raw]] {
				seen[w.passages[raw]] = true
				w.order = append(w.order, raw)
			}
		}
	}
	return w, nil
}

func (w *RAGQAQuality) Name() string { return config.RAGQAQuality }

func (w *RAGQAQuality) Describe() []string {
	lines := []string{
		fmt.Sprintf("rag-qa-quality: %d samples from %s, %d distinct passages aligned to %d tokens, max_tokens %d",
			len(w.samples), w.dataset, len(w.order), w.align, w.maxOut),
	}
	if w.offAlign > 0 {
		lines = append(lines, fmt.Sprintf("rag-qa-quality: warning: %d blocks are still off the %d-token alignment after %d adjustments", w.offAlign, w.align, ragAlignTries))
	}
	return lines
}

func (w *RAGQAQuality) request(id, phase, content string, maxTokens int) *sender.Request {
	r := &sender.Request{
		ID: id, Phase: phase, Endpoint: sender.Chat,
		Messages:  []sender.Message{{Role: "user", Content: content}},
		MaxTokens: maxTokens, KeepText: phase == sender.PhaseMeasured,
	}
	if w.kwargs != nil {
		r.ExtraBody = map[string]any{"chat_template_kwargs": w.kwargs}
	}
	setPrompt(r)
	return r
}

// Prompt is a sample's measured prompt, laid out as LMCache lays it out:
// the padded system block, the padded passages in dataset order (each
// straight after the one before), then the question.
func (w *RAGQAQuality) Prompt(s RAGSample) string {
	var b strings.Builder
	b.WriteString(w.instruction)
	for _, raw := range s.Passages {
		b.WriteString(w.passages[raw])
	}
	b.WriteString(ragQuestionLead)
	b.WriteString(s.Question)
	b.WriteString(ragQuestionTail)
	return b.String()
}

func (w *RAGQAQuality) Run(ctx context.Context, env Env) error {
	if w.p.Warmup() {
		warm := make([]*sender.Request, len(w.order))
		for i, raw := range w.order {
			warm[i] = w.request(fmt.Sprintf("prefill_doc%d", i), sender.PhaseWarmup, w.instruction+w.passages[raw], 1)
		}
		env.Phase("warmup", len(warm), 0)
		runSequential(ctx, env, warm, func(r sender.Result) {
			w.warm.add(&r)
			var i int
			if _, err := fmt.Sscanf(r.RequestID, "prefill_doc%d", &i); err == nil && r.Successful && i < len(w.order) {
				w.warmDone[w.order[i]] = true
			}
		})
		if ctx.Err() != nil {
			return nil
		}
	}
	env.Phase("measuring", len(w.samples), 0)
	for i, s := range w.samples {
		if ctx.Err() != nil {
			break
		}
		req := w.request(fmt.Sprintf("sample%d", i), sender.PhaseMeasured, w.Prompt(s), w.maxOut)
		golds := s.Answers
		if golds == nil {
			golds = []string{}
		}
		res, ok := env.Send(ctx, req)
		if !ok {
			break
		}
		w.measured.add(&res)
		w.judge(s, &res, i)
		ps := record.RAGSample{SampleID: s.ID, TTFT: res.TTFT, NumOutputTokens: res.CompletionTokens,
			CacheState: res.CacheState, CachedTokens: res.CachedTokens, RequestID: req.ID, GoldAnswers: golds}
		if ans, parsed := RAGFinalAnswer(res.Text); parsed && res.Successful {
			f1 := RAGBestF1(ans, s.Answers)
			ps.Parsed, ps.Answer, ps.F1 = true, &ans, &f1
		}
		w.per = append(w.per, ps)
	}
	w.sum = record.RAGSummary{NumSamples: len(w.per)}
	f1Sum := 0.0
	for _, ps := range w.per {
		if ps.Parsed {
			w.sum.NumParsed++
			f1Sum += *ps.F1
		}
	}
	if w.sum.NumSamples > 0 {
		x := float64(w.sum.NumParsed) / float64(w.sum.NumSamples)
		w.sum.ParseRate = &x
	}
	if w.sum.NumParsed > 0 {
		x := f1Sum / float64(w.sum.NumParsed)
		w.sum.F1Mean = &x
	}
	w.output = w.opts.Output
	if w.output == "" && env.RunDir != "" {
		w.output = filepath.Join(env.RunDir, record.RAGQualityFile)
	}
	if w.output != "" {
		w.writeErr = w.write(w.output)
		if w.writeErr != nil {
			env.Logf("rag-qa-quality: cannot write %s: %v", w.output, w.writeErr)
		}
	}
	return nil
}

// fingerprint is 16 hex digits of a SHA-256 over the settings that
// define the run, so two runs of the same questions can be paired.
func (w *RAGQAQuality) fingerprint() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00%d\x00%q\x00%s\x00%d", w.dataset, w.opts.NumSamples, w.maxOut, w.align,
		w.opts.TemplateKwargs, w.p.Settings.Model, w.p.Seed)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func (w *RAGQAQuality) write(path string) error {
	per := w.per
	if per == nil {
		per = []record.RAGSample{}
	}
	doc := map[string]any{
		"run_fingerprint": w.fingerprint(),
		"config": map[string]any{
			"dataset": w.dataset, "num_samples": w.opts.NumSamples, "max_output_length": w.maxOut,
			"doc_align_tokens": w.align, "template_kwargs": w.opts.TemplateKwargs, "seed": w.p.Seed,
		},
		"model":      w.p.Settings.Model,
		"summary":    w.sum,
		"per_sample": per,
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// judge judges measured sample i: after the warmup it reuses at least
// the instruction block and its first passage, which the warmup
// prefilled alone in that position; without a warmup, every question
// after the first reuses the instruction block.
func (w *RAGQAQuality) judge(s RAGSample, r *sender.Result, i int) {
	switch {
	case w.p.Warmup() && len(s.Passages) > 0 && w.warmDone[s.Passages[0]]:
		w.hits.add(r, reuses(w.instrTokens+w.passTokens[s.Passages[0]]))
	case !w.p.Warmup() && i > 0:
		w.hits.add(r, reuses(w.instrTokens))
	default:
		w.unjudged++
	}
}

// expectation: what a prefix cache must reuse (the instruction block and
// the first passage after the warmup); a blending cache also reuses the
// later passages, stitched where they were never cached, and whether that
// changes the answers is what comparing two runs' F1 shows.
func (w *RAGQAQuality) expectation() *record.Expectation {
	set := w.instrTokens
	for _, n := range w.passTokens {
		set += n
	}
	what := "reused the instruction block and their first passage"
	if !w.p.Warmup() {
		what = "reused the instruction block"
	}
	reason := "questions: " + w.hits.count(what, " (a hit caches at least half of it)")
	if w.unjudged > 0 {
		reason += fmt.Sprintf("; %d not judged (first question without a warmup, no passage, or its passage's warmup failed)", w.unjudged)
	}
	reason += "; hit ratio " + report.PercentText(w.measured.HitRatio) + interrupted(w.sum.NumSamples, len(w.samples))
	expected := fmt.Sprintf("every question reuses the instruction block (%s tokens) and its first passage, prefilled alone in the warmup; a blending cache also its later passages", group(w.instrTokens))
	if !w.p.Warmup() {
		expected = fmt.Sprintf("every question after the first reuses the instruction block (%s tokens; no warmup)", group(w.instrTokens))
	}
	if b := w.p.budget(); b.Tokens > 0 && set > b.Tokens {
		return expect(fmt.Sprintf("some questions miss their first passage: the instruction and %d passages (%s) exceed %s", len(w.order), tokens(set), b.text()),
			w.hits.someMiss(), reason)
	}
	return expect(expected, w.hits.verdict(), reason)
}

func (w *RAGQAQuality) Outcome() Outcome {
	block := map[string]any{
		"dataset":           w.dataset,
		"distinct_passages": len(w.order),
		"doc_align_tokens":  w.align,
		"off_alignment":     w.offAlign,
		"num_samples":       w.sum.NumSamples,
		"num_parsed":        w.sum.NumParsed,
		"parse_rate":        w.sum.ParseRate,
		"f1_mean":           w.sum.F1Mean,
		"run_fingerprint":   w.fingerprint(),
		"output":            w.output,
		"observed":          &w.measured,
		"warmup":            &w.warm,
		"expectation":       w.expectation(),
	}
	rows := []report.Row{
		{Label: "Dataset", Value: filepath.Base(w.dataset)},
		{Label: "Samples (parsed)", Value: fmt.Sprintf("%d (%d)", w.sum.NumSamples, w.sum.NumParsed)},
		{Label: "Parse rate (%)", Value: report.Percent(w.sum.ParseRate)},
		{Label: "Mean F1 (parsed)", Value: report.OptFloat(w.sum.F1Mean)},
		{Label: "Distinct passages prefilled", Value: report.Int(len(w.order))},
	}
	rows = append(rows, w.measured.rows("Measured ")...)
	o := Outcome{Block: block, Sections: []report.Section{{Title: "Answer Quality", Rows: rows}}}
	if w.writeErr != nil {
		o.Failed, o.Reasons = true, []string{fmt.Sprintf("cannot write %s: %v", w.output, w.writeErr)}
	}
	return o
}

// PlanStreams: one request at a time, the prefills and then the samples
// (each sample is judged against its prefill, never beside another).
func (w *RAGQAQuality) PlanStreams(load.Settings) StreamPlan {
	return oneAtATime
}

// ragOptions are its settings (its rows in config), decoded once.
type ragOptions struct {
	Dataset         string   `setting:"rag_dataset"`
	NumSamples      int      `setting:"rag_num_samples"`
	MaxOutputLength int      `setting:"rag_max_output_length"`
	DocAlignTokens  int      `setting:"rag_doc_align_tokens"`
	TemplateKwargs  []string `setting:"rag_template_kwargs"`
	Output          string   `setting:"rag_output"`
}
