// Package testbin builds the kvbench binary once per test process, for
// end-to-end tests that run it as a user would.
package testbin

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

var (
	once sync.Once
	path string
	err  error
	out  []byte
)

// Root is the module root (where main.go lives).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Main runs a package's tests and then removes the binary built for them;
// call it from TestMain in packages that use Path.
func Main(m *testing.M) {
	code := m.Run()
	if path != "" {
		os.RemoveAll(filepath.Dir(path))
	}
	os.Exit(code)
}

// Cleanup removes the binary built for the package's tests, for a
// TestMain that must do more after m.Run than Main allows.
func Cleanup() {
	if path != "" {
		os.RemoveAll(filepath.Dir(path))
	}
}

// Path builds kvbench (once) and returns the binary's path.
func Path(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		dir, e := os.MkdirTemp("", "kvbench-bin-")
		if e != nil {
			err = e
			return
		}
		path = filepath.Join(dir, "kvbench")
		cmd := exec.Command("go", "build", "-o", path, ".")
		cmd.Dir = Root()
		out, err = cmd.CombinedOutput()
	})
	if err != nil {
		t.Fatalf("build kvbench: %v\n%s", err, out)
	}
	return path
}

// Result is one finished run of the binary.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Run runs the binary with args and env additions, bounded by timeout.
func Run(t testing.TB, timeout time.Duration, env []string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, Path(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	e := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("kvbench %v did not finish within %s\nstderr:\n%s", args, timeout, se.String())
	}
	code := 0
	if ee, ok := e.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if e != nil {
		t.Fatalf("run kvbench: %v", e)
	}
	return Result{Code: code, Stdout: so.String(), Stderr: se.String()}
}
