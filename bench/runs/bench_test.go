package runs_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
)

// Generated folders are shared by every run of a benchmark function (b.N
// ramps call it several times) and removed at the end.
var (
	genMu   sync.Mutex
	genDirs = map[string]string{}
	genAll  []string
)

func generated(b *testing.B, name string, fill func(dir string)) string {
	b.Helper()
	genMu.Lock()
	defer genMu.Unlock()
	if d, ok := genDirs[name]; ok {
		return d
	}
	d, err := os.MkdirTemp("", "kvbench-"+name+"-")
	if err != nil {
		b.Fatal(err)
	}
	genAll = append(genAll, d)
	fill(d)
	genDirs[name] = d
	return d
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range genAll {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// runs1000 is a runs directory of 1000 finished runs and 20 crashed ones
// (no summary), each of 20 requests.
func runs1000(b *testing.B) string {
	return generated(b, "runs1000", func(dir string) {
		for i := range 1020 {
			runstest.Write(b, dir, runstest.Spec{
				Name: fmt.Sprintf("r%d", i), Started: t0.Add(time.Duration(i) * time.Minute),
				Requests: 20, ReusedEvery: 2, Summary: i < 1000,
			})
		}
	})
}

// BenchmarkList1000 lists 1000 run folders with a summary plus 20
// crashed ones summarised from their lines.
func BenchmarkList1000(b *testing.B) {
	dir := runs1000(b)
	b.ReportAllocs()
	for b.Loop() {
		rs, err := runs.List(dir)
		if err != nil || len(rs) != 1020 {
			b.Fatalf("%d runs, %v", len(rs), err)
		}
	}
}

func run100k(b *testing.B) string {
	parent := generated(b, "run100k", func(dir string) {
		runstest.Write(b, dir, runstest.Spec{Name: "big", Started: t0, Requests: 100_000, ReusedEvery: 3, FailEvery: 997, Summary: true})
	})
	rs, err := runs.List(parent)
	if err != nil || len(rs) != 1 {
		b.Fatal(err)
	}
	return rs[0].Dir
}

// BenchmarkIndex100k scans a run of 100,000 requests once: what the
// detail view does in the background to page, filter and chart. It
// reports the heap the index keeps.
func BenchmarkIndex100k(b *testing.B) {
	dir := run100k(b)
	b.ReportAllocs()
	var x *runs.Index
	for b.Loop() {
		var err error
		if x, err = runs.BuildIndex(context.Background(), dir); err != nil || x.Len() != 100_000 {
			b.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	x = nil
	runtime.GC()
	runtime.ReadMemStats(&before)
	x, _ = runs.BuildIndex(context.Background(), dir)
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MB-kept")
	runtime.KeepAlive(x)
}

// BenchmarkWindow100k reads one screenful (40 rows) from the end of a
// 100,000-request run through the index.
func BenchmarkWindow100k(b *testing.B) {
	dir := run100k(b)
	x, err := runs.BuildIndex(context.Background(), dir)
	if err != nil {
		b.Fatal(err)
	}
	sel := x.Select(runs.All)
	lines := sel[len(sel)-40:]
	b.ReportAllocs()
	for b.Loop() {
		if rows, err := x.Window(lines); err != nil || len(rows) != 40 {
			b.Fatal(err)
		}
	}
}

// BenchmarkListIncomplete100k lists a folder whose run of 100,000
// requests has no summary (killed): it is summarised from its lines.
func BenchmarkListIncomplete100k(b *testing.B) {
	dir := generated(b, "crashed100k", func(dir string) {
		runstest.Write(b, dir, runstest.Spec{Name: "crashed", Started: t0, Requests: 100_000, ReusedEvery: 3, FailEvery: 997})
	})
	b.ReportAllocs()
	for b.Loop() {
		rs, err := runs.List(dir)
		if err != nil || len(rs) != 1 || rs[0].TotalRequests != 100_000 || rs[0].Complete {
			b.Fatalf("%+v %v", rs, err)
		}
	}
}
