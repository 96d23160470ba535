package record

// LockFile is a run folder's lock (spec/cli.md "A run in progress"): the
// process writing the folder holds an advisory lock (flock) on it from
// its first file to its last, so readers can tell a run in progress from
// a crashed one. The OS drops the lock when the process dies (kill -9
// included); the file itself may stay and means nothing once unlocked.
// It is hidden and is not a record file: nothing reads it but Locked.
const LockFile = ".lock"

// Lock is the hold of one process on a run (or sweep) folder.
type Lock struct {
	// unlock releases the hold; nil once released (or when nothing is
	// held, on systems without flock).
	unlock func() error
}

// Unlock removes the lock file and releases the lock. A nil Lock, or one
// released already, is a no-op.
func (l *Lock) Unlock() error {
	if l == nil || l.unlock == nil {
		return nil
	}
	err := l.unlock()
	l.unlock = nil
	return err
}
