package workload

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/stats"
	"github.com/kvbench/kvbench/config"
)

func init() { Register(Kind{Name: config.CacheProbe, New: newCacheProbe}) }

// cpSeed is the seed sent with every cache-probe request.
const cpSeed int64 = 1234

// CacheProbeText is the built-in prompt: a public-domain text (Lincoln's
// Gettysburg Address) behind a short instruction. Its length in tokens
// depends on the tokenizer; use --cp-prompt-file for an exact length.
const CacheProbeText = `Summarize the following speech in one paragraph.

Four score and seven years ago our fathers brought forth on this continent, a new nation, conceived in Liberty, and dedicated to the proposition that all men are created equal.

Now we are engaged in a great civil war, testing whether that nation, or any nation so conceived and so dedicated, can long endure. We are met on a great battle-field of that war. We have come to dedicate a portion of that field, as a final resting place for those who here gave their lives that that nation might live. It is altogether fitting and proper that we should do this.

But, in a larger sense, we can not dedicate -- we can not consecrate -- we can not hallow -- this ground. The brave men, living and dead, who struggled here, have consecrated it, far above our poor power to add or detract. The world will little note, nor long remember what we say here, but it can never forget what they did here. It is for us the living, rather, to be dedicated here to the unfinished work which they who fought here have thus far so nobly advanced. It is rather for us to be here dedicated to the great task remaining before us -- that from these honored dead we take increased devotion to that cause for which they gave the last full measure of devotion -- that we here highly resolve that these dead shall not have died in vain -- that this nation, under God, shall have a new birth of freedom -- and that government of the people, by the people, for the people, shall not perish from the earth.`

// ParseTokenIDs reads a JSON array of token ids: non-empty, every element
// a JSON integer in [0, 2^32-1] (no floats such as 8.0, no strings, no
// booleans).
func ParseTokenIDs(data []byte) ([]uint32, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw []any
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a JSON array of token ids: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not a JSON array of token ids: data after the array")
	}
	if raw == nil {
		return nil, errors.New("not a JSON array of token ids")
	}
	if len(raw) == 0 {
		return nil, errors.New("the array of token ids is empty")
	}
	ids := make([]uint32, len(raw))
	for i, v := range raw {
		n, ok := v.(json.Number)
		if !ok {
			return nil, fmt.Errorf("element %d is not an unsigned 32-bit integer (got %v)", i, cpJSONText(v))
		}
		u, err := strconv.ParseUint(n.String(), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("element %d is not an unsigned 32-bit integer (got %s)", i, n)
		}
		ids[i] = uint32(u)
	}
	return ids, nil
}

func cpJSONText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// flagFileError names the flag and the file of a problem with a file the
// user gave, without repeating the path twice.
func flagFileError(flag, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("--%s %s: %v", flag, path, err)
}

// cpRow is one request of the probe with its receipt.
type cpRow struct {
	RequestID        string   `json:"request_id"`
	Phase            string   `json:"phase"`
	Sent             bool     `json:"sent"`
	Successful       bool     `json:"successful"`
	Error            *string  `json:"error"`
	Complete         bool     `json:"complete"`
	PromptTokens     *int     `json:"prompt_tokens"`
	CachedTokens     *int     `json:"cached_tokens"`
	CompletionTokens *int     `json:"completion_tokens"`
	CacheState       string   `json:"cache_state"`
	UnverifiedReason *string  `json:"unverified_reason"`
	TTFTms           *float64 `json:"ttft_ms"`
	ITLMeanMs        *float64 `json:"itl_mean_ms"`
	PrefillTPS       *float64 `json:"prefill_tps"`
	OutputSHA256     *string  `json:"output_sha256"`
	TokenSHA         *string  `json:"token_sha"`
	EqualFirstOutput *bool    `json:"equal_first_output"`
	EqualFirstTokens *bool    `json:"equal_first_tokens"`
}

// CacheProbe sends one first request, repeated identical requests one
// after another, then identical concurrent requests: proof of a cold
// first prefill and of reuse.
type CacheProbe struct {
	p            Params
	tokens       int
	repeats      int
	streams      int
	ids          []uint32
	expected     int
	requireCold  bool
	requireReuse bool

	results []*sender.Result // by row, nil when not sent
	rowIDs  []string
	phases  []string
}

