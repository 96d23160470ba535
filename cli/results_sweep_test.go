package cli_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/internal/testbin"
	"github.com/kvbench/kvbench/internal/testutil"
)

// sweepJSONKeys are the keys of a sweep's entry (docs/results.md), in
// order.
var sweepJSONKeys = []string{"id", "kind", "name", "workload", "model", "engine_url", "started_at", "dimension",
	"search", "values", "cells", "max_value", "goodput_target", "total_requests", "failed_requests", "interrupted", "complete"}

// A runs directory with a run between a capacity search (newest) and a
// list sweep without an SLO (oldest).
func sweepResFixture(t *testing.T) (dir, search, list string) {
	t.Helper()
	dir = t.TempDir()
	list = runstest.WriteRecordedSweep(t, dir, runstest.RecordedSweep{Name: "list", Started: resT0, Values: []float64{1, 2, 4}})
	runstest.Write(t, dir, runstest.Spec{Name: "plain", Started: resT0.Add(time.Hour), Requests: 10, Summary: true})
	search = runstest.WriteRecordedSweep(t, dir, runstest.RecordedSweep{Name: "cap", Started: resT0.Add(2 * time.Hour),
		Values: []float64{4, 8, 16, 12}, Search: true, SLO: true, PassUpTo: 12})
	return dir, search, list
}

// `kvbench results` lists a sweep folder as one entry, in text and in
// JSON, among the runs, newest first; runs keep exactly their keys.
func TestResultsListsSweeps(t *testing.T) {
	dir, search, list := sweepResFixture(t)

	res := testbin.Run(t, 30*time.Second, nil, "results", "--runs-dir", dir, "--format", "json")
	if res.Code != 0 || res.Stderr != "" {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal([]byte(res.Stdout), &raws); err != nil || len(raws) != 3 {
		t.Fatalf("want 3 entries (%v):\n%s", err, res.Stdout)
	}
	var entries []map[string]any
	for i, raw := range raws {
		var o map[string]any
		json.Unmarshal(raw, &o)
		entries = append(entries, o)
		want := sweepJSONKeys
		if i == 1 {
			want = resJSONKeys // the run, between the sweeps
		}
		if keys := testutil.ObjectKeys(t, raw, ""); !reflect.DeepEqual(keys, want) {
			t.Errorf("entry %d keys:\n%v\nwant\n%v", i, keys, want)
		}
	}
	if entries[0]["id"] != filepath.Base(search) || entries[1]["name"] != "plain" || entries[2]["id"] != filepath.Base(list) {
		t.Errorf("order: %v, %v, %v", entries[0]["id"], entries[1]["id"], entries[2]["id"])
	}
	s := entries[0]
	for k, want := range map[string]any{"kind": "sweep", "name": "cap", "workload": "random-prefill", "dimension": "rate",
		"search": true, "cells": 4.0, "max_value": 12.0, "goodput_target": 0.9, "total_requests": 40.0,
		"failed_requests": 0.0, "interrupted": false, "complete": true} {
		if !reflect.DeepEqual(s[k], want) {
			t.Errorf("search sweep %s = %#v, want %#v", k, s[k], want)
		}
	}
	if v, _ := s["values"].([]any); !reflect.DeepEqual(v, []any{4.0, 8.0, 16.0, 12.0}) {
		t.Errorf("values = %v", s["values"])
	}
	if s["started_at"] != resT0.Add(2*time.Hour).UTC().Format(time.RFC3339) {
		t.Errorf("started_at = %v", s["started_at"])
	}
	l := entries[2]
	if l["kind"] != "sweep" || l["search"] != false || l["max_value"] != nil || l["goodput_target"] != nil || l["cells"] != 3.0 {
		t.Errorf("list sweep without an SLO: %v", l)
	}

	res = testbin.Run(t, 30*time.Second, nil, "results", "--runs-dir", dir, "--no-interactive")
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	if len(lines) != 4 {
		t.Fatalf("table:\n%s", res.Stdout)
	}
	for i, want := range [][]string{
		{filepath.Base(search), "random-prefill", "40/0", "ok, sweep of 4 cells (capacity search over rate), max rate 12 req/s"},
		{"plain", "ok"},
		{filepath.Base(list), "30/0", "ok, sweep of 3 cells (list over rate)"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i+1], w) {
				t.Errorf("row %d lacks %q: %q", i+1, w, lines[i+1])
			}
		}
	}
	if f := strings.Fields(lines[1]); !slices.Contains(f, "-") {
		t.Errorf("a sweep's figures are -: %q", lines[1])
	}

	// A sweep is named like a run: by id or a unique prefix.
	res = testbin.Run(t, 30*time.Second, nil, "results", filepath.Base(search)[:16], "--runs-dir", dir, "--format", "json")
	var one []map[string]any
	if err := json.Unmarshal([]byte(res.Stdout), &one); err != nil || len(one) != 1 || one[0]["id"] != filepath.Base(search) || one[0]["kind"] != "sweep" {
		t.Errorf("results %s (exit %d): %s %s", filepath.Base(search)[:16], res.Code, res.Stdout, res.Stderr)
	}
}
