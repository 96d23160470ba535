//go:build linux

package overload

import (
	"errors"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// WakeClock is the clock the run's timing probe sleeps on. On Linux it
// waits on a timerfd through Go's netpoller, so the probe is woken the
// way a socket read is: by a kernel event that makes a thread blocked in
// epoll runnable, which then has to get a CPU and hand the goroutine a P.
// Go's own timers would add a rounding of their own: the netpoller's
// epoll timeout is in whole milliseconds, so a 1 ms timer can fire up to
// a millisecond late on an idle machine, a lateness no socket read
// suffers. Without a timerfd it is SystemClock.
func WakeClock() Clock { return &timerfdClock{} }

// timerfdClock is a one-shot CLOCK_MONOTONIC timerfd read through the
// netpoller, opened on the first Sleep and closed when Sleep sees stop.
type timerfdClock struct {
	f        *os.File
	fd       int
	failed   bool
	fallback SystemClock
	buf      [8]byte
}

func (c *timerfdClock) Now() time.Time { return time.Now() }

// Sleep arms the timer d from now and reads it; false, with the timer
// closed, once stop is closed (seen within one period).
func (c *timerfdClock) Sleep(d time.Duration, stop <-chan struct{}) bool {
	if c.failed || (c.f == nil && !c.open()) {
		return c.fallback.Sleep(d, stop)
	}
	select {
	case <-stop:
		c.close()
		return false
	default:
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(max(d, time.Microsecond)))}
	if err := unix.TimerfdSettime(c.fd, 0, &spec, nil); err != nil {
		c.close()
		c.failed = true
		return c.fallback.Sleep(d, stop)
	}
	// The deadline only guards against a timer that never fires.
	_ = c.f.SetReadDeadline(time.Now().Add(d + time.Second))
	if _, err := c.f.Read(c.buf[:]); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		c.close()
		c.failed = true
	}
	select {
	case <-stop:
		c.close()
		return false
	default:
		return true
	}
}

// open makes the timerfd; false (and SystemClock from then on) when
// there is none or the netpoller cannot wait on it.
func (c *timerfdClock) open() bool {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		c.failed = true
		return false
	}
	f := os.NewFile(uintptr(fd), "timerfd")
	if f.SetReadDeadline(time.Time{}) != nil { // not pollable
		f.Close()
		c.failed = true
		return false
	}
	c.f, c.fd = f, fd
	return true
}

func (c *timerfdClock) close() {
	if c.f != nil {
		c.f.Close()
		c.f = nil
	}
}

// AskShortSlice asks the kernel for a scheduler slice of d for every
// thread of the process (threads created later inherit it). On Linux
// 6.12 and later (EEVDF's custom slices) a SCHED_OTHER thread with a
// short slice preempts a CPU-bound task as soon as it wakes, instead of
// waiting out that task's slice (0.7-3 ms), so a socket read is
// timestamped closer to when its bytes came. It needs no privilege and
// changes neither the threads' share of the CPU nor their nice value;
// threads with another policy are left alone. It is best effort and
// silent: it returns how many threads now have the slice and how many
// there were (0 of n on a kernel without custom slices, which accepts
// the request and ignores it, or one that refuses it).
func AskShortSlice(d time.Duration) (set, threads int) {
	// A thread not yet asked may start a thread while the list is read,
	// which then has the old slice: read it again until a pass finds
	// every thread done.
	done := map[int]bool{}
	for range 5 {
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			break
		}
		fresh := false
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || done[tid] {
				continue
			}
			fresh = true
			done[tid] = true
			ok, gone := askSlice(tid, d)
			if !gone {
				threads++
			}
			if ok {
				set++
			}
		}
		if !fresh || set == 0 {
			break
		}
	}
	return set, threads
}

// askSlice sets thread tid's slice to d, keeping its policy (only
// SCHED_OTHER), nice value and reset-on-fork flag; ok when the kernel
// reports the slice back, gone when the thread has ended.
func askSlice(tid int, d time.Duration) (ok, gone bool) {
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil || attr.Policy != unix.SCHED_NORMAL {
		return false, errors.Is(err, unix.ESRCH)
	}
	want := uint64(d.Nanoseconds())
	if attr.Runtime != want {
		attr.Size = unix.SizeofSchedAttr
		attr.Runtime = want
		attr.Flags &= unix.SCHED_FLAG_RESET_ON_FORK
		if err := unix.SchedSetAttr(tid, attr, 0); err != nil {
			return false, errors.Is(err, unix.ESRCH)
		}
	}
	return threadSlice(tid) == d, false
}

// threadSlice is thread tid's scheduler slice as the kernel reports it
// (sched_getattr's sched_runtime for a fair thread, 6.12 and later); 0
// when unknown.
func threadSlice(tid int) time.Duration {
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil || attr.Policy != unix.SCHED_NORMAL {
		return 0
	}
	return time.Duration(attr.Runtime)
}
