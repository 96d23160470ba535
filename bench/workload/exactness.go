package workload

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/stats"
	"github.com/kvbench/kvbench/config"
)

func init() { Register(Kind{Name: config.ConcurrentExactness, New: newConcurrentExactness}) }

// cePromptsJSON is the built-in set: 16 public prompts written for
// kvbench (code completions, chat code, arithmetic, prose).
//
//go:embed prompts.json
var cePromptsJSON []byte

// CEPrompt is one prompt of concurrent-exactness.
type CEPrompt struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"` // chat or completion
	Prompt string `json:"prompt"`
}

// CEBuiltinPrompts returns the built-in prompts.
func CEBuiltinPrompts() []CEPrompt {
	ps, err := ParseCEPrompts(cePromptsJSON)
	if err != nil {
		panic("concurrent-exactness: built-in prompts: " + err.Error())
	}
	return ps
}

// ParseCEPrompts reads a JSON list of {name, kind, prompt}: non-empty,
// names unique and non-empty, kind chat or completion, prompt a non-empty
// string. Other members are ignored.
func ParseCEPrompts(data []byte) ([]CEPrompt, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw []json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a JSON list of prompts: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not a JSON list of prompts: data after the list")
	}
	if len(raw) == 0 {
		return nil, errors.New("the list of prompts is empty")
	}
	out := make([]CEPrompt, len(raw))
	names := map[string]int{}
	for i, item := range raw {
		var f struct{ Name, Kind, Prompt *string }
		if err := json.Unmarshal(item, &f); err != nil || bytes.HasPrefix(bytes.TrimSpace(item), []byte("null")) {
			return nil, fmt.Errorf("item %d: want an object {name, kind, prompt} of strings", i)
		}
		switch {
		case f.Name == nil || *f.Name == "":
			return nil, fmt.Errorf("item %d: name must be a non-empty string", i)
		case f.Kind == nil || (*f.Kind != "chat" && *f.Kind != "completion"):
			got := "missing"
			if f.Kind != nil {
				got = fmt.Sprintf("%q", *f.Kind)
			}
			return nil, fmt.Errorf("item %d (%s): kind must be chat or completion (got %s)", i, *f.Name, got)
		case f.Prompt == nil || *f.Prompt == "":
			return nil, fmt.Errorf("item %d (%s): prompt must be a non-empty string", i, *f.Name)
		}
		if j, dup := names[*f.Name]; dup {
			return nil, fmt.Errorf("item %d: name %q is already used by item %d", i, *f.Name, j)
		}
		names[*f.Name] = i
		out[i] = CEPrompt{Name: *f.Name, Kind: *f.Kind, Prompt: *f.Prompt}
	}
	return out, nil
}

// Reference kinds.
const (
	ceRefAlone = "alone"
	ceRefExtra = "extra body"
	ceRefFirst = "first reply"
)

// ceCounts counts fingerprint comparisons with one reference.
type ceCounts struct {
	Equal      int `json:"equal"`
	Different  int `json:"different"`
	Unverified int `json:"unverified"`
}

func (c *ceCounts) add(eq *bool) {
	switch {
	case eq == nil:
		c.Unverified++
	case *eq:
		c.Equal++
	default:
		c.Different++
	}
}

// ceCell is one concurrency level: reps groups of level requests sent
// together.
type ceCell struct {
	level   int
	results [][]*sender.Result // [rep][i], nil when not sent
}

// ceCellFigures is a cell's line in the workload block.
type ceCellFigures struct {
	Level         int                 `json:"level"`
	Reps          int                 `json:"reps"`
	Requests      int                 `json:"requests"`
	Failures      int                 `json:"failures"`
	AggDecodeTPS  *float64            `json:"aggregate_decode_tps"`
	TTFTMaxMs     *float64            `json:"ttft_max_ms"`
	ITLP50Ms      *float64            `json:"itl_p50_ms"`
	ITLP95Ms      *float64            `json:"itl_p95_ms"`
	RoundGapP50Ms *float64            `json:"round_gap_p50_ms"`
	RoundGapP95Ms *float64            `json:"round_gap_p95_ms"`
	Output        map[string]ceCounts `json:"output_vs"`
	Tokens        map[string]ceCounts `json:"tokens_vs"`
	ReferenceReqs int                 `json:"reference_requests,omitempty"`
}