func newCacheProbe(ctx context.Context, p Params) (Workload, error) {
	c := p.Config
	o := config.DecodeAs[cpOptions](c)
	w := &CacheProbe{
		p:            p,
		tokens:       o.Tokens,
		repeats:      o.Repeats,
		streams:      o.Streams,
		expected:     o.ExpectedPromptTokens,
		requireCold:  o.RequireCold,
		requireReuse: o.RequireReuse,
	}
	if path := o.PromptFile; path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, flagFileError("cp-prompt-file", path, err)
		}
		if w.ids, err = ParseTokenIDs(data); err != nil {
			return nil, flagFileError("cp-prompt-file", path, err)
		}
	}
	w.rowIDs = append(w.rowIDs, "first_0")
	w.phases = append(w.phases, sender.PhaseFirst)
	for i := 0; i < w.repeats; i++ {
		w.rowIDs = append(w.rowIDs, fmt.Sprintf("repeated_%d", i))
		w.phases = append(w.phases, sender.PhaseRepeated)
	}
	for i := 0; i < w.streams; i++ {
		w.rowIDs = append(w.rowIDs, fmt.Sprintf("concurrent_%d", i))
		w.phases = append(w.phases, sender.PhaseConcurrent)
	}
	w.results = make([]*sender.Result, len(w.rowIDs))
	return w, nil
}

func (w *CacheProbe) Name() string { return config.CacheProbe }

func (w *CacheProbe) promptDesc() string {
	if w.ids != nil {
		return fmt.Sprintf("%d token ids from --cp-prompt-file via /v1/completions", len(w.ids))
	}
	return "the built-in public text"
}

func (w *CacheProbe) Describe() []string {
	return []string{fmt.Sprintf("cache-probe: 1 first, %d repeated (one at a time), %d concurrent; identical requests of %s, temperature 0, seed %d, max_tokens %d",
		w.repeats, w.streams, w.promptDesc(), cpSeed, w.tokens)}
}

func (w *CacheProbe) request(row int) *sender.Request {
	seed := cpSeed
	r := &sender.Request{
		ID: w.rowIDs[row], Phase: w.phases[row], MaxTokens: w.tokens, Temperature: 0, Seed: &seed,
	}
	if w.ids != nil {
		r.Endpoint = sender.Completions
		r.PromptIDs = w.ids
	} else {
		r.Endpoint = w.p.Endpoint
		r.Messages = []sender.Message{{Role: "user", Content: CacheProbeText}}
		setPrompt(r)
	}
	return r
}

