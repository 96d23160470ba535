package bench

import (
	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/stats"
)

// judgeRun completes a summary as a run's end and a merge's end both do:
// the load block judged over the whole run (overloads are the client's
// overload findings; undelivered the reasons only the caller knows, such
// as a shard that did not deliver its share), its goodput, and the
// headline from the finished figures.
func judgeRun(sum *record.Summary, blocks stats.Blocks, tr *load.Tracker, hold *load.HoldBack, overloads, undelivered []string) {
	lb, goodput := tr.Final(blocks.Results.ElapsedTime, hold, overloads)
	lb.DegradedReasons = append(lb.DegradedReasons, undelivered...)
	lb.Delivered = len(lb.DegradedReasons) == 0
	sum.Load, sum.Goodput = &lb, goodput
	sum.Headline = record.NewHeadline(sum, blocks.Speedup)
}
