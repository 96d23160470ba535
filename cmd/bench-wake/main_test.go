package main

import (
	"strings"
	"testing"
)

// TestReadInside: a reader with its sender inside the process takes
// every message and prints the reads' and the probe's figures.
func TestReadInside(t *testing.T) {
	var out strings.Builder
	if err := read(&out, "", "inside", 20, false); err != nil {
		t.Fatal(err)
	}
	line := out.String()
	if !strings.HasPrefix(line, "reads: n 20 p50 ") || !strings.Contains(line, "| probe p99 ") || strings.Contains(line, "probe p99 n/a") {
		t.Fatalf("reader said %q", line)
	}
}

func TestQuantiles(t *testing.T) {
	v := make([]float64, 100)
	for i := range v {
		v[i] = float64(100 - i)
	}
	if got := quantiles(v); got != "n 100 p50 51.000 p90 91.000 p99 100.000 max 100.000" {
		t.Fatalf("quantiles: %q", got)
	}
	if quantiles(nil) != "none" {
		t.Fatal("no reads must say none")
	}
}
