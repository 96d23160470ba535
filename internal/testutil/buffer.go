package testutil

import (
	"bytes"
	"sync"
)

// LockedBuffer is a bytes.Buffer that one goroutine (a program's output,
// a child's stderr) writes while the test reads it.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// Read consumes what was written so far (teatest.WaitFor reads so).
func (l *LockedBuffer) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Read(p)
}

// String is what was written and not yet read.
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
