package results_test

import (
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/screens/results"
	"github.com/kvbench/kvbench/screens/screentest"
)

var (
	bigOnce sync.Once
	bigDir  string
)

// bigRun is a run of 100,000 requests, written once per test binary.
func bigRun(b *testing.B) string {
	bigOnce.Do(func() {
		parent, err := os.MkdirTemp("", "kvbench-big-")
		if err != nil {
			b.Fatal(err)
		}
		bigDir = runstest.Write(b, parent, runstest.Spec{Name: "big", Started: t0, Requests: 100_000, ReusedEvery: 3, FailEvery: 997, Summary: true})
	})
	return bigDir
}

// initCmds splits the detail's Init batch: summary, first page, index
// (in that order).
func initCmds(b *testing.B, d *results.Detail) []tea.Cmd {
	batch, ok := d.Init()().(tea.BatchMsg)
	if !ok || len(batch) != 3 {
		b.Fatalf("Init is not the three-command batch")
	}
	return batch
}

// BenchmarkOpenRun100kFirstPage is the time from opening a run of
// 100,000 requests to the first rendered page of its request table: the
// summary and the first lines are read; the index is still being built.
func BenchmarkOpenRun100kFirstPage(b *testing.B) {
	dir := bigRun(b)
	c := newCommon(dir, 140, 45)
	b.ReportAllocs()
	for b.Loop() {
		d := results.NewDetail(c, dir)
		cmds := initCmds(b, d)
		var m tea.Model = d
		m, _ = m.Update(cmds[0]())
		m, _ = m.Update(cmds[1]())
		m, _ = m.Update(screentest.Key("3"))
		if v := m.View(); !strings.Contains(v, "req-0 ") || !strings.Contains(v, "row 1 of 256") {
			b.Fatalf("first page:\n%s", v)
		}
	}
}

// BenchmarkOpenRun100kIndexed adds the background index and the page
// read through it: the time until every filter, the charts and the end
// of the table are available. It reports the heap the open run keeps.
func BenchmarkOpenRun100kIndexed(b *testing.B) {
	dir := bigRun(b)
	c := newCommon(dir, 140, 45)
	b.ReportAllocs()
	var keep tea.Model
	for b.Loop() {
		keep = nil
		d := results.NewDetail(c, dir)
		cmds := initCmds(b, d)
		var m tea.Model = d
		m, _ = m.Update(cmds[0]())
		m, _ = m.Update(cmds[1]())
		m, _ = m.Update(screentest.Key("3"))
		m, _ = drive(b, m, func() tea.Msg { return cmds[2]() })
		m, _ = press(b, m, "G")
		if v := m.View(); !strings.Contains(v, "req-99999 ") {
			b.Fatalf("last page:\n%s", v)
		}
		keep = m
	}
	var before, after runtime.MemStats
	keep = nil
	runtime.GC()
	runtime.ReadMemStats(&before)
	d := results.NewDetail(c, dir)
	cmds := initCmds(b, d)
	keep, _ = drive(b, d, tea.Batch(cmds...))
	keep, _ = press(b, keep, "3", "G", "2")
	_ = keep.View()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MB-kept")
	runtime.KeepAlive(keep)
}