// ceDifference is one reply that differs from its reference.
type ceDifference struct {
	RequestID   string `json:"request_id"`
	Prompt      string `json:"prompt"`
	Reference   string `json:"reference"`
	ReferenceID string `json:"reference_id"`
	Fingerprint string `json:"fingerprint"` // output or tokens
}

// ConcurrentExactness sends distinct prompts on concurrent streams and
// checks every reply against a reference: greedy replies should not
// depend on what else is in the batch.
type ConcurrentExactness struct {
	p           Params
	levels      []int
	prompts     []CEPrompt
	fromFile    bool
	tokens      int
	reps        int
	temperature float64
	alone       bool
	extra       map[string]any

	refs  map[string][]*sender.Result // reference kind -> by prompt
	cells []*ceCell
}

func newConcurrentExactness(ctx context.Context, p Params) (Workload, error) {
	c := p.Config
	o := config.DecodeAs[ceOptions](c)
	w := &ConcurrentExactness{
		p:           p,
		levels:      o.Levels,
		tokens:      o.Tokens,
		reps:        o.Reps,
		temperature: o.Temperature,
		alone:       o.Alone,
		refs:        map[string][]*sender.Result{},
	}
	if len(w.levels) == 0 {
		return nil, errors.New("--ce-levels must list at least one level >= 1")
	}
	for _, l := range w.levels {
		if l < 1 {
			return nil, fmt.Errorf("--ce-levels must be >= 1 (got %d)", l)
		}
	}
	if path := o.Prompts; path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, flagFileError("ce-prompts", path, err)
		}
		if w.prompts, err = ParseCEPrompts(data); err != nil {
			return nil, flagFileError("ce-prompts", path, err)
		}
		w.fromFile = true
	} else {
		w.prompts = CEBuiltinPrompts()
	}
	if s := o.ReferenceExtraBody; s != "" {
		m, err := config.ParseObject(s)
		if err != nil {
			return nil, fmt.Errorf("--ce-reference-extra-body: %v", err)
		}
		w.extra = m
	}
	return w, nil
}

func (w *ConcurrentExactness) Name() string { return config.ConcurrentExactness }

// refKinds are the references asked for, in the order they run.
func (w *ConcurrentExactness) refKinds() []string {
	var k []string
	if w.alone {
		k = append(k, ceRefAlone)
	}
	if w.extra != nil {
		k = append(k, ceRefExtra)
	}
	return k
}

func (w *ConcurrentExactness) Describe() []string {
	src := fmt.Sprintf("%d built-in prompts", len(w.prompts))
	if w.fromFile {
		src = fmt.Sprintf("%d prompts from --ce-prompts", len(w.prompts))
	}
	refs := strings.Join(w.refKinds(), " and ")
	if refs == "" {
		refs = "each prompt's first reply at the lowest level"
	} else {
		refs += " reference runs"
	}
	levels := make([]string, len(w.levels))
	for i, l := range w.levels {
		levels[i] = fmt.Sprint(l)
	}
	return []string{fmt.Sprintf("concurrent-exactness: %s at levels %s, %d rep(s), max_tokens %d, temperature %g; compared with %s",
		src, strings.Join(levels, ","), w.reps, w.tokens, w.temperature, refs)}
}

// request builds request id for prompt j.
func (w *ConcurrentExactness) request(id, phase string, j int) *sender.Request {
	pr := w.prompts[j]
	// The user's own prompts (--ce-prompts) are sent as given, never salted.
	r := &sender.Request{ID: id, Phase: phase, MaxTokens: w.tokens, Temperature: w.temperature, KeepGaps: true, Verbatim: w.fromFile}
	if w.temperature > 0 {
		// A sampled reply is only comparable under a fixed seed.
		seed := w.p.Seed
		r.Seed = &seed
	}
	if pr.Kind == "completion" {
		r.Endpoint, r.Prompt = sender.Completions, pr.Prompt
	} else {
		r.Endpoint, r.Messages = sender.Chat, []sender.Message{{Role: "user", Content: pr.Prompt}}
	}
	return r
}

