package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/stats"
)

// SchemaVersion is the bench_summary.json schema this package writes.
const SchemaVersion = 1

// Tool names the program that wrote a summary.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// RunInfo is the `run` block of the summary. The times are RFC 3339
// strings (the runner writes UTC, whole seconds).
type RunInfo struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	StartedAt   string `json:"started_at"`
	FinishedAt  string `json:"finished_at"`
	Interrupted bool   `json:"interrupted"`
	ExitCode    int    `json:"exit_code"`
	// MergedFrom are the shard run ids a merged run was made of
	// (kvbench merge); nil for a run of one process. A pointer keeps
	// RunInfo comparable.
	MergedFrom *[]string `json:"merged_from,omitempty"`
}

// StartedTime parses StartedAt; zero when absent or not RFC 3339.
func (r RunInfo) StartedTime() time.Time { return parseTime(r.StartedAt) }

// FinishedTime parses FinishedAt; zero when absent or not RFC 3339.
func (r RunInfo) FinishedTime() time.Time { return parseTime(r.FinishedAt) }

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// Summary is bench_summary.json. Config, Workload and ServerMetrics are
// whatever the writer passes (an ordered value keeps its key order); read
// back by ReadSummary they are json.RawMessage, which keeps key order and
// exact numbers (Field reads one key of either form).
type Summary struct {
	SchemaVersion int     `json:"schema_version"`
	Tool          Tool    `json:"tool"`
	Run           RunInfo `json:"run"`
	// Headline leads: what reuse changed (nil in summaries written
	// before it existed).
	Headline *Headline     `json:"headline,omitempty"`
	Config   any           `json:"config"`
	Results  stats.Results `json:"results"`
	Cache    stats.Cache   `json:"cache"`
	Latency  stats.Latency `json:"latency"`
	Client   stats.Client  `json:"client"`
	// The figures by cache state, vLLM's serving figures and the failed
	// requests by error code (nil in summaries written before them).
	ByCacheState *stats.ByCacheState `json:"by_cache_state,omitempty"`
	Serving      *stats.Serving      `json:"serving,omitempty"`
	Errors       *map[string]int     `json:"errors,omitempty"`
	// Load and Goodput are spec/load.md's blocks; Load is nil only in
	// summaries written before it existed, Goodput without an SLO.
	// Series is the measured phase second by second, with its hit ratio
	// (spec/load.md; nil in summaries written before it).
	Series   []stats.SecondPoint `json:"series,omitempty"`
	Load     *load.Block         `json:"load"`
	Goodput  *load.Goodput       `json:"goodput"`
	Workload any                 `json:"workload"`
	// CacheReset names the endpoint that dropped the engine's prefix
	// cache before the run (--reset-cache), null when none was asked.
	CacheReset    *string `json:"cache_reset"`
	ServerMetrics any     `json:"server_metrics,omitempty"`
	// Warnings are what the workload's plan check found before the first
	// request (spec/workloads.md): it could not show what it is for.
	Warnings []string `json:"warnings,omitempty"`

	// Shard is {index, count, start_at} of one shard of a sharded run (or
	// of a run given --start-at); StartSkewMs is its first measured submit
	// minus start_at (of a merged run: the largest over its shards).
	Shard       any      `json:"shard,omitempty"`
	StartSkewMs *float64 `json:"start_skew_ms,omitempty"`
	// Shards describes each shard of a merged run; Partial is true when
	// some were missing (kvbench merge --allow-partial).
	Shards  []ShardInfo `json:"shards,omitempty"`
	Partial bool        `json:"partial,omitempty"`
}

// ShardInfo is one shard of a merged run, in the summary's `shards`
// block (spec/scale-out.md).
type ShardInfo struct {
	Index            int      `json:"index"`
	RunID            string   `json:"run_id"`
	Requests         int      `json:"requests"`
	Failed           int      `json:"failed"`
	AchievedRate     *float64 `json:"achieved_rate"`
	StartSkewMs      *float64 `json:"start_skew_ms"`
	ClientCPUSeconds *float64 `json:"client_cpu_seconds"`
	Delivered        *bool    `json:"delivered"`
}

// ReadSummary reads <dir>/bench_summary.json, its text cleaned
// (ReadJSON).
func ReadSummary(dir string) (*Summary, error) {
	path := filepath.Join(dir, SummaryFile)
	b, err := ReadJSON(path, maxSummaryBytes)
	if err != nil {
		return nil, fmt.Errorf("read summary: %w", err)
	}
	return DecodeSummary(b, path)
}

// DecodeSummary decodes a summary's JSON read from path (named in its
// errors): a JSON object, or an error.
func DecodeSummary(b []byte, path string) (*Summary, error) {
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("read summary %s: not a JSON object", path)
	}
	var raw struct {
		Summary
		Config        json.RawMessage `json:"config"`
		Workload      json.RawMessage `json:"workload"`
		ServerMetrics json.RawMessage `json:"server_metrics"`
		Shard         json.RawMessage `json:"shard"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("read summary %s: %w", path, err)
	}
	s := raw.Summary
	s.Config = rawOrNil(raw.Config)
	s.Workload = rawOrNil(raw.Workload)
	s.ServerMetrics = rawOrNil(raw.ServerMetrics)
	s.Shard = rawOrNil(raw.Shard)
	return &s, nil
}

func rawOrNil(m json.RawMessage) any {
	if len(m) == 0 || bytes.Equal(m, []byte("null")) {
		return nil
	}
	return m
}

// Field returns key of an object-valued v: a map[string]any is read as
// is; anything else (json.RawMessage, a struct, an ordered value) is
// decoded from its JSON with numbers as json.Number and objects as
// map[string]any. ok is false when v is not an object or has no such key.
func Field(v any, key string) (value any, ok bool) {
	if v == nil {
		return nil, false
	}
	if m, isMap := v.(map[string]any); isMap {
		value, ok = m[key]
		return value, ok
	}
	b, isRaw := v.(json.RawMessage)
	if !isRaw {
		var err error
		if b, err = json.Marshal(v); err != nil {
			return nil, false
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, false
	}
	value, ok = m[key]
	return value, ok
}
