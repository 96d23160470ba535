package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/kvbench/kvbench/internal/stat"
	"github.com/kvbench/kvbench/internal/textclean"
)

// A series folder (spec/stats.md, `kvbench run --repeat N`): series.json
// and the folder holding its runs, runs/01 ... runs/NN, each a complete
// run folder.
const (
	SeriesFile    = "series.json"
	SeriesRunsDir = "runs"
)

// IsSeriesDir reports whether dir is a series folder: it holds
// series.json as a regular file.
func IsSeriesDir(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, SeriesFile))
	return err == nil && fi.Mode().IsRegular()
}

// SeriesRunDir is the run folder of a series run: its run id is a folder
// name under runs/, and nothing else in it is followed.
func SeriesRunDir(seriesDir, runID string) string {
	return filepath.Join(seriesDir, SeriesRunsDir, filepath.Base(filepath.Clean("/"+runID)))
}

// SeriesRunID is the run id (folder name) of the i-th run (0-based).
func SeriesRunID(i int) string { return fmt.Sprintf("%02d", i+1) }

// SeriesInfo is series.json's `series` object.
type SeriesInfo struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	StartedAt   string `json:"started_at"`
	FinishedAt  string `json:"finished_at"`
	Interrupted bool   `json:"interrupted"`
	Repeat      int    `json:"repeat"`
}

// Value is one named figure, in a list that keeps its order in JSON.
type Value struct {
	Key   string
	Value *float64
}

// SeriesRun is one run's row of series.json: its id and exit code, its
// request counts, then the compared metrics (spec/stats.md) overall and
// per cache state, then the headline's speedup; null where undefined.
type SeriesRun struct {
	RunID          string
	ExitCode       int
	Interrupted    bool
	TotalRequests  int
	FailedRequests int
	Values         []Value
}

// Get is the value of key, nil when absent or undefined.
func (r *SeriesRun) Get(key string) *float64 {
	for _, v := range r.Values {
		if v.Key == key {
			return v.Value
		}
	}
	return nil
}

// MarshalJSON writes the fixed keys, then the values in order.
func (r SeriesRun) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	id, _ := json.Marshal(r.RunID)
	fmt.Fprintf(&b, `{"run_id":%s,"exit_code":%d,"interrupted":%t,"total_requests":%d,"failed_requests":%d`,
		id, r.ExitCode, r.Interrupted, r.TotalRequests, r.FailedRequests)
	for _, v := range r.Values {
		k, _ := json.Marshal(v.Key)
		b.WriteByte(',')
		b.Write(k)
		b.WriteByte(':')
		writeNum(&b, v.Value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the fixed keys and keeps every other numeric or
// null key as a value, in file order.
func (r *SeriesRun) UnmarshalJSON(data []byte) error {
	*r = SeriesRun{}
	return eachKey(data, func(k string, raw json.RawMessage) error {
		var err error
		switch k {
		case "run_id":
			err = json.Unmarshal(raw, &r.RunID)
		case "exit_code":
			err = json.Unmarshal(raw, &r.ExitCode)
		case "interrupted":
			err = json.Unmarshal(raw, &r.Interrupted)
		case "total_requests":
			err = json.Unmarshal(raw, &r.TotalRequests)
		case "failed_requests":
			err = json.Unmarshal(raw, &r.FailedRequests)
		default:
			var v *float64
			if json.Unmarshal(raw, &v) == nil && (v == nil || !math.IsInf(*v, 0)) {
				r.Values = append(r.Values, Value{k, v})
			}
		}
		return err
	})
}

// SeriesMetric is one metric of series.json's summary.
type SeriesMetric struct {
	Key string
	stat.Summary
}

// SeriesSummary is series.json's `summary`: per metric the median, mean,
// standard deviation, 95% interval of the median and the number of runs
// that measured it, in the metrics' order.
type SeriesSummary []SeriesMetric

// Get is the summary of key; ok false when absent.
func (s SeriesSummary) Get(key string) (stat.Summary, bool) {
	for _, m := range s {
		if m.Key == key {
			return m.Summary, true
		}
	}
	return stat.Summary{}, false
}

// MarshalJSON writes an object in the metrics' order.
func (s SeriesSummary) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.Key)
		v, err := json.Marshal(m.Summary)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the object in file order.
func (s *SeriesSummary) UnmarshalJSON(data []byte) error {
	*s = nil
	return eachKey(data, func(k string, raw json.RawMessage) error {
		var m stat.Summary
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("summary %s: %w", k, err)
		}
		*s = append(*s, SeriesMetric{k, m})
		return nil
	})
}

// SeriesRecord is a series folder's series.json (SeriesFile), written by
// `kvbench run --repeat` after every run and read by the explorer,
// compare and report (bench/runs).
type SeriesRecord struct {
	SchemaVersion int           `json:"schema_version"`
	Tool          Tool          `json:"tool"`
	Series        SeriesInfo    `json:"series"`
	Runs          []SeriesRun   `json:"runs"`
	Summary       SeriesSummary `json:"summary"`
}

// maxSeriesBytes caps series.json when reading: a row per run of a few
// kilobytes each.
const maxSeriesBytes = 16 << 20

// ReadSeriesRecord reads dir's series.json (a regular file only, at most
// maxSeriesBytes), its text cleaned (ReadJSON) and its ids, name and
// metric keys cleaned for one line (CleanText): the one reader of a
// series, for the explorer, compare and report.
func ReadSeriesRecord(dir string) (*SeriesRecord, error) {
	path := filepath.Join(dir, SeriesFile)
	b, err := ReadJSON(path, maxSeriesBytes)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", SeriesFile, err)
	}
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("read %s: not a JSON object", path)
	}
	var f SeriesRecord
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	f.CleanText()
	return &f, nil
}

// CleanText cleans for one line the text of a series.json read from
// disk that is shown on terminals: the series' id, name and times, the
// runs' ids and the metric keys (STYLE.md, "Text from outside").
func (f *SeriesRecord) CleanText() {
	s := &f.Series
	s.ID, s.Name = textclean.Line(s.ID), textclean.Line(s.Name)
	s.StartedAt, s.FinishedAt = textclean.Line(s.StartedAt), textclean.Line(s.FinishedAt)
	f.Tool.Name, f.Tool.Version = textclean.Line(f.Tool.Name), textclean.Line(f.Tool.Version)
	for i := range f.Runs {
		r := &f.Runs[i]
		r.RunID = textclean.Line(r.RunID)
		for j := range r.Values {
			r.Values[j].Key = textclean.Line(r.Values[j].Key)
		}
	}
	for i := range f.Summary {
		f.Summary[i].Key = textclean.Line(f.Summary[i].Key)
	}
}

func writeNum(b *bytes.Buffer, v *float64) {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		b.WriteString("null")
		return
	}
	b.WriteString(strconv.FormatFloat(*v, 'g', -1, 64))
}

// eachKey hands fn each key of a JSON object with its raw value, in order.
func eachKey(data []byte, fn func(k string, raw json.RawMessage) error) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != json.Delim('{') {
		return fmt.Errorf("not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		k, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		if err := fn(k, raw); err != nil {
			return err
		}
	}
	_, err = dec.Token()
	return err
}
