package sim

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// clock is where every modelled delay goes, so tests can run the model on
// virtual time.
type clock interface {
	Now() time.Time
	// SleepUntil returns at t, or early with ctx's error.
	SleepUntil(ctx context.Context, t time.Time) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// scheduler admits at most maxSeqs requests at a time, in arrival order,
// and owns the prefill lane: the engine prefills one request at a time, so
// prefills queue behind each other even when sequence slots are free.
type scheduler struct {
	mu         sync.Mutex
	maxSeqs    int
	maxWaiting int  // 0 = unbounded
	unlimited  bool // measuring and zero-latency modes admit everything at once
	running    int
	waiting    list.List // of *ticket
	laneFree   time.Time
	onChange   func(running, waiting int) // called with mu held
}

type ticket struct {
	ready    chan struct{}
	admitted bool
	elem     *list.Element
}

// join queues a request. It returns nil when the waiting queue is full.
func (q *scheduler) join() *ticket {
	q.mu.Lock()
	defer q.mu.Unlock()
	t := &ticket{ready: make(chan struct{})}
	if q.unlimited || (q.running < q.maxSeqs && q.waiting.Len() == 0) {
		q.admitLocked(t)
		return t
	}
	if q.maxWaiting > 0 && q.waiting.Len() >= q.maxWaiting {
		return nil
	}
	t.elem = q.waiting.PushBack(t)
	q.changed()
	return t
}

func (q *scheduler) admitLocked(t *ticket) {
	t.admitted = true
	q.running++
	close(t.ready)
	q.changed()
}

func (q *scheduler) changed() {
	if q.onChange != nil {
		q.onChange(q.running, q.waiting.Len())
	}
}

// wait blocks until t is admitted. On ctx's end it leaves the queue (or
// gives the slot back if it was admitted meanwhile) and returns the error.
func (q *scheduler) wait(ctx context.Context, t *ticket) error {
	select {
	case <-t.ready:
		return nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	if t.admitted {
		q.mu.Unlock()
		q.leave()
		return ctx.Err()
	}
	q.waiting.Remove(t.elem)
	q.changed()
	q.mu.Unlock()
	return ctx.Err()
}

// leave gives an admitted request's slot to the first waiting one.
func (q *scheduler) leave() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.running--
	for q.waiting.Len() > 0 && (q.unlimited || q.running < q.maxSeqs) {
		t := q.waiting.Remove(q.waiting.Front()).(*ticket)
		t.elem = nil
		q.admitLocked(t)
	}
	q.changed()
}

// numRunning is the batch size a decode step sees.
func (q *scheduler) numRunning() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running
}

// reservePrefill books the prefill lane for d from now on and returns when
// that prefill ends.
func (q *scheduler) reservePrefill(now time.Time, d time.Duration) time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	start := now
	if q.laneFree.After(start) {
		start = q.laneFree
	}
	q.laneFree = start.Add(d)
	return q.laneFree
}
