package runs_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
)

// crashed writes a run folder without a summary.
func crashed(t *testing.T) string {
	t.Helper()
	return runstest.Write(t, t.TempDir(), runstest.Spec{Name: "killed", Started: t0, Requests: 30, Warmup: 2, FailEvery: 5, ReusedEvery: 2})
}

// swapLines rewrites requests.jsonl with lines of the same length in
// which no request succeeded, keeping its size and mtime: only a reader
// of the cache still sees the old figures.
func swapLines(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, record.RequestsFile)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	changed := bytes.ReplaceAll(b, []byte(`"successful":true`), []byte(`"complete":false `))
	if bytes.Equal(changed, b) || len(changed) != len(b) {
		t.Fatal("the fixture's lines did not change as planned")
	}
	if err := os.WriteFile(path, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

func listed(t *testing.T, dir string) *runs.Run {
	t.Helper()
	r, err := runs.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A crashed run is read once: its list row and its summary come from the
// cache beside it while requests.jsonl keeps its size and mtime, and are
// computed again when either changes.
func TestSummaryCacheServesACrashedRun(t *testing.T) {
	dir := crashed(t)
	first := listed(t, dir)
	d1, err := runs.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, runs.SummaryCacheFile)); err != nil {
		t.Fatalf("no cache written: %v", err)
	}
	swapLines(t, dir)
	if again := listed(t, dir); !reflect.DeepEqual(again, first) {
		t.Errorf("the second listing did not come from the cache:\n got %+v\nwant %+v", again, first)
	}
	d2, err := runs.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d2.Summary, d1.Summary) || d2.Corrupt != d1.Corrupt {
		t.Errorf("the second load did not come from the cache")
	}
	// A new mtime: the lines are read again (their successes are gone).
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(filepath.Join(dir, record.RequestsFile), later, later); err != nil {
		t.Fatal(err)
	}
	if r := listed(t, dir); r.FailedRequests != r.TotalRequests || r.TotalRequests != first.TotalRequests {
		t.Errorf("after a new mtime: %d of %d failed, want all %d", r.FailedRequests, r.TotalRequests, first.TotalRequests)
	}
	// A new size too.
	f, err := os.OpenFile(filepath.Join(dir, record.RequestsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"request_id":"late","phase":"measured","successful":true,"submit_time":1772366401,"finish_time":1772366402,"ttft_s":0.05,"cache_state":"cold"}` + "\n")
	f.Close()
	if r := listed(t, dir); r.TotalRequests != first.TotalRequests+1 {
		t.Errorf("after a new line: %d requests, want %d", r.TotalRequests, first.TotalRequests+1)
	}
}

// The cache is a file from outside: anything malformed, or not a regular
// file, is ignored (the figures computed from the lines) and replaced.
func TestSummaryCacheIsNeverTrustedMalformed(t *testing.T) {
	dir := crashed(t)
	want := listed(t, dir)
	if _, err := runs.Load(dir); err != nil { // the cache then holds the summary too
		t.Fatal(err)
	}
	path := filepath.Join(dir, runs.SummaryCacheFile)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{
		"garbage":        []byte("not json"),
		"empty":          nil,
		"null":           []byte("null"),
		"array":          []byte("[1]"),
		"torn":           good[:len(good)/2],
		"other version":  bytes.Replace(good, []byte(`"version":1`), []byte(`"version":99`), 1),
		"negative count": bytes.Replace(good, []byte(`"total_requests":30`), []byte(`"total_requests":-30`), 1),
		"summary null":   bytes.Replace(good, []byte(`"summary":{`), []byte(`"summary":null,"x":{`), 1),
		"unknown key":    bytes.Replace(good, []byte(`{"version"`), []byte(`{"extra":1,"version"`), 1),
		"two documents":  append(append([]byte{}, good...), good...),
	} {
		if bytes.Equal(content, good) {
			t.Fatalf("%s: the case is the good cache", name)
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		swapLines(t, dir) // a trusted cache would still show the old figures
		got := listed(t, dir)
		if got.FailedRequests != got.TotalRequests {
			t.Errorf("%s: the malformed cache was trusted: %+v", name, got)
		}
		if b, err := os.ReadFile(path); err != nil || !bytes.Contains(b, []byte(`"version":1`)) {
			t.Errorf("%s: the cache was not rewritten: %v", name, err)
		}
		// Back to the lines the cache was first made from.
		os.Remove(path)
		restore(t, dir, want)
	}
	// A FIFO in its place is not opened for reading (it would block).
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	done := make(chan *runs.Run, 1)
	go func() { done <- listed(t, dir) }()
	select {
	case r := <-done:
		if r.TotalRequests != want.TotalRequests {
			t.Errorf("with a FIFO as the cache: %+v", r)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a FIFO as the cache blocked the listing")
	}
}

// restore puts back the fixture's successes swapLines removed.
func restore(t *testing.T, dir string, want *runs.Run) {
	t.Helper()
	path := filepath.Join(dir, record.RequestsFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.ReplaceAll(b, []byte(`"complete":false `), []byte(`"successful":true`))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := listed(t, dir); r.FailedRequests != want.FailedRequests {
		t.Fatalf("restored lines: %+v, want %+v", r, want)
	}
}

// A run still being written is summarised every time and never cached.
func TestSummaryCacheSkipsARunningRun(t *testing.T) {
	dir := crashed(t)
	l, err := record.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	listed(t, dir)
	if _, err := os.Stat(filepath.Join(dir, runs.SummaryCacheFile)); err == nil {
		t.Error("a running run's summary was cached")
	}
}
