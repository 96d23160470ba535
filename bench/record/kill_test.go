//go:build unix

package record

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/kvbench/kvbench/bench/sender"
)

// TestAppendSurvivesKill appends from a child process that then kills
// itself with SIGKILL: every line appended before the kill is on disk.
func TestAppendSurvivesKill(t *testing.T) {
	if dir := os.Getenv("KVBENCH_RECORD_KILL_DIR"); dir != "" {
		w, err := Create(dir, "random-prefill", "", started)
		if err != nil {
			os.Exit(3)
		}
		for _, id := range []string{"a", "b", "c"} {
			if w.Append(&sender.Result{RequestID: id, Phase: sender.PhaseMeasured}) != nil {
				os.Exit(4)
			}
		}
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestAppendSurvivesKill$")
	cmd.Env = append(os.Environ(), "KVBENCH_RECORD_KILL_DIR="+dir)
	err := cmd.Run()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("child did not die by signal: %v", err)
	}
	runs, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(runs) != 1 {
		t.Fatalf("runs = %v", runs)
	}
	n := 0
	corrupt, err := ReadRequests(runs[0], func(*sender.Result) error { n++; return nil })
	if err != nil || n != 3 || corrupt != 0 {
		t.Errorf("after kill -9: %d results, %d corrupt, %v; want 3", n, corrupt, err)
	}
	checkKilledLock(t, runs[0])
}
