//go:build linux

package overload

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestWakeClockIsATimerfd: the probe's clock on Linux waits on a timerfd
// (not a Go timer), never wakes before it was asked to, and closes the
// timer once stop is closed.
func TestWakeClockIsATimerfd(t *testing.T) {
	c, ok := WakeClock().(*timerfdClock)
	if !ok {
		t.Fatalf("WakeClock is %T, want the timerfd clock", WakeClock())
	}
	stop := make(chan struct{})
	for range 5 {
		t0 := c.Now()
		if !c.Sleep(time.Millisecond, stop) {
			t.Fatal("Sleep returned false before stop")
		}
		if d := c.Now().Sub(t0); d < time.Millisecond {
			t.Fatalf("woke after %v, before the 1 ms asked", d)
		}
	}
	if c.failed || c.f == nil {
		t.Fatalf("the clock fell back to Go timers (failed %v)", c.failed)
	}
	close(stop)
	if c.Sleep(time.Millisecond, stop) {
		t.Fatal("Sleep must return false once stop is closed")
	}
	if c.f != nil {
		t.Fatal("the timerfd is still open after stop")
	}
}

// TestAskShortSlice: every thread gets the short slice, threads made
// afterwards inherit it, and a thread's nice value is kept. A kernel
// without custom slices (before 6.12) reports none set.
func TestAskShortSlice(t *testing.T) {
	// A thread with nice 5 of its own, kept locked (and so discarded
	// when its goroutine ends) so no other test runs on it.
	niced := make(chan int)
	release := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		tid := unix.Gettid()
		if err := unix.Setpriority(unix.PRIO_PROCESS, tid, 5); err != nil {
			tid = -1
		}
		niced <- tid
		<-release
	}()
	tid := <-niced
	defer close(release)
	if tid < 0 {
		t.Fatal("cannot set a thread's nice value")
	}

	set, threads := AskShortSlice(ShortSlice)
	if threads == 0 {
		t.Fatal("no threads found in /proc/self/task")
	}
	if set == 0 {
		if attr, err := unix.SchedGetAttr(0, 0); err == nil && attr.Runtime == 0 {
			t.Skip("the kernel has no custom slices (before Linux 6.12)")
		}
		t.Fatalf("the slice was set on none of %d threads", threads)
	}
	if set != threads {
		t.Fatalf("slice set on %d of %d threads", set, threads)
	}
	if attr, err := unix.SchedGetAttr(tid, 0); err != nil || attr.Nice != 5 || attr.Runtime != uint64(ShortSlice) {
		t.Fatalf("niced thread after: %+v, %v; want nice 5 and the short slice", attr, err)
	}

	// New threads: more goroutines locked at once than the process had
	// threads, so some of them run on threads made now.
	n := threads + 4
	slices := make([]time.Duration, n)
	var ready, hold sync.WaitGroup
	ready.Add(n)
	hold.Add(1)
	var done sync.WaitGroup
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			slices[i] = threadSlice(unix.Gettid())
			ready.Done()
			hold.Wait()
		}()
	}
	ready.Wait()
	hold.Done()
	done.Wait()
	for i, s := range slices {
		if s != ShortSlice {
			t.Fatalf("thread %d of %d made afterwards has slice %v, want %v", i, n, s, ShortSlice)
		}
	}
}
