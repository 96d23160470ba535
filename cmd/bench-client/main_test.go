package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCompare(t *testing.T) {
	reader := figures{CPU: 2 * time.Second, Tokens: 100000, PeakRSSKB: 50 << 10, TTFTP50ms: 160}
	kv := figures{CPU: 2500 * time.Millisecond, Tokens: 100000, PeakRSSKB: 70 << 10, TTFTP50ms: 180}
	x := compare(100*time.Millisecond, reader, kv)
	if x.CPU != 1.25 || x.RSS != 1.4 || x.ErrReader != 60 || x.ErrKv != 80 || x.TTFTLimit != 80 {
		t.Fatalf("ratios %+v", x)
	}
	if !x.allOK() {
		t.Errorf("on the limits every target is met: %+v", x)
	}
	kv.TTFTP50ms = 180.5
	kv.PeakRSSKB = 76 << 10
	if x := compare(100*time.Millisecond, reader, kv); x.ttftOK() || x.rssOK() || !x.cpuOK() {
		t.Errorf("past the TTFT and RSS limits: %+v", x)
	}
}

func TestCheckRecord(t *testing.T) {
	runs := t.TempDir()
	dir := filepath.Join(runs, "20260101-000000-concurrent-exactness")
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "requests.jsonl"), []byte("{}\n{}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bench_results.csv"), []byte("h\r\na\r\nb\r\n"), 0o644)
	if got := checkRecord(runs, 2); !strings.HasPrefix(got, "INCOMPLETE") {
		t.Errorf("no summary: %s", got)
	}
	os.WriteFile(filepath.Join(dir, "bench_summary.json"), []byte("{}\n"), 0o644)
	if got := checkRecord(runs, 2); !strings.HasPrefix(got, "complete") {
		t.Errorf("whole record: %s", got)
	}
	if got := checkRecord(runs, 3); !strings.HasPrefix(got, "INCOMPLETE") {
		t.Errorf("a missing line: %s", got)
	}
}
