//go:build unix && !aix && !solaris

package record

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// LockDir takes the lock of the folder dir for this process. The lock file
// is locked under a temporary name and then renamed to LockFile, so a
// reader never finds it there unlocked while its writer lives.
func LockDir(dir string) (*Lock, error) {
	f, err := os.CreateTemp(dir, LockFile+".*")
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	fail := func(err error) (*Lock, error) {
		os.Remove(f.Name())
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fail(err)
	}
	path := filepath.Join(dir, LockFile)
	if err := os.Rename(f.Name(), path); err != nil {
		return fail(err)
	}
	return &Lock{unlock: func() error {
		// The name goes first: a reader then finds no file, or an
		// unlocked one once the last file of the run is written.
		rerr := os.Remove(path)
		if err := f.Close(); err != nil {
			return fmt.Errorf("unlock %s: %w", path, err)
		}
		if rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			return fmt.Errorf("unlock %s: %w", path, rerr)
		}
		return nil
	}}, nil
}

// Locked reports whether a live process holds the lock of the folder dir
// (its run is in progress). No lock file, one that is not a regular file
// (a symlink is not followed, a FIFO not waited on), or a free lock: false.
func Locked(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer f.Close() // releases the shared lock taken below, if any
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return errors.Is(flock(f, syscall.LOCK_SH|syscall.LOCK_NB), syscall.EWOULDBLOCK)
}

// flock applies how to f without blocking, retrying an interrupted call.
func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			if ferr = syscall.Flock(int(fd), how); !errors.Is(ferr, syscall.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}
