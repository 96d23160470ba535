//go:build unix

package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testbin"
)

// End to end: a sweep whose cell cannot write its record (the file size
// limit stands in for a full disk) stops at that cell, marks it cut in
// sweep.json, the table and the progress, says what the record lacks,
// and exits 4; no further cell runs.
func TestSweepStopsAtAFullDisk(t *testing.T) {
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// 64 blocks of file size: every file of a cell fits but its
	// requests.jsonl of 300 requests.
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", `ulimit -f 64 && exec "$0" "$@"`, testbin.Path(t),
		"sweep", "--engine-url", "builtin", "--workload", "random-prefill", "--rp-num-requests", "300", "--rp-request-length", "10",
		"--sweep-rate", "400,800,1600", "--slo", "ttft=10s", "--output-dir", out, "--no-interactive")
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 4 {
		t.Fatalf("exit %d, want 4\nstdout:\n%s\nstderr:\n%s", code, so.String(), se.String())
	}
	for _, want := range []string{"rate 400 cut: the run record in", "stopped at rate 400: its run record could not be written completely, so no further cell ran"} {
		if !strings.Contains(so.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, so.String())
		}
	}
	for _, want := range []string{"cell 1/3: rate 400 cut: ", "the sweep stopped at rate 400, no further cell ran"} {
		if !strings.Contains(se.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, se.String())
		}
	}
	if strings.Contains(se.String(), "cell 2") {
		t.Errorf("a cell ran after the cut one:\n%s", se.String())
	}
	sweeps, _ := filepath.Glob(filepath.Join(out, "*-sweep-random-prefill"))
	if len(sweeps) != 1 {
		t.Fatalf("sweep folders %v", sweeps)
	}
	cells, _ := os.ReadDir(filepath.Join(sweeps[0], "cells"))
	if len(cells) != 1 {
		t.Errorf("%d cell folders, want the cut one only", len(cells))
	}
	var f struct {
		Cells []struct {
			Status  string   `json:"status"`
			Reasons []string `json:"reasons"`
		} `json:"cells"`
	}
	b, err := os.ReadFile(filepath.Join(sweeps[0], "sweep.json"))
	if err != nil || json.Unmarshal(b, &f) != nil || len(f.Cells) != 1 || f.Cells[0].Status != "cut" ||
		len(f.Cells[0].Reasons) != 1 || !strings.Contains(f.Cells[0].Reasons[0], "requests.jsonl holds") {
		t.Fatalf("sweep.json: %v\n%s", err, b)
	}
}
