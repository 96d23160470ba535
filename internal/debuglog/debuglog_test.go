package debuglog

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/textclean/cleantest"
)

// Whatever a caller logs, a URL's user-info and a registered secret never
// reach the file; every line is one JSON object, debug included.
func TestRedactsCredentials(t *testing.T) {
	var b bytes.Buffer
	l := New(&b)
	Hide(l, "sk-secret-123")
	l = l.With("engine", "http://bob:hunter2@gpu:8000/v1")
	l.Debug("request failed: http://alice:pw@host/x said sk-secret-123",
		"err", errors.New("GET http://eve:pw2@h/metrics: bearer sk-secret-123 refused"),
		slog.Group("req", "auth", "Bearer sk-secret-123"))
	l.Info("plain", "n", 3)
	out := b.String()
	for _, leak := range []string{"hunter2", "bob", "alice", ":pw@", "pw2", "sk-secret-123"} {
		if strings.Contains(out, leak) {
			t.Errorf("%q reached the log:\n%s", leak, out)
		}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2 (debug included):\n%s", len(lines), out)
	}
	for _, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON line: %s", line)
		}
	}
	var first map[string]any
	json.Unmarshal([]byte(lines[0]), &first)
	if first["level"] != "DEBUG" || first["engine"] != "http://gpu:8000/v1" {
		t.Errorf("first line: %v", first)
	}
}

// Text an engine sent (an error body, a model id) reaches the log
// cleaned: read back (jq -r, a decoder), it holds no terminal control.
func TestCleansText(t *testing.T) {
	var b bytes.Buffer
	l := New(&b).With("model", cleantest.Text)
	l.Debug("engine said "+cleantest.Text, "err", errors.New(cleantest.Text), slog.Group("req", "body", cleantest.Text))
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatalf("not a JSON line: %s", b.String())
	}
	cleantest.Clean(t, "log file", b.String())
	for _, v := range []any{m["msg"], m["model"], m["err"], m["req"].(map[string]any)["body"]} {
		cleantest.Check(t, "logged text", v.(string))
	}
}
