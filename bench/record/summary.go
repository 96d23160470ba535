package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kvbench/kvbench/bench/stats"
)

// SchemaVersion is the bench_summary.json schema this package writes.
const SchemaVersion = 1

// Tool names the program that wrote a summary.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// RunInfo is the `run` block of the summary.
type RunInfo struct {
	ID          string
	Name        string // "" is written as null
	StartedAt   time.Time
	FinishedAt  time.Time // zero is written as null
	Interrupted bool
	ExitCode    int
}

type runJSON struct {
	ID          string  `json:"id"`
	Name        *string `json:"name"`
	StartedAt   *string `json:"started_at"`
	FinishedAt  *string `json:"finished_at"`
	Interrupted bool    `json:"interrupted"`
	ExitCode    int     `json:"exit_code"`
}

func rfc3339(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.Format(time.RFC3339)
	return &s
}

// MarshalJSON writes the times as RFC 3339 (whole seconds, with the
// offset of the time's location).
func (r RunInfo) MarshalJSON() ([]byte, error) {
	j := runJSON{ID: r.ID, StartedAt: rfc3339(r.StartedAt), FinishedAt: rfc3339(r.FinishedAt),
		Interrupted: r.Interrupted, ExitCode: r.ExitCode}
	if r.Name != "" {
		j.Name = &r.Name
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes; times may carry fractions.
func (r *RunInfo) UnmarshalJSON(b []byte) error {
	var j runJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = RunInfo{ID: j.ID, Interrupted: j.Interrupted, ExitCode: j.ExitCode}
	if j.Name != nil {
		r.Name = *j.Name
	}
	for _, f := range []struct {
		s *string
		t *time.Time
	}{{j.StartedAt, &r.StartedAt}, {j.FinishedAt, &r.FinishedAt}} {
		if f.s == nil || *f.s == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, *f.s)
		if err != nil {
			return fmt.Errorf("run time %q: %w", *f.s, err)
		}
		*f.t = t
	}
	return nil
}

// Summary is bench_summary.json. Config, Workload and ServerMetrics are
// whatever the writer passes (an ordered value keeps its key order); read
// back by ReadSummary they are json.RawMessage, which keeps key order and
// exact numbers (Field reads one key of either form).
type Summary struct {
	SchemaVersion int           `json:"schema_version"`
	Tool          Tool          `json:"tool"`
	Run           RunInfo       `json:"run"`
	Config        any           `json:"config"`
	Results       stats.Results `json:"results"`
	Cache         stats.Cache   `json:"cache"`
	Latency       stats.Latency `json:"latency"`
	Client        stats.Client  `json:"client"`
	Workload      any           `json:"workload"`
	ServerMetrics any           `json:"server_metrics,omitempty"`
}

// ReadSummary reads <dir>/bench_summary.json.
func ReadSummary(dir string) (*Summary, error) {
	path := filepath.Join(dir, SummaryFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read summary: %w", err)
	}
	var raw struct {
		Summary
		Config        json.RawMessage `json:"config"`
		Workload      json.RawMessage `json:"workload"`
		ServerMetrics json.RawMessage `json:"server_metrics"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("read summary %s: %w", path, err)
	}
	s := raw.Summary
	s.Config = rawOrNil(raw.Config)
	s.Workload = rawOrNil(raw.Workload)
	s.ServerMetrics = rawOrNil(raw.ServerMetrics)
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
