package record

import (
	"bytes"
	"encoding/json"
)

// Pair is one key and value of an Ordered object.
type Pair struct {
	Key   string
	Value any
}

// Ordered is a JSON object that keeps its key order: the summary's config
// block (SummaryConfig) and the workloads' blocks are written in a fixed
// order, so two summaries diff line by line.
type Ordered []Pair

// MarshalJSON writes the pairs in order.
func (o Ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.Key)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(p.Value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
