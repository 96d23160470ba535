package app

import (
	"testing"

	"github.com/kvbench/kvbench/screens/run"
)

// BenchmarkRunScreenFrame is the cost of one message of the live run
// screen at 140x45: a new snapshot, then the frame, chrome included.
func BenchmarkRunScreenFrame(b *testing.B) {
	c := testCommon("/runs", "/cfg")
	s := run.NewFromSource(c, &fakeSource{}, runInfo())
	m := sized(c, s, 140, 45)
	s.Feed(liveSnapshot(), liveEvents()...)
	snap := liveSnapshot()
	b.ReportAllocs()
	for b.Loop() {
		snap.Done++
		s.Feed(snap)
		_ = m.View()
	}
}
