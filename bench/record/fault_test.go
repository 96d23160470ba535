//go:build unix

package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/sender"
)

// TestFailedWriteLeavesWholeLines: a write that fails part-way through a
// line (a full disk) is cut back to the last complete line; nothing is
// written after it, every later line is counted as lost, and the file is
// valid line by line.
func TestFailedWriteLeavesWholeLines(t *testing.T) {
	w, err := Create(t.TempDir(), "random-prefill", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	w.FailWritesAfter(1000, syscall.ENOSPC)
	var failedAt int
	for i := range 30 {
		err := w.Append(&sender.Result{RequestID: "req_" + strconv.Itoa(i), Phase: sender.PhaseMeasured})
		if err != nil && failedAt == 0 {
			failedAt = i
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("error %v does not carry ENOSPC", err)
			}
		}
	}
	if failedAt == 0 {
		t.Fatal("no write failed: the fault was not injected")
	}
	lost, ferr := w.Failed()
	if ferr == nil || lost != 30-failedAt {
		t.Fatalf("Failed() = %d, %v; want %d lost", lost, ferr, 30-failedAt)
	}
	if w.Lines() != failedAt {
		t.Fatalf("Lines() = %d, want %d", w.Lines(), failedAt)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(w.Dir(), RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) == 0 || data[len(data)-1] != '\n' || len(data) > 1000 {
		t.Fatalf("requests.jsonl is %d bytes, ending %q: want whole lines within the 1000 that fit", len(data), data[max(0, len(data)-10):])
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	for sc.Scan() {
		var r sender.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.RequestID != "req_"+strconv.Itoa(n) {
			t.Fatalf("line %d is not request %d: %q (%v)", n+1, n, sc.Text(), err)
		}
		n++
	}
	if n != failedAt {
		t.Fatalf("%d valid lines, want %d", n, failedAt)
	}
}

// TestReservedDescriptorsWriteTheSummary: with every other descriptor
// taken, the summary and the CSV are still written from the reserve.
func TestReservedDescriptorsWriteTheSummary(t *testing.T) {
	w, err := Create(t.TempDir(), "random-prefill", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Append(&sender.Result{RequestID: "r0", Phase: sender.PhaseMeasured}); err != nil {
		t.Fatal(err)
	}
	// A low limit makes exhausting it cheap.
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	low := old
	low.Cur = min(old.Cur, 256)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	var held []*os.File
	defer func() {
		for _, f := range held {
			f.Close()
		}
	}()
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			if !errors.Is(err, syscall.EMFILE) {
				t.Fatalf("exhausting descriptors: %v", err)
			}
			break
		}
		held = append(held, f)
	}
	if _, err := os.CreateTemp(w.Dir(), "x"); !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("descriptors not exhausted: %v", err)
	}
	if err := w.WriteSummary(&Summary{SchemaVersion: 1}); err != nil {
		t.Fatalf("summary with no free descriptor but the reserve: %v", err)
	}
	if err := w.WriteCSV(); err != nil {
		t.Fatalf("CSV with no free descriptor but the reserve: %v", err)
	}
}
