package cli

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testbin"
)

// TestVersionFromLdflags builds kvbench with values injected through
// -ldflags, as the Makefile and the release do, and runs it. It builds in
// the tests' own environment (no -trimpath, cgo as configured), so every
// package comes from the build cache and only the link is new.
func TestVersionFromLdflags(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "kvbench")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	const pkg = "github.com/kvbench/kvbench/bench"
	ldflags := "-s -w -X " + pkg + ".Version=1.2.3-test -X " + pkg + ".Commit=abc1234 -X " + pkg + ".Date=2026-01-02T03:04:05Z"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-ldflags", ldflags, "-o", bin, ".")
	build.Dir = testbin.Root()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, bin, "version").Output()
	if err != nil {
		t.Fatalf("kvbench version: %v", err)
	}
	if want := "kvbench 1.2.3-test (commit abc1234, built 2026-01-02T03:04:05Z)\n"; string(out) != want {
		t.Errorf("kvbench version = %q, want %q", out, want)
	}
}

// TestVersionPlainBuild: without ldflags the command still answers, with
// what the Go build information knows.
func TestVersionPlainBuild(t *testing.T) {
	r := testbin.Run(t, 30*time.Second, nil, "version")
	if r.Code != 0 || !regexp.MustCompile(`^kvbench \S+ \(commit \S+, built \S+\)\n$`).MatchString(r.Stdout) {
		t.Errorf("kvbench version: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
}