func (w *ConcurrentExactness) Run(ctx context.Context, env Env) error {
	for _, kind := range w.refKinds() {
		prefix := "alone"
		if kind == ceRefExtra {
			prefix = "extra"
		}
		res := make([]*sender.Result, len(w.prompts))
		w.refs[kind] = res
		reqs := make([]*sender.Request, len(w.prompts))
		index := make(map[string]int, len(reqs))
		for j := range reqs {
			reqs[j] = w.request(fmt.Sprintf("%s_p%d", prefix, j), sender.PhaseReference, j)
			if kind == ceRefExtra {
				reqs[j].ExtraBody = w.extra
			}
			index[reqs[j].ID] = j
		}
		env.Phase("reference ("+kind+")", len(reqs), 0)
		failed := 0
		runSequential(ctx, env, reqs, func(r sender.Result) {
			res[index[r.RequestID]] = &r
			if !r.Successful {
				failed++
			}
		})
		if failed > 0 {
			env.Logf("concurrent-exactness: %d %s reference request(s) failed; their comparisons are unverified", failed, kind)
		}
		if ctx.Err() != nil {
			return nil
		}
	}
	for _, level := range w.levels {
		cell := &ceCell{level: level, results: make([][]*sender.Result, w.reps)}
		w.cells = append(w.cells, cell)
		env.Phase(fmt.Sprintf("level %d", level), level*w.reps, 0)
		for rep := 0; rep < w.reps && ctx.Err() == nil; rep++ {
			res := make([]*sender.Result, level)
			cell.results[rep] = res
			reqs := make([]*sender.Request, level)
			index := make(map[string]int, level)
			for i := range reqs {
				reqs[i] = w.request(fmt.Sprintf("level%d_rep%d_req%d", level, rep, i), sender.PhaseMeasured, i%len(w.prompts))
				index[reqs[i].ID] = i
			}
			runBounded(ctx, env, reqs, level, func(r sender.Result) { res[index[r.RequestID]] = &r })
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil
}

// firstReplies is the implicit reference when none was asked: for each
// prompt, its first reply in the lowest level that sent it (then the
// first rep, then the lowest request index).
func (w *ConcurrentExactness) firstReplies() []*sender.Result {
	cells := slices.Clone(w.cells)
	sort.SliceStable(cells, func(a, b int) bool { return cells[a].level < cells[b].level })
	out := make([]*sender.Result, len(w.prompts))
	for _, c := range cells {
		for _, rep := range c.results {
			for i, r := range rep {
				if j := i % len(w.prompts); r != nil && out[j] == nil {
					out[j] = r
				}
			}
		}
	}
	return out
}

// figures computes every cell's figures and comparisons.
func (w *ConcurrentExactness) figures() ([]ceCellFigures, []ceDifference) {
	refs := w.refs
	kinds := w.refKinds()
	if len(kinds) == 0 {
		kinds = []string{ceRefFirst}
		refs = map[string][]*sender.Result{ceRefFirst: w.firstReplies()}
	}
	var diffs []ceDifference
	out := make([]ceCellFigures, 0, len(w.cells))
	for _, c := range w.cells {
		f := ceCellFigures{Level: c.level, Reps: w.reps, Output: map[string]ceCounts{}, Tokens: map[string]ceCounts{}}
		// The pooled gaps are the largest store of the final pass (a 1000
		// stream level has ~100k): one exact slice, sorted in place, and
		// ITL's zeros (tokens beyond the chunks) counted, not stored.
		gaps := make([]float64, 0, c.pooledGaps())
		zeros := 0
		var tokSum, spanSum float64
		for _, rep := range c.results {
			var groupTok int
			var first, last *sender.Result
			for i, r := range rep {
				if r == nil {
					continue
				}
				f.Requests++
				if !r.Successful {
					f.Failures++
				}
				for _, kind := range kinds {
					ref := refs[kind][i%len(w.prompts)]
					if ref == r {
						f.ReferenceReqs++
						continue
					}
					oc, tc := f.Output[kind], f.Tokens[kind]
					eo, et := sender.CompareFingerprint(ref, r, false), sender.CompareFingerprint(ref, r, true)
					oc.add(eo)
					tc.add(et)
					f.Output[kind], f.Tokens[kind] = oc, tc
					for _, d := range []struct {
						eq   *bool
						what string
					}{{eo, "output"}, {et, "tokens"}} {
						if d.eq != nil && !*d.eq {
							diffs = append(diffs, ceDifference{RequestID: r.RequestID, Prompt: w.prompts[i%len(w.prompts)].Name,
								Reference: kind, ReferenceID: ref.RequestID, Fingerprint: d.what})
						}
					}
				}
				if !r.Successful {
					continue
				}
				if r.TTFT != nil {
					ms := *r.TTFT * 1000
					if f.TTFTMaxMs == nil || ms > *f.TTFTMaxMs {
						f.TTFTMaxMs = &ms
					}
				}
				if r.RoundGapsMs != nil && r.CompletionTokens != nil {
					gaps = append(gaps, r.RoundGapsMs...)
					zeros += max(0, *r.CompletionTokens-(len(r.RoundGapsMs)+1))
				}
				if !r.FirstToken.IsZero() {
					if r.CompletionTokens != nil && *r.CompletionTokens > 0 {
						groupTok += *r.CompletionTokens
					} else {
						groupTok += r.Chunks
					}
					if first == nil || r.FirstToken.Before(first.FirstToken) {
						first = r
					}
					if last == nil || r.Finish.After(last.Finish) {
						last = r
					}
				}
			}
			if first != nil {
				if span := last.Finish.Sub(first.FirstToken).Seconds(); span > 0 {
					tokSum += float64(groupTok)
					spanSum += span
				}
			}
		}
		if spanSum > 0 {
			v := tokSum / spanSum
			f.AggDecodeTPS = &v
		}
		slices.Sort(gaps)
		f.ITLP50Ms, f.ITLP95Ms = ceNearestRank(gaps, zeros, 50), ceNearestRank(gaps, zeros, 95)
		f.RoundGapP50Ms, f.RoundGapP95Ms = ceNearestRank(gaps, 0, 50), ceNearestRank(gaps, 0, 95)
		out = append(out, f)
	}
	return out, diffs
}

// pooledGaps counts the round gaps figures pools for the cell (an upper
// bound: failed requests are skipped there).
func (c *ceCell) pooledGaps() int {
	n := 0
	for _, rep := range c.results {
		for _, r := range rep {
			if r != nil && r.CompletionTokens != nil {
				n += len(r.RoundGapsMs)
			}
		}
	}
	return n
}

// ceNearestRank is the nearest-rank percentile of sorted gaps (>= 0)
// merged with zeros zero values, nil when there are none.
func ceNearestRank(sorted []float64, zeros int, p float64) *float64 {
	if len(sorted)+zeros == 0 {
		return nil
	}
	v := stats.NearestRankZeros(sorted, zeros, p)
	return &v
}

// ceExpectation: every reply equals its prompt's reference. Any
// different output or token fingerprint is not met; met needs every
// output compared (token fingerprints only count where the engine
// reports them).
func ceExpectation(cells []ceCellFigures, kinds []string) *record.Expectation {
	var out, tok ceCounts
	for _, c := range cells {
		for _, kind := range kinds {
			o, t := c.Output[kind], c.Tokens[kind]
			out.Equal, out.Different, out.Unverified = out.Equal+o.Equal, out.Different+o.Different, out.Unverified+o.Unverified
			tok.Equal, tok.Different, tok.Unverified = tok.Equal+t.Equal, tok.Different+t.Different, tok.Unverified+t.Unverified
		}
	}
	verdict := record.VerdictMet
	switch {
	case out.Different+tok.Different > 0:
		verdict = record.VerdictNotMet
	case out.Equal == 0 || out.Unverified > 0:
		verdict = record.VerdictUnknown
	}
	reason := fmt.Sprintf("outputs vs %s: %d equal, %d different, %d unverified; token ids: %d equal, %d different, %d unverified",
		strings.Join(kinds, ", "), out.Equal, out.Different, out.Unverified, tok.Equal, tok.Different, tok.Unverified)
	return expect("every reply equals its prompt's reference: batching must not change the answer", verdict, reason)
}

func (w *ConcurrentExactness) Outcome() Outcome {
	cells, diffs := w.figures()
	kinds := w.refKinds()
	if len(kinds) == 0 {
		kinds = []string{ceRefFirst}
	}
	var reasons []string
	different := 0
	for _, c := range cells {
		for _, kind := range kinds {
			n := c.Output[kind].Different + c.Tokens[kind].Different
			different += n
			if n > 0 {
				reasons = append(reasons, fmt.Sprintf("level %d: %d differ from %s", c.Level, n, kind))
			}
		}
	}
	const maxListed = 100
	listed := diffs
	if len(listed) > maxListed {
		listed = listed[:maxListed]
	}
	names := make([]string, len(w.prompts))
	for i, p := range w.prompts {
		names[i] = p.Name
	}
	src := "builtin"
	if w.fromFile {
		src = "file"
	}
	refInfo := map[string]any{}
	for _, kind := range w.refKinds() {
		failed := 0
		for _, r := range w.refs[kind] {
			if r != nil && !r.Successful {
				failed++
			}
		}
		refInfo[kind] = map[string]any{"requests": len(w.refs[kind]), "failed": failed}
	}
	block := map[string]any{
		"levels":          w.levels,
		"reps":            w.reps,
		"tokens":          w.tokens,
		"temperature":     w.temperature,
		"prompts":         src,
		"prompt_names":    names,
		"references":      kinds,
		"reference_runs":  refInfo,
		"expectation":     ceExpectation(cells, kinds),
		"cells":           cells,
		"different":       different,
		"exact":           different == 0,
		"differences":     listed,
		"differences_all": len(diffs),
	}
	if listed == nil {
		block["differences"] = []ceDifference{}
	}
	refText := strings.Join(kinds, ", ")
	rows := []report.Row{
		{Label: "Prompts", Value: fmt.Sprintf("%d %s", len(w.prompts), src)},
		{Label: "Compared with", Value: refText},
		{Label: "Observed different", Value: report.Int(different)},
	}
	for _, c := range cells {
		l := fmt.Sprintf("Level %d ", c.Level)
		rows = append(rows,
			report.Row{Label: l + "requests / failures", Value: fmt.Sprintf("%d / %d", c.Requests, c.Failures)},
			report.Row{Label: l + "decode tok/s / TTFT max ms", Value: report.OptFloat(c.AggDecodeTPS) + " / " + report.OptFloat(c.TTFTMaxMs)},
			report.Row{Label: l + "ITL p50 / p95 (ms)", Value: report.OptFloat(c.ITLP50Ms) + " / " + report.OptFloat(c.ITLP95Ms)},
			report.Row{Label: l + "round gap p50 / p95 (ms)", Value: report.OptFloat(c.RoundGapP50Ms) + " / " + report.OptFloat(c.RoundGapP95Ms)},
		)
		for _, kind := range kinds {
			o := c.Output[kind]
			rows = append(rows, report.Row{Label: l + "vs " + kind + " eq/diff/unv", Value: fmt.Sprintf("%d / %d / %d", o.Equal, o.Different, o.Unverified)})
		}
	}
	return Outcome{
		Block: block, Sections: []report.Section{{Title: "Concurrent Exactness", Rows: rows}},
		Failed: different > 0, Reasons: reasons,
	}
}

// PlanStreams: the highest level (the references go one at a time).
func (w *ConcurrentExactness) PlanStreams(ls load.Settings) StreamPlan {
	top := 0
	for _, l := range w.levels {
		top = max(top, l)
	}
	return measuredStreams(ls, top, "--ce-levels", expectedLatency(0, w.tokens))
}

// ceOptions are its settings (its rows in config), decoded once.
type ceOptions struct {
	Levels             []int   `setting:"ce_levels"`
	Prompts            string  `setting:"ce_prompts"`
	Tokens             int     `setting:"ce_tokens"`
	Reps               int     `setting:"ce_reps"`
	Temperature        float64 `setting:"ce_temperature"`
	Alone              bool    `setting:"ce_alone"`
	ReferenceExtraBody string  `setting:"ce_reference_extra_body"`
}
