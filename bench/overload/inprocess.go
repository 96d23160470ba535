package overload

import (
	"encoding/binary"
	"io"
	"net"
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
	r, w        conn
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
		c.r, c.w = connPair()
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
	n, err := io.ReadFull(c.r, c.buf[:])
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

// conn is one end of the probe's connection.
type conn interface {
	io.ReadWriteCloser
	SetReadDeadline(time.Time) error
}

// connPair is a loopback TCP connection, as the built-in engine's, or a
// pipe; nil, nil when neither can be made.
func connPair() (r, w conn) {
	if ln, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
		defer ln.Close()
		accepted := make(chan net.Conn, 1)
		go func() {
			a, _ := ln.Accept()
			accepted <- a
		}()
		d, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
		if err == nil {
			if a := <-accepted; a != nil {
				if t, ok := a.(*net.TCPConn); ok {
					_ = t.SetNoDelay(true)
				}
				return d, a
			}
			d.Close()
		} else {
			ln.Close() // ends the Accept
			if a := <-accepted; a != nil {
				a.Close()
			}
		}
	}
	if pr, pw, err := os.Pipe(); err == nil {
		return pr, pw
	}
	return nil, nil
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
