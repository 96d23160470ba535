package runs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/config"
)

// Bounds on reading a rag_qa_quality.json, whatever a run folder holds:
// the named datasets have a few thousand samples of a few hundred bytes.
const (
	maxRAGQualityBytes   = 32 << 20
	maxRAGQualitySamples = 200_000
)

// RAGQuality is a run's rag_qa_quality.json.
type RAGQuality struct {
	Path        string
	Fingerprint string
	Model       string
	Summary     record.RAGSummary
	Samples     []record.RAGSample
}

// ErrNoRAGQuality is why a run has no scores to show: it is not a
// rag-qa-quality run, or its file is not there.
var ErrNoRAGQuality = errors.New("no " + record.RAGQualityFile)

// IsRAGQuality reports whether d is a rag-qa-quality run.
func IsRAGQuality(d *Detail) bool { return d != nil && d.Run.Workload == config.RAGQAQuality }

// ReadRAGQuality reads the per-sample scores of a rag-qa-quality run:
// rag_qa_quality.json in its folder, else the file its workload block
// names (--rag-output). Only a regular file of bounded size is read. A
// run of another workload, or one whose file is missing, is
// ErrNoRAGQuality (errors.Is).
func ReadRAGQuality(d *Detail) (*RAGQuality, error) {
	if !IsRAGQuality(d) {
		return nil, fmt.Errorf("%s is a %s run: %w", d.Run.ID, orDashWorkload(d.Run.Workload), ErrNoRAGQuality)
	}
	paths := []string{filepath.Join(d.Run.Dir, record.RAGQualityFile)}
	if out := workloadString(d, "output"); out != "" && out != paths[0] {
		paths = append(paths, out)
	}
	for _, p := range paths {
		b, err := record.ReadJSON(p, maxRAGQualityBytes)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		q, err := parseRAGQuality(b)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		q.Path = p
		return q, nil
	}
	return nil, fmt.Errorf("%s has no %s: %w", d.Run.ID, record.RAGQualityFile, ErrNoRAGQuality)
}

func orDashWorkload(w string) string {
	if w == "" {
		return "unknown-workload"
	}
	return w
}

// workloadString is a string key of the summary's workload block.
func workloadString(d *Detail, key string) string {
	if d.Summary == nil {
		return ""
	}
	var b []byte
	switch v := d.Summary.Workload.(type) {
	case nil:
		return ""
	case json.RawMessage:
		b = v
	default:
		b, _ = json.Marshal(v)
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(m[key], &s) != nil {
		return ""
	}
	return s
}

// parseRAGQuality decodes the file, per_sample one entry at a time so a
// hostile file of millions of tiny entries is refused, not allocated.
func parseRAGQuality(b []byte) (*RAGQuality, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	q := &RAGQuality{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		switch key {
		case "run_fingerprint":
			err = dec.Decode(&q.Fingerprint)
		case "model":
			err = dec.Decode(&q.Model)
		case "summary":
			err = dec.Decode(&q.Summary)
		case "per_sample":
			err = decodeSamples(dec, &q.Samples)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
	}
	return q, nil
}

func decodeSamples(dec *json.Decoder, out *[]record.RAGSample) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil
	}
	if tok != json.Delim('[') {
		return errors.New("not a list")
	}
	for dec.More() {
		if len(*out) >= maxRAGQualitySamples {
			return fmt.Errorf("more than %d samples", maxRAGQualitySamples)
		}
		var s record.RAGSample
		if err := dec.Decode(&s); err != nil {
			return err
		}
		*out = append(*out, s)
	}
	_, err = dec.Token()
	return err
}

// ByRequest maps request ids (sample{i}) to their samples: the recorded
// request_id, else the position in per_sample (the workload asks the
// samples one at a time, in order).
func (q *RAGQuality) ByRequest() map[string]*record.RAGSample {
	m := make(map[string]*record.RAGSample, len(q.Samples))
	for i := range q.Samples {
		id := q.Samples[i].RequestID
		if id == "" {
			id = fmt.Sprintf("sample%d", i)
		}
		m[id] = &q.Samples[i]
	}
	return m
}
