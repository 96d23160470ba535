package e2e

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testbin"
	"github.com/kvbench/kvbench/sim"
)

// authProxy puts HTTP Basic authentication in front of the simulator:
// a request without alice's credentials gets 401. It counts the requests
// it let through.
func authProxy(t *testing.T, user, pass string) (string, *atomic.Int64) {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Speed = 100
	engine, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ok atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, has := r.BasicAuth()
		if !has || u != user || p != pass {
			http.Error(w, `{"error":{"message":"unauthorized","type":"auth","code":401}}`, http.StatusUnauthorized)
			return
		}
		ok.Add(1)
		engine.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &ok
}

// TestURLPasswordNeverWritten plants a password in every URL flag, runs
// the whole cycle (run as text and JSON, export, results, compare,
// doctor) and looks for it in every output and every file written. The
// user-info must still reach the engine as Basic authentication.
func TestURLPasswordNeverWritten(t *testing.T) {
	t.Parallel()
	testbin.Path(t) // build first: the timeouts below are for kvbench alone
	const user, pass = "alice", "PLANTED-pw-8c1f"
	base, passed := authProxy(t, user, pass)
	withCreds := strings.Replace(base, "http://", "http://"+user+":"+pass+"@", 1)

	dir := t.TempDir()
	runsDir := filepath.Join(dir, "runs")
	env := []string{"KVBENCH_CONFIG_DIR=" + filepath.Join(dir, "config"), "KVBENCH_RUNS_DIR=" + runsDir, "XDG_STATE_HOME=" + dir}
	var outputs []string
	run := func(wantCode int, args ...string) testbin.Result {
		t.Helper()
		r := testbin.Run(t, 90*time.Second, env, args...)
		if r.Code != wantCode {
			t.Fatalf("kvbench %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.Code, wantCode, r.Stdout, r.Stderr)
		}
		outputs = append(outputs, r.Stdout+r.Stderr)
		return r
	}
	common := []string{"run", "--no-interactive", "--engine-url", withCreds, "--lmcache-url", withCreds,
		"--metrics-url", withCreds + "/metrics", "--workload", "random-prefill",
		"--rp-num-requests", "3", "--rp-request-length", "64"}
	run(0, common...)
	run(0, append(common, "--format", "json", "--name", "second")...)
	run(0, append(common, "--export-config", filepath.Join(dir, "exported.json"))...)
	// Env and config.yaml are entry points too.
	os.MkdirAll(filepath.Join(dir, "config"), 0o755)
	os.WriteFile(filepath.Join(dir, "config", "config.yaml"), []byte("lmcache_url: "+withCreds+"\n"), 0o644)
	env = append(env, "KVBENCH_ENGINE_URL="+withCreds)
	run(0, "run", "--no-interactive", "--workload", "random-prefill", "--rp-num-requests", "2", "--rp-request-length", "32", "-q")
	if passed.Load() == 0 {
		t.Fatal("no request carried the URL's credentials as Basic authentication")
	}

	entries, err := os.ReadDir(runsDir)
	if err != nil || len(entries) != 3 {
		t.Fatalf("want 3 run folders in %s: %v %d", runsDir, err, len(entries))
	}
	run(0, "results", "--no-interactive")
	res := run(0, "results", "--no-interactive", "--format", "json")
	if !strings.Contains(res.Stdout, `"engine_url": "`+base) && !strings.Contains(res.Stdout, `"engine_url":"`+base) {
		t.Errorf("results --format json does not show the credential-free URL %s:\n%s", base, res.Stdout)
	}
	run(0, "compare", "--no-interactive", entries[0].Name(), entries[1].Name())
	run(0, "doctor", "--engine-url", withCreds, "--lmcache-url", withCreds)
	run(0, "doctor", "--engine-url", withCreds, "--format", "json")
	run(2, "run", "--no-interactive", "--engine-url", "ftp://"+user+":"+pass+"@127.0.0.1:1", "--workload", "random-prefill")
	run(1, "doctor", "--engine-url", "http://"+user+":"+pass+"@127.0.0.1:1")

	for _, o := range outputs {
		if strings.Contains(o, pass) || strings.Contains(o, user+":") || strings.Contains(o, user+"@") {
			t.Errorf("credentials in this output:\n%s", o)
		}
	}
	files := 0
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(path) == "config.yaml" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("read %s: %v", path, err)
			return nil
		}
		files++
		if strings.Contains(string(b), pass) || strings.Contains(string(b), user+":") {
			t.Errorf("credentials written to %s", path)
		}
		return nil
	})
	// Two runs with metrics.jsonl (5 files), one without (4), the export.
	if files < 15 {
		t.Errorf("only %d files checked, want every file of 3 runs and the export", files)
	}
}
