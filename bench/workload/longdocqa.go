package workload

import (
	"context"
	"fmt"
	"math"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/pyrandom"
)

func init() {
	Register(Kind{Name: config.LongDocQA, New: newLongDocQA, Rebuildable: true,
		Estimate: estimateLongDocQA, WorkingSet: (*LongDocQA)(nil)})
}

var ldqaQuestions = [4]string{
	"What is this document about?",
	"Summarize the key points.",
	"What is the main topic discussed?",
	"Provide a brief overview.",
}

// ldqaItem is one measured question: document d, question q.
type ldqaItem struct{ Doc, Query int }

// LongDocQA asks repeated questions over long documents: after the
// warmup every question should reuse its document's prefix.
type LongDocQA struct {
	p            Params
	docLen       int
	queries      int
	numDocs      int
	shuffle      string
	inflight     int
	maxOut       int
	schedule     []ldqaItem
	warm, firstQ tally
	measured     tally
	laterQ       tally
	// docDone is when a request on document d first finished (its warmup
	// or a question): questions sent after it are judged on reuse.
	docDone  map[int]float64
	hits     judge
	unjudged int // questions sent before any request on their document finished
}

func newLongDocQA(ctx context.Context, p Params) (Workload, error) {
	c := p.Config
	o := config.DecodeAs[ldqaOptions](c)
	w := &LongDocQA{
		p:        p,
		docLen:   o.DocumentLength,
		queries:  o.QueryPerDocument,
		shuffle:  o.ShufflePolicy,
		inflight: o.NumInflightRequests,
		maxOut:   o.MaxOutputLength,
	}
	if p.TokensPerGB <= 0 {
		return nil, fmt.Errorf("--tokens-per-gb-kvcache must be > 0 for %s (or give --lmcache-url)", config.LongDocQA)
	}
	w.numDocs = LongDocQADocuments(p.Settings.KVCacheGB, p.TokensPerGB, w.docLen)
	w.docDone = map[int]float64{}
	w.schedule = LongDocQASchedule(w.numDocs, w.queries, w.shuffle, p.Seed)
	if sh := p.shard(); sh.Sharded() {
		// A shard owns whole documents: a document's warmup and every
		// question on it, in the whole run's order.
		if w.numDocs < sh.Count {
			return nil, fmt.Errorf("--shard %s: %s has %d document(s), fewer than the %d shards; use fewer shards or a larger --kv-cache-volume", sh, config.LongDocQA, w.numDocs, sh.Count)
		}
		owned := w.schedule[:0:0]
		for _, it := range w.schedule {
			if sh.Owns(it.Doc) {
				owned = append(owned, it)
			}
		}
		w.schedule = owned
	}
	return w, nil
}

// LongDocQADocuments is max(1, int(volume * tokens_per_gb / length)).
func LongDocQADocuments(volumeGB float64, tokensPerGB, docLen int) int {
	return atLeast1(volumeGB * float64(tokensPerGB) / float64(docLen))
}

// LongDocQASchedule is the query-major order (for q, for d), shuffled
// under the "random" policy as LMCache shuffles it:
// random.Random(seed).shuffle.
func LongDocQASchedule(docs, queries int, policy string, seed int64) []ldqaItem {
	out := make([]ldqaItem, 0, docs*queries)
	for q := 0; q < queries; q++ {
		for d := 0; d < docs; d++ {
			out = append(out, ldqaItem{Doc: d, Query: q})
		}
	}
	if policy == "random" {
		pyrandom.ShuffleSlice(pyrandom.New(seed), out)
	}
	return out
}

// LongDocQADocument is `Document d: ` then max(L-10, 1) words "hi".
func LongDocQADocument(d, length int) string {
	return fmt.Sprintf("Document %d: ", d) + repeatWord(wordHi, max(length-10, 1))
}

// LongDocQAQuestion is the measured message of document d, question q.
func LongDocQAQuestion(doc string, q int) string {
	return doc + "\n\n" + fmt.Sprintf("Question %d: %s", q, ldqaQuestions[q%4])
}

func (w *LongDocQA) Name() string { return config.LongDocQA }

func (w *LongDocQA) Describe() []string {
	lines := []string{
		fmt.Sprintf("long-doc-qa: %d documents of %d tokens, %d questions each (%d measured requests), %s order, %d in flight",
			w.numDocs, w.docLen, w.queries, w.numDocs*w.queries, w.shuffle, w.inflight),
	}
	if sh := w.p.shard(); sh.Sharded() {
		lines = append(lines, fmt.Sprintf("shard %s: the documents d with d mod %d = %d, %d measured requests", sh, sh.Count, sh.Index, len(w.schedule)))
	}
	return lines
}

