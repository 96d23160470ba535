package runs

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/kvbench/kvbench/bench/record"
)

// ErrRunning is what Delete's error is (errors.Is) for a run or sweep in
// progress: a live process holds its folder's lock.
var ErrRunning = errors.New("running")

// runningError names the folder being written; it is ErrRunning.
type runningError struct{ id string }

func (e *runningError) Error() string {
	return "not deleted: " + e.id + " is still running (its folder is locked until it ends)"
}
func (e *runningError) Is(target error) bool { return target == ErrRunning }

// markRunning sets Running when a live process holds the folder's lock
// (spec/cli.md "A run in progress"). A run without a summary is then not
// interrupted: it has not ended.
func (r *Run) markRunning() *Run {
	if r.Running = record.Locked(r.Dir); r.Running && !r.Complete {
		r.Interrupted = false
	}
	return r
}

// refuseRunning is ErrRunning when the folder dir, or a sweep's cell in
// it, is being written.
func refuseRunning(dir string) error {
	id := FolderID(dir) // shown: cleaned
	if record.Locked(dir) {
		return &runningError{id: id}
	}
	cells, _ := os.ReadDir(filepath.Join(dir, record.SweepCellsDir))
	for _, c := range cells {
		if c.IsDir() && record.Locked(filepath.Join(dir, record.SweepCellsDir, c.Name())) {
			return &runningError{id: id}
		}
	}
	return nil
}

// DeleteRefusal is why the row r cannot be deleted (ErrRunning), nil
// when it can: a run or sweep listed in progress.
func DeleteRefusal(r *Run) error {
	if !r.Running {
		return nil
	}
	return &runningError{id: r.ID}
}
