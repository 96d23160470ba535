package load

import (
	"math"
	"testing"
	"time"
)

// queue feeds n measured requests sent gap apart to a server that
// finishes one every service (FIFO, each done at most service after it
// was sent when the server is free), returning the tracker.
func queue(n int, gap, service time.Duration) *Tracker {
	tr := NewTracker(Settings{Rate: float64(time.Second) / float64(gap), Arrival: Constant})
	tr.KeepSentOrder()
	t0 := time.Unix(5000, 0)
	free := t0
	type done struct{ submit, first, end time.Time }
	var all []done
	for i := 0; i < n; i++ {
		submit := t0.Add(time.Duration(i) * gap)
		start := submit
		if free.After(start) {
			start = free
		}
		end := start.Add(service)
		free = end
		all = append(all, done{submit, end, end})
	}
	for j := len(all) - 1; j >= 0; j-- { // any order: the tracker sorts
		d := all[j]
		r := res(true, d.first.Sub(d.submit).Seconds(), d.end.Sub(d.submit).Seconds(), 1)
		r.Submit, r.Finish = d.submit, d.end
		tr.Begin()
		tr.Finish(r, NotHeld)
	}
	return tr
}

// completion_rate is the rate requests finished at: the offered rate
// when the server keeps up, the server's own when a queue grows; TTFT
// p50 of the last third against the first shows the queue.
func TestCompletionRateAndThirds(t *testing.T) {
	// 10 req/s offered, 50 ms of service: kept up with.
	tr := queue(150, 100*time.Millisecond, 50*time.Millisecond)
	b, _ := tr.Final(15, nil, nil)
	if b.CompletionRate == nil || math.Abs(*b.CompletionRate-150.0/14.9) > 1e-6 {
		t.Errorf("kept up: completion_rate %v, want 150/14.9 s", b.CompletionRate)
	}
	first, last := tr.TTFTThirds()
	if first == nil || last == nil || *first != 50 || *last != 50 {
		t.Errorf("kept up: thirds %v %v, want 50 and 50 ms", first, last)
	}
	// 48 req/s offered to a 37 req/s server: it completes at 37 req/s,
	// and the last third waits in a queue the first did not.
	tr = queue(150, time.Second/48, time.Second/37)
	b, _ = tr.Final(5, nil, nil)
	if b.CompletionRate == nil || math.Abs(*b.CompletionRate-37*150.0/149) > 0.01 {
		t.Errorf("growing queue: completion_rate %v, want about 37", b.CompletionRate)
	}
	if b.AchievedRate == nil || *b.AchievedRate < 48 {
		t.Errorf("achieved %v: the load was sent", b.AchievedRate)
	}
	first, last = tr.TTFTThirds()
	// Request i waits i x (1/37 - 1/48) s: about 180 ms at the first
	// third's median (i = 25), 800 ms at the last's (i = 125).
	if first == nil || last == nil || math.Abs(*first-180) > 5 || math.Abs(*last-800) > 5 {
		t.Errorf("growing queue: thirds %v -> %v, want about 180 -> 800 ms", deref(first), deref(last))
	}
	// Too few to tell.
	tr = queue(8, 100*time.Millisecond, 50*time.Millisecond)
	if f, l := tr.TTFTThirds(); f != nil || l != nil {
		t.Errorf("8 requests: thirds %v %v", f, l)
	}
	tr = queue(1, 100*time.Millisecond, 50*time.Millisecond)
	if b, _ := tr.Final(1, nil, nil); b.CompletionRate != nil {
		t.Errorf("one request: completion_rate %v", *b.CompletionRate)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
