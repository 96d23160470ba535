// Package testbin builds the kvbench binary once per source tree, for the
// end-to-end tests that run it as a user would. Every test package of one
// `go test ./...` (cli, e2e, bench/metrics) shares the build: the binary
// is kept under the user's cache directory, keyed by a hash of the
// module's non-test Go sources, go.mod and go.sum and the Go version,
// and built under a file lock, so packages tested in parallel wait for
// one build instead of each linking their own. A changed source is a new
// key, hence a fresh build.
package testbin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
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

// Main runs a package's tests; call it from TestMain in packages that use
// Path. The shared binary stays for the next package and the next run.
func Main(m *testing.M) { os.Exit(m.Run()) }

// Cleanup is kept for TestMains that call it: the binary is shared
// across packages and runs, so nothing is removed.
func Cleanup() {}

// Path builds kvbench (once per source tree) and returns the binary's
// path.
func Path(t testing.TB) string {
	t.Helper()
	once.Do(func() { path, out, err = build() })
	if err != nil {
		t.Fatalf("build kvbench: %v\n%s", err, out)
	}
	return path
}

func build() (string, []byte, error) {
	key, err := sourceKey(Root())
	if err != nil {
		return "", nil, err
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "kvbench-testbin", key)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	bin := filepath.Join(dir, "kvbench")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	unlock, err := lock(filepath.Join(dir, "lock"))
	if err != nil {
		return "", nil, err
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin, nil, nil
	}
	tmp := bin + ".tmp"
	cmd := exec.Command("go", "build", "-o", tmp, ".")
	cmd.Dir = Root()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", out, err
	}
	return bin, nil, os.Rename(tmp, bin)
}

// sourceKey hashes what the binary is built from.
func sourceKey(root string) (string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || name == "dist") {
				return filepath.SkipDir
			}
			return nil
		}
		if (strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go")) || p == filepath.Join(root, "go.mod") || p == filepath.Join(root, "go.sum") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	h := sha256.New()
	io.WriteString(h, runtime.Version()+"\x00")
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		io.WriteString(h, rel+"\x00")
		fh, err := os.Open(f)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, fh)
		fh.Close()
		if err != nil {
			return "", err
		}
		io.WriteString(h, "\x00")
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}

// Result is one finished run of the binary.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Run runs the binary with args and env additions, bounded by timeout.
func Run(t testing.TB, timeout time.Duration, env []string, args ...string) Result {
	t.Helper()
	bin := Path(t) // the build, when this is the first run, is not the command's time
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
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