func (w *LongDocQA) Run(ctx context.Context, env Env) error {
	sh := w.p.shard()
	docs := make([]string, w.numDocs)
	var warm []*sender.Request
	for d := range docs {
		if !sh.Owns(d) {
			continue
		}
		docs[d] = LongDocQADocument(d, w.docLen)
		req := &sender.Request{
			ID: fmt.Sprintf("warmup_doc%d", d), Phase: sender.PhaseWarmup, Endpoint: w.p.Endpoint,
			Messages: []sender.Message{{Role: "user", Content: docs[d]}}, MaxTokens: 1,
		}
		setPrompt(req)
		warm = append(warm, req)
	}
	if w.p.Warmup() {
		env.Phase("warmup", len(warm), 0)
		runSequential(ctx, env, warm, func(r sender.Result) { w.Observe(&r) })
	}
	if ctx.Err() != nil {
		return nil
	}
	reqs := make([]*sender.Request, len(w.schedule))
	for i, it := range w.schedule {
		reqs[i] = &sender.Request{
			ID: fmt.Sprintf("doc%d_q%d", it.Doc, it.Query), Phase: sender.PhaseMeasured, Endpoint: w.p.Endpoint,
			Messages:  []sender.Message{{Role: "user", Content: LongDocQAQuestion(docs[it.Doc], it.Query)}},
			MaxTokens: w.maxOut,
		}
		setPrompt(reqs[i])
	}
	env.Phase("measuring", len(reqs), 0)
	runBounded(ctx, env, reqs, w.inflight, func(r sender.Result) { w.Observe(&r) })
	return nil
}

// ShardOf: a document's warmup (warmup_doc{d}) and its questions
// (doc{d}_q{q}) are sent by the shard d mod count.
func (w *LongDocQA) ShardOf(id string, count int) (int, bool) {
	n, ok := idNumbers(id, "warmup_doc")
	if !ok {
		if n, ok = idNumbers(id, "doc", "_q"); !ok || n[1] >= w.queries {
			return 0, false
		}
	}
	if n[0] >= w.numDocs {
		return 0, false
	}
	return n[0] % count, true
}

// Observe adds one finished request to the outcome: warmups to the
// warmup tally, questions to the measured one and, by the question
// number in their id (doc{d}_q{q}), to the first or later questions.
func (w *LongDocQA) Observe(r *sender.Result) {
	var d, q int
	if r.Phase == sender.PhaseWarmup {
		w.warm.add(r)
		if _, err := fmt.Sscanf(r.RequestID, "warmup_doc%d", &d); err == nil {
			w.prefilled(d, r)
		}
		return
	}
	w.measured.add(r)
	_, err := fmt.Sscanf(r.RequestID, "doc%d_q%d", &d, &q)
	if err == nil && q == 0 {
		w.firstQ.add(r)
	} else {
		w.laterQ.add(r)
	}
	if err != nil {
		return
	}
	// Requests are observed in the order they finish (or, merged, were
	// submitted), so any request on d that finished before r was sent
	// has been seen.
	if t, ok := w.docDone[d]; ok && t <= r.SubmitTime {
		w.hits.add(r, reuses(w.docLen))
	} else {
		w.unjudged++
	}
	w.prefilled(d, r)
}

// prefilled notes that a successful request put document d in the cache.
func (w *LongDocQA) prefilled(d int, r *sender.Result) {
	if !r.Successful {
		return
	}
	if t, ok := w.docDone[d]; !ok || r.FinishTime < t {
		w.docDone[d] = r.FinishTime
	}
}

// expectation: every question sent once its document was prefilled (by
// its warmup, or by an earlier question that had finished) reuses it,
// when the documents fit the cache; when they do not (one document
// larger than the budget, or a budget over the built-in engine's real
// cache), LRU evicts documents and some questions miss.
func (w *LongDocQA) expectation() *record.Expectation {
	b := w.p.budget()
	set := w.numDocs * w.docLen
	docs := fmt.Sprintf("the %d documents (%s)", w.numDocs, tokens(set))
	reason := "questions: " + w.hits.count("reused their document", fmt.Sprintf(" (a hit caches at least half of its %s tokens)", group(w.docLen)))
	if w.unjudged > 0 {
		reason += fmt.Sprintf("; %d sent before a request on their document had finished (not judged)", w.unjudged)
	}
	reason += interrupted(w.measured.Requests, len(w.schedule))
	if b.Tokens > 0 && set > b.Tokens {
		return expect(fmt.Sprintf("some questions miss their document: %s exceed %s, so LRU evicts documents before their questions come",
			docs, b.text()), w.hits.someMiss(), reason)
	}
	first := "warmed up beforehand"
	if !w.p.Warmup() {
		first = "no warmup: a document's first question prefills it"
	}
	fits := ""
	if b.Tokens > 0 {
		fits = fmt.Sprintf("; %s fit %s", docs, b.text())
	}
	return expect(fmt.Sprintf("every question reuses its document (%s)%s", first, fits), w.hits.verdict(), reason)
}

