//go:build !linux

package overload

import "time"

// WakeClock is the clock the run's timing probe sleeps on: SystemClock
// (Linux waits on a timerfd instead).
func WakeClock() Clock { return &SystemClock{} }

// AskShortSlice does nothing outside Linux: 0 of 0 threads.
func AskShortSlice(time.Duration) (set, threads int) { return 0, 0 }
