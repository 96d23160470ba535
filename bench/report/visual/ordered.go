package visual

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// node is a JSON value that keeps its objects' key order and its numbers'
// exact text, so tables show bench_summary.json as written.
type node struct {
	kind byte // 'o' object, 'a' array, 'n' number, 's' string, 'b' bool, 'z' null
	keys []string
	vals []*node // object values (by keys) or array items
	text string  // number literal, string value, "true"/"false"
}

func parseOrdered(b []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := decodeNode(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the JSON value")
	}
	return n, nil
}

const maxDepth = 64

func decodeNode(dec *json.Decoder, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, errors.New("JSON nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &node{kind: 'o'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k)
				n.vals = append(n.vals, v)
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &node{kind: 'a'}
			for dec.More() {
				v, err := decodeNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.vals = append(n.vals, v)
			}
			_, err := dec.Token()
			return n, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		return &node{kind: 'n', text: t.String()}, nil
	case string:
		return &node{kind: 's', text: t}, nil
	case bool:
		return &node{kind: 'b', text: strconv.FormatBool(t)}, nil
	case nil:
		return &node{kind: 'z'}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// get returns the value of key in an object (nil when absent or when n
// is not an object). Several keys walk nested objects.
func (n *node) get(keys ...string) *node {
	for _, k := range keys {
		if n == nil || n.kind != 'o' {
			return nil
		}
		var found *node
		for i, kk := range n.keys {
			if kk == k {
				found = n.vals[i]
			}
		}
		n = found
	}
	return n
}

// str is a string value ("" otherwise).
func (n *node) str() string {
	if n == nil || n.kind != 's' {
		return ""
	}
	return n.text
}

// num is a number value; ok is false for anything else.
func (n *node) num() (float64, bool) {
	if n == nil || n.kind != 'n' {
		return 0, false
	}
	v, err := strconv.ParseFloat(n.text, 64)
	return v, err == nil
}

// optNum is a number value or nil.
func (n *node) optNum() *float64 {
	if v, ok := n.num(); ok {
		return &v
	}
	return nil
}

// boolean is a bool value; ok is false for anything else (null).
func (n *node) boolean() (v, ok bool) {
	if n == nil || n.kind != 'b' {
		return false, false
	}
	return n.text == "true", true
}

// strings is an array's string items.
func (n *node) strings() []string {
	if n == nil || n.kind != 'a' {
		return nil
	}
	var out []string
	for _, v := range n.vals {
		if v.kind == 's' {
			out = append(out, v.text)
		}
	}
	return out
}
