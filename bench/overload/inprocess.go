package overload

import (
	"encoding/binary"
	"os"
	"sync"
	"time"
)

// Waker is a probe source that measures each wake's lateness itself;
// Timing.Run uses it in place of Now and Sleep when its clock is one.
type Waker interface {
	// Wake waits about d and returns how late the wake was; false once
	// stop is closed.
	Wake(d time.Duration, stop <-chan struct{}) (late time.Duration, ok bool)
}

// InProcessClock is the probe's clock for a run whose engine is in the
// process (the built-in one). Its bytes exist only once the process has
// run the engine's goroutine, so a timestamp of the run is late by how
// long the process takes from the engine's write to the client's read,
// not by how late the process wakes for an outside event (a stalled
// process delays the write as much as the read). So each wake is the
// engine's path: a Go timer fires, its goroutine stamps the time and
// writes to a pipe the probe waits on through the netpoller, and the
// probe's lateness is its read's stamp less the write's.
func InProcessClock() Clock { return &pipeClock{} }

type pipeClock struct {
	SystemClock // Now, and Sleep where Wake cannot run
	once        sync.Once
	r, w        *os.File
	base        time.Time
	buf         [8]byte
	// after is time.AfterFunc (tests delay the timer).
	after func(time.Duration, func()) *time.Timer
}

// Wake arms a timer of d whose goroutine writes its stamp; it returns
// the time from that write to the read. It closes the pipe once stop is
// closed.
func (c *pipeClock) Wake(d time.Duration, stop <-chan struct{}) (time.Duration, bool) {
	c.once.Do(func() {
		c.base = time.Now()
		if r, w, err := os.Pipe(); err == nil {
			c.r, c.w = r, w
		}
	})
	if c.r == nil {
		// No pipe: how late a Go timer wakes.
		want := time.Now().Add(d)
		if !c.SystemClock.Sleep(d, stop) {
			return 0, false
		}
		return time.Since(want), true
	}
	select {
	case <-stop:
		c.close()
		return 0, false
	default:
	}
	w, after := c.w, c.after
	if after == nil {
		after = time.AfterFunc
	}
	t := after(d, func() {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(time.Since(c.base)))
		_, _ = w.Write(b[:])
	})
	_ = c.r.SetReadDeadline(time.Now().Add(d + time.Second))
	n, err := c.r.Read(c.buf[:])
	late := time.Since(c.base) - time.Duration(binary.LittleEndian.Uint64(c.buf[:]))
	if err != nil || n != len(c.buf) {
		t.Stop()
		c.close()
		c.r = nil // Go timers from here
		return 0, !closed(stop)
	}
	if closed(stop) {
		c.close()
		return 0, false
	}
	return max(late, 0), true
}

func (c *pipeClock) close() {
	if c.r != nil {
		c.r.Close()
		c.w.Close()
	}
}

func closed(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}