func (w *LongDocQA) Outcome() Outcome {
	block := map[string]any{
		"num_documents":          w.numDocs,
		"document_length":        w.docLen,
		"measured":               len(w.schedule),
		"expectation":            w.expectation(),
		"observed":               &w.measured,
		"first_question":         &w.firstQ,
		"later_questions":        &w.laterQ,
		"warmup":                 &w.warm,
		"target_prompt_tokens":   w.docLen,
		"observed_prompt_tokens": w.measured.meanPrompt(),
	}
	rows := []report.Row{
		{Label: "Documents", Value: report.Int(w.numDocs)},
		{Label: "Target / observed prompt tokens", Value: fmt.Sprintf("%d / %s", w.docLen, report.Tokens(w.measured.meanPrompt()))},
	}
	rows = append(rows, w.measured.rows("Observed ")...)
	// The warmup sends each document once, cold on a fresh engine: its
	// TTFT is what the reuse saves.
	rows = append(rows,
		report.Row{Label: "Warmup cold / reused", Value: fmt.Sprintf("%d / %d", w.warm.Cold, w.warm.Reused)},
		report.Row{Label: "Warmup mean TTFT (ms)", Value: report.OptFloat(w.warm.MeanTTFTms)},
		report.Row{Label: "Warmup TTFT / measured TTFT", Value: report.OptFloat(ratio(w.warm.MeanTTFTms, w.measured.MeanTTFTms))},
	)
	block["warmup_over_measured_ttft"] = ratio(w.warm.MeanTTFTms, w.measured.MeanTTFTms)
	return Outcome{Block: block, Sections: []report.Section{{Title: "Long Doc QA", Rows: rows}}}
}

// ratio is a/b, nil when either is unknown or b is 0.
func ratio(a, b *float64) *float64 {
	if a == nil || b == nil || *b == 0 {
		return nil
	}
	r := *a / *b
	return &r
}

// PlanWarnings checks a document and its question against the engine's
// context.
func (w *LongDocQA) PlanWarnings(_ context.Context, pc PlanCheck) []string {
	longest := w.docLen + 2*templatePerMessage + templatePerRequest + pc.SaltTokens + 64 // a question
	if msg := contextWarning("long-doc-qa", longest, "documents with their questions", pc.ContextLength); msg != "" {
		return []string{msg}
	}
	return nil
}

// PlanStreams: the in-flight setting (the warmup goes one at a time).
func (w *LongDocQA) PlanStreams(ls load.Settings) StreamPlan {
	return measuredStreams(ls, min(w.inflight, len(w.schedule)), "--ldqa-num-inflight-requests", expectedLatency(w.docLen+64, w.maxOut))
}

// SizeWorkingSet: documents = size / document length (--kv-cache-volume
// set to match); a question reuses its document.
func (*LongDocQA) SizeWorkingSet(c *config.Config, tokens float64, tokensPerGB int) (WorkingSet, error) {
	o := config.DecodeAs[ldqaOptions](c)
	doc := o.DocumentLength
	n, err := units(config.LongDocQA, tokens, doc, "document")
	if err != nil {
		return WorkingSet{}, err
	}
	if tokensPerGB <= 0 {
		return WorkingSet{}, fmt.Errorf("--tokens-per-gb-kvcache must be > 0 for %s (or give --lmcache-url)", config.LongDocQA)
	}
	if err := c.SetKVCacheGB(volumeFor(n, doc, tokensPerGB)); err != nil {
		return WorkingSet{}, err
	}
	return WorkingSet{Tokens: n * doc, Count: n, Unit: doc, What: "documents", Reusable: doc}, nil
}

// estimateLongDocQA sizes its plan from its settings.
func estimateLongDocQA(c *config.Config, tokensPerGB int) Plan {
	o := config.DecodeAs[ldqaOptions](c)
	l := float64(o.DocumentLength)
	docs := math.Max(1, math.Floor(budgetTokens(c, tokensPerGB)/l))
	reqs := docs * float64(o.QueryPerDocument)
	return Plan{Requests: docs + reqs, Tokens: (docs + reqs) * l,
		Flags: []string{"--kv-cache-volume", "--tokens-per-gb-kvcache", "--ldqa-document-length", "--ldqa-query-per-document"}}
}

// ldqaOptions are its settings (its rows in config), decoded once.
type ldqaOptions struct {
	DocumentLength      int    `setting:"ldqa_document_length"`
	QueryPerDocument    int    `setting:"ldqa_query_per_document"`
	ShufflePolicy       string `setting:"ldqa_shuffle_policy"`
	NumInflightRequests int    `setting:"ldqa_num_inflight_requests"`
	MaxOutputLength     int    `setting:"ldqa_max_output_length"`
}
