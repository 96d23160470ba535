// Package testutil holds small helpers that the tests of several packages
// share.
package testutil

import (
	"bytes"
	"encoding/json"
	"net"
	"testing"
)

// ObjectKeys returns the member names of a JSON object in file order: of
// data itself when path is "", else of the object at data's top-level
// member path. It fails the test when that is not a JSON object.
func ObjectKeys(t testing.TB, data []byte, path string) []string {
	t.Helper()
	if path != "" {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		data = m[path]
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s", data)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// ClosedAddr returns a loopback host:port that nothing listens on, for
// the rest of the test: where it can, the port stays bound without
// listening (a connection to it is refused), so no server started
// meanwhile, by this test or another process, is handed the same port.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	if addr, ok := reservedPort(t); ok {
		return addr
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
