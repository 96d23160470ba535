package stats

import (
	"time"

	"github.com/kvbench/kvbench/bench/sender"
)

// AggregatePrefill is the aggregate prefill tok/s of requests sent
// together: their prompt tokens over the time from the first submit to the
// last first token. It is nil unless every request is cold with a prompt
// count and a first token, and for no requests.
func AggregatePrefill(rs []*sender.Result) *float64 {
	var a PrefillAggregate
	for _, r := range rs {
		a.Add(r)
	}
	return a.Value()
}

// PrefillAggregate accumulates AggregatePrefill one result at a time
// (Add each, then Value).
type PrefillAggregate struct {
	n          int
	notCold    bool
	prompt     int
	first      time.Time // earliest submit
	lastFirstT time.Time // latest first token
}

func (a *PrefillAggregate) Add(r *sender.Result) {
	a.n++
	if s := submitOf(r); a.first.IsZero() || s.Before(a.first) {
		a.first = s
	}
	ft, ok := firstTokenOf(r)
	if r.CacheState != sender.StateCold || r.PromptTokens == nil || !validCount(*r.PromptTokens) || !ok {
		a.notCold = true
		return
	}
	a.prompt = addCount(a.prompt, *r.PromptTokens)
	if ft.After(a.lastFirstT) {
		a.lastFirstT = ft
	}
}

func (a *PrefillAggregate) Value() *float64 {
	if a.n == 0 || a.notCold {
		return nil
	}
	span := a.lastFirstT.Sub(a.first).Seconds()
	if span <= 0 {
		return nil
	}
	return ptr(float64(a.prompt) / span)
}

// The instants of a result: the monotonic ones the sender keeps when
// present, else the Unix-second floats of the record (results read back
// from requests.jsonl).

func submitOf(r *sender.Result) time.Time {
	if !r.Submit.IsZero() {
		return r.Submit
	}
	return unixTime(r.SubmitTime)
}

func finishOf(r *sender.Result) time.Time {
	if !r.Finish.IsZero() {
		return r.Finish
	}
	return unixTime(r.FinishTime)
}

func firstTokenOf(r *sender.Result) (time.Time, bool) {
	if !r.FirstToken.IsZero() {
		return r.FirstToken, true
	}
	if r.FirstTokenTime != nil {
		return unixTime(*r.FirstTokenTime), true
	}
	return time.Time{}, false
}

func unixTime(s float64) time.Time {
	sec := int64(s)
	if float64(sec) > s {
		sec--
	}
	return time.Unix(sec, int64((s-float64(sec))*1e9))
}
