package record

// RAGQualityFile is rag-qa-quality's per-sample scores in a run folder
// (spec/workloads.md, rag-qa-quality): written by bench/workload, read by
// the explorer and compare (bench/runs).
const RAGQualityFile = "rag_qa_quality.json"

// RAGSample is one entry of the file's per_sample list: LMCache's keys,
// then kvbench's request_id and gold_answers.
type RAGSample struct {
	SampleID        string   `json:"sample_id"`
	F1              *float64 `json:"f1"` // null when no answer was parsed
	Parsed          bool     `json:"parsed"`
	Answer          *string  `json:"answer"`
	TTFT            *float64 `json:"ttft"` // seconds
	NumOutputTokens *int     `json:"num_output_tokens"`
	CacheState      string   `json:"cache_state"`
	CachedTokens    *int     `json:"cached_tokens"`
	// RequestID is the request that asked the sample (its line in
	// requests.jsonl), and GoldAnswers what it was scored against, so a
	// score is shown with what it was measured from. Files written before
	// they were recorded leave them empty (paired by position).
	RequestID   string   `json:"request_id"`
	GoldAnswers []string `json:"gold_answers"`
}

// RAGSummary is the file's summary object.
type RAGSummary struct {
	NumSamples int      `json:"num_samples"`
	NumParsed  int      `json:"num_parsed"`
	ParseRate  *float64 `json:"parse_rate"`
	F1Mean     *float64 `json:"f1_mean"`
}