func (w *CacheProbe) Run(ctx context.Context, env Env) error {
	keep := func(row int) func(sender.Result) {
		return func(r sender.Result) { w.results[row] = &r }
	}
	env.Phase(sender.PhaseFirst, 1, 0)
	runSequential(ctx, env, []*sender.Request{w.request(0)}, keep(0))
	if w.repeats > 0 {
		env.Phase(sender.PhaseRepeated, w.repeats, 0)
		for i := 1; i <= w.repeats && ctx.Err() == nil; i++ {
			runSequential(ctx, env, []*sender.Request{w.request(i)}, keep(i))
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	env.Phase(sender.PhaseConcurrent, w.streams, 0)
	first := 1 + w.repeats
	reqs := make([]*sender.Request, w.streams)
	row := make(map[string]int, w.streams)
	for i := range reqs {
		reqs[i] = w.request(first + i)
		row[reqs[i].ID] = first + i
	}
	runBounded(ctx, env, reqs, len(reqs), func(r sender.Result) { w.results[row[r.RequestID]] = &r })
	return nil
}

// cacheProbeRows builds the rows: each result's receipt and its
// comparison with the first row.
func cacheProbeRows(ids, phases []string, results []*sender.Result) []cpRow {
	rows := make([]cpRow, len(ids))
	first := results[0]
	for i, r := range results {
		row := cpRow{RequestID: ids[i], Phase: phases[i], CacheState: sender.StateUnverified}
		if r != nil {
			row.Sent = true
			row.Successful, row.Error, row.Complete = r.Successful, r.Error, r.Complete
			row.PromptTokens, row.CachedTokens, row.CompletionTokens = r.PromptTokens, r.CachedTokens, r.CompletionTokens
			row.CacheState, row.UnverifiedReason = r.CacheState, r.UnverifiedReason
			if r.TTFT != nil {
				ms := *r.TTFT * 1000
				row.TTFTms = &ms
			}
			row.ITLMeanMs, row.PrefillTPS = r.ITLMeanMs, r.PrefillTPS
			row.OutputSHA256, row.TokenSHA = r.OutputSHA256, r.TokenSHA
		}
		if r != nil && first != nil {
			row.EqualFirstOutput = sender.CompareFingerprint(first, r, false)
			row.EqualFirstTokens = sender.CompareFingerprint(first, r, true)
		}
		rows[i] = row
	}
	return rows
}

// cacheProbeReasons lists why the probe is not qualified (none: qualified).
func cacheProbeReasons(rows []cpRow, expected int, requireCold, requireReuse bool) []string {
	var out []string
	for i, r := range rows {
		id := r.RequestID
		switch {
		case !r.Sent:
			out = append(out, id+": not sent")
			continue
		case r.Error != nil:
			out = append(out, id+": error "+*r.Error)
		case !r.Complete:
			out = append(out, id+": incomplete stream")
		case r.CompletionTokens == nil || *r.CompletionTokens <= 0:
			out = append(out, id+": no completion tokens reported")
		case r.OutputSHA256 == nil:
			out = append(out, id+": no text or reasoning")
		}
		if r.EqualFirstOutput != nil && !*r.EqualFirstOutput {
			out = append(out, id+": output differs from first_0")
		}
		if r.EqualFirstTokens != nil && !*r.EqualFirstTokens {
			out = append(out, id+": token ids differ from first_0")
		}
		if expected > 0 && (r.PromptTokens == nil || *r.PromptTokens != expected) {
			got := "unknown"
			if r.PromptTokens != nil {
				got = strconv.Itoa(*r.PromptTokens)
			}
			out = append(out, fmt.Sprintf("%s: prompt_tokens %s, expected %d", id, got, expected))
		}
		if requireCold && i == 0 && r.CacheState != sender.StateCold {
			out = append(out, id+": not cold ("+cpStateText(r.CacheState, r.UnverifiedReason)+")")
		}
		if requireReuse && r.Phase == sender.PhaseRepeated && r.CacheState != sender.StateReused {
			out = append(out, id+": not reused ("+cpStateText(r.CacheState, r.UnverifiedReason)+")")
		}
	}
	return out
}

func cpStateText(state string, reason *string) string {
	if state == sender.StateUnverified && reason != nil {
		return state + ": " + *reason
	}
	return state
}

// promptFingerprint is the SHA-256 of the prompt: of the ids as
// little-endian uint32 words, or of the text.
func (w *CacheProbe) promptFingerprint() string {
	h := sha256.New()
	if w.ids != nil {
		var b [4]byte
		for _, id := range w.ids {
			binary.LittleEndian.PutUint32(b[:], id)
			h.Write(b[:])
		}
	} else {
		h.Write([]byte(CacheProbeText))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (w *CacheProbe) Outcome() Outcome {
	rows := cacheProbeRows(w.rowIDs, w.phases, w.results)
	reasons := cacheProbeReasons(rows, w.expected, w.requireCold, w.requireReuse)
	var concurrent []*sender.Result
	for _, r := range w.results[1+w.repeats:] {
		if r != nil {
			concurrent = append(concurrent, r)
		}
	}
	prompt := "builtin"
	if w.ids != nil {
		prompt = "file"
	}
	block := map[string]any{
		"qualified": len(reasons) == 0,
		"reasons":   reasons,
		"rows":      rows,
		"settings": map[string]any{
			"tokens":                 w.tokens,
			"repeats":                w.repeats,
			"streams":                w.streams,
			"temperature":            0,
			"seed":                   cpSeed,
			"prompt":                 prompt,
			"prompt_sha256":          w.promptFingerprint(),
			"prompt_ids":             len(w.ids),
			"expected_prompt_tokens": w.expected,
			"require_cold":           w.requireCold,
			"require_reuse":          w.requireReuse,
		},
		"expectation":                      w.expectation(rows),
		"concurrent_aggregate_prefill_tps": stats.AggregatePrefill(concurrent),
	}
	if reasons == nil {
		block["reasons"] = []string{}
	}
	qualified := "yes"
	if len(reasons) > 0 {
		qualified = fmt.Sprintf("no (%d reasons)", len(reasons))
	}
	out := []report.Row{
		{Label: "Prompt", Value: prompt},
	}
	for _, r := range rows {
		out = append(out, report.Row{Label: r.RequestID, Value: cpRowText(r)})
	}
	out = append(out,
		report.Row{Label: "Concurrent agg. prefill (tok/s)", Value: report.OptFloat(stats.AggregatePrefill(concurrent))},
		report.Row{Label: "Qualified", Value: qualified})
	return Outcome{
		Block: block, Sections: []report.Section{{Title: "Cache Probe", Rows: out}},
		Failed: len(reasons) > 0, Reasons: reasons,
	}
}

// expectation: first_0 is cold when its prompt is new to the engine
// (the built-in text under a run-unique salt, or --cp-require-cold);
// every later row, an identical prompt sent once first_0 has finished,
// reuses it; every output equals first_0's; with
// --cp-expected-prompt-tokens, every prompt has that length. A check
// whose receipts or fingerprints are missing is unknown, never passed.
func (w *CacheProbe) expectation(rows []cpRow) *record.Expectation {
	var expected, reasons []string
	verdicts := []string{}
	first := w.results[0]
	if w.requireCold || (w.ids == nil && w.p.Settings.PromptSalt == "auto") {
		var j judge
		if first != nil {
			j.add(first, cold)
		}
		expected = append(expected, "first_0 cold")
		got := "not sent"
		if first != nil {
			got = "first_0 " + cpStateText(first.CacheState, first.UnverifiedReason)
			if first.CachedTokens != nil && first.PromptTokens != nil {
				got += fmt.Sprintf(" (%d of %d tokens cached)", *first.CachedTokens, *first.PromptTokens)
			}
		}
		reasons = append(reasons, got)
		verdicts = append(verdicts, j.verdict())
	}
	if len(rows) > 1 {
		var j judge
		for _, r := range w.results[1:] {
			if r == nil {
				j.noReceipt++
				continue
			}
			j.add(r, func(prompt, cached int) bool { return 2*cached >= prompt })
		}
		expected = append(expected, "every later row reused")
		reasons = append(reasons, "later rows: "+j.count("reused (at least half the prompt cached)"))
		verdicts = append(verdicts, j.verdict())
	}
	var same judge
	for _, r := range rows {
		switch {
		case r.EqualFirstOutput == nil:
			same.noReceipt++
		case *r.EqualFirstOutput:
			same.yes++
		default:
			same.no++
		}
	}
	expected = append(expected, "every output equal to first_0's")
	reasons = append(reasons, "outputs: "+fmt.Sprintf("%d/%d equal to first_0's", same.yes, len(rows))+strings.Replace(same.notes(), "without a verified receipt", "without a fingerprint to compare", 1))
	verdicts = append(verdicts, same.verdict())
	if w.expected > 0 {
		var j judge
		for _, r := range rows {
			switch {
			case r.PromptTokens == nil:
				j.noReceipt++
			case *r.PromptTokens == w.expected:
				j.yes++
			default:
				j.no++
			}
		}
		expected = append(expected, fmt.Sprintf("%d prompt tokens", w.expected))
		reasons = append(reasons, fmt.Sprintf("prompt tokens: %d/%d rows had %d", j.yes, len(rows), w.expected))
		verdicts = append(verdicts, j.verdict())
	}
	return expect(strings.Join(expected, ", "), worst(verdicts), strings.Join(reasons, "; "))
}

// worst combines verdicts: any not met is not met, any unknown unknown.
func worst(vs []string) string {
	out := record.VerdictMet
	for _, v := range vs {
		switch v {
		case record.VerdictNotMet:
			return v
		case record.VerdictUnknown:
			out = v
		}
	}
	return out
}

// cpRowText is a row in a few words: state, prompt/cached tokens and the
// comparison with the first row.
func cpRowText(r cpRow) string {
	if !r.Sent {
		return "not sent"
	}
	n := func(p *int) string {
		if p == nil {
			return "-"
		}
		return strconv.Itoa(*p)
	}
	eq := "n/a"
	if r.EqualFirstOutput != nil {
		eq = map[bool]string{true: "same", false: "DIFFERENT"}[*r.EqualFirstOutput]
	}
	s := fmt.Sprintf("%s %s/%s %s", cpStateText(r.CacheState, r.UnverifiedReason), n(r.PromptTokens), n(r.CachedTokens), eq)
	if r.Error != nil {
		s = *r.Error + " " + s
	}
	return s
}

// PlanStreams: the concurrent phase's streams (the first and repeated
// requests go one at a time).
func (w *CacheProbe) PlanStreams(ls load.Settings) StreamPlan {
	prompt := len(w.ids)
	if w.ids == nil {
		prompt = len(CacheProbeText) / 4
	}
	return measuredStreams(ls, w.streams, "--cp-streams", expectedLatency(prompt, w.tokens))
}

// cpOptions are its settings (its rows in config), decoded once.
type cpOptions struct {
	Tokens               int    `setting:"cp_tokens"`
	Repeats              int    `setting:"cp_repeats"`
	Streams              int    `setting:"cp_streams"`
	PromptFile           string `setting:"cp_prompt_file"`
	ExpectedPromptTokens int    `setting:"cp_expected_prompt_tokens"`
	RequireCold          bool   `setting:"cp_require_cold"`
	RequireReuse         bool   `setting:"cp_require_reuse"`
}
