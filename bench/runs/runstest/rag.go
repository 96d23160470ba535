package runstest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// RAGSample is one per_sample entry of a fixture rag_qa_quality.json.
type RAGSample struct {
	ID string
	// F1 is the score, nil for an answer that did not parse.
	F1     *float64
	Answer string
	Gold   []string
	TTFTms float64
}

// F1 is a score for RAGSample.F1.
func F1(v float64) *float64 { return &v }

// WriteRAGQuality writes dir's rag_qa_quality.json in the workload's
// format: sample i was asked by measured request req-i (as Write names
// them), unparsed samples have no answer and a null F1.
func WriteRAGQuality(tb testing.TB, dir, fingerprint string, samples []RAGSample) {
	tb.Helper()
	per := []map[string]any{}
	parsed, sum := 0, 0.0
	for i, s := range samples {
		ttft := s.TTFTms / 1000
		e := map[string]any{
			"sample_id": s.ID, "f1": s.F1, "parsed": s.F1 != nil, "answer": nil, "ttft": ttft,
			"num_output_tokens": 16, "cache_state": "reused", "cached_tokens": 512,
			"request_id": "req-" + strconv.Itoa(i), "gold_answers": s.Gold,
		}
		if s.F1 != nil {
			e["answer"] = s.Answer
			parsed++
			sum += *s.F1
		}
		per = append(per, e)
	}
	summary := map[string]any{"num_samples": len(samples), "num_parsed": parsed, "parse_rate": nil, "f1_mean": nil}
	if len(samples) > 0 {
		summary["parse_rate"] = float64(parsed) / float64(len(samples))
	}
	if parsed > 0 {
		summary["f1_mean"] = sum / float64(parsed)
	}
	doc := map[string]any{
		"run_fingerprint": fingerprint,
		"config":          map[string]any{"dataset": "fixture.jsonl"},
		"model":           "sim-model",
		"summary":         summary,
		"per_sample":      per,
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rag_qa_quality.json"), b, 0o644); err != nil {
		tb.Fatal(err)
	}
}
