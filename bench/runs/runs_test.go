package runs_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/bench/sender"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)

// fixture writes the four kinds of folder the index must handle.
func fixture(t *testing.T) (dir string, paths map[string]string) {
	t.Helper()
	dir = t.TempDir()
	paths = map[string]string{
		"complete": runstest.Write(t, dir, runstest.Spec{Name: "done", Started: t0, Requests: 20, ReusedEvery: 2, Summary: true}),
		"interrupted": runstest.Write(t, dir, runstest.Spec{Name: "stopped", Started: t0.Add(time.Hour), Requests: 10,
			Summary: true, Interrupted: true, ExitCode: 130}),
		"crashed": runstest.Write(t, dir, runstest.Spec{Name: "killed", Started: t0.Add(2 * time.Hour), Requests: 10,
			Warmup: 2, FailEvery: 5, ReusedEvery: 2}),
		"corrupt": runstest.Write(t, dir, runstest.Spec{Name: "torn", Started: t0.Add(3 * time.Hour), Requests: 4, Corrupt: true}),
	}
	// Not run folders: skipped.
	if err := os.Mkdir(filepath.Join(dir, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, paths
}

func byName(rs []runs.Run) map[string]runs.Run {
	m := map[string]runs.Run{}
	for _, r := range rs {
		m[r.Name] = r
	}
	return m
}

func TestListKinds(t *testing.T) {
	dir, paths := fixture(t)
	rs, err := runs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 4 {
		t.Fatalf("listed %d runs, want 4: %+v", len(rs), rs)
	}
	// Newest first.
	if rs[0].Name != "torn" || rs[3].Name != "done" {
		t.Errorf("order: %s .. %s", rs[0].Name, rs[3].Name)
	}
	m := byName(rs)

	done := m["done"]
	if !done.Complete || done.Interrupted || done.Status() != runs.StatusOK {
		t.Errorf("complete run: %+v", done)
	}
	if done.ID != filepath.Base(paths["complete"]) || done.Workload != "long-doc-qa" || done.Model != "sim-model" ||
		done.EngineHost() != "127.0.0.1:8000" || done.TotalRequests != 20 {
		t.Errorf("complete run fields: %+v", done)
	}
	if done.HitRatio == nil || math.Abs(*done.HitRatio-0.4) > 1e-9 { // 10 reused of 800/1000, 10 cold
		t.Errorf("hit ratio %v, want 0.4", done.HitRatio)
	}
	if !done.StartedAt.Equal(t0) {
		t.Errorf("started %v, want %v", done.StartedAt, t0)
	}

	stopped := m["stopped"]
	if !stopped.Complete || !stopped.Interrupted || stopped.Status() != runs.StatusInterrupted {
		t.Errorf("interrupted run: %+v", stopped)
	}

	killed := m["killed"]
	if killed.Complete || killed.Status() != runs.StatusIncomplete || !killed.Interrupted {
		t.Errorf("crashed run: %+v", killed)
	}
	// 10 measured (warmups excluded), every 5th failing: 2 failures.
	if killed.TotalRequests != 10 || killed.FailedRequests != 2 {
		t.Errorf("crashed run counts %d/%d, want 10/2", killed.TotalRequests, killed.FailedRequests)
	}
	if killed.Workload != "long-doc-qa" || killed.Model != "sim-model" || !killed.StartedAt.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("crashed run identity: %+v", killed)
	}
	if killed.MeanTTFTms == nil || *killed.MeanTTFTms <= 0 || *killed.P99TTFTms < *killed.MeanTTFTms || killed.OutputThroughput <= 0 {
		t.Errorf("crashed run figures: %+v", killed)
	}

	torn := m["torn"]
	if torn.Complete || torn.Corrupt != 1 || torn.TotalRequests != 4 {
		t.Errorf("corrupt line: complete=%v corrupt=%d total=%d", torn.Complete, torn.Corrupt, torn.TotalRequests)
	}
}

// A folder without a summary is summarised exactly as the core would
// have: the same figures as the summary written from the same requests.
func TestSummariseMatchesWrittenSummary(t *testing.T) {
	dir := t.TempDir()
	spec := runstest.Spec{Name: "a", Started: t0, Requests: 50, Warmup: 3, FailEvery: 7, ReusedEvery: 3, Unverified: true, Summary: true}
	withSum := runstest.Write(t, dir, spec)
	spec.Summary, spec.Name = false, "b"
	without := runstest.Write(t, dir, spec)

	a, err := runs.Load(withSum)
	if err != nil {
		t.Fatal(err)
	}
	b, err := runs.Load(without)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Summary.Results, b.Summary.Results) {
		t.Errorf("results differ:\n%+v\n%+v", a.Summary.Results, b.Summary.Results)
	}
	if *a.Summary.Cache.HitRatio != *b.Summary.Cache.HitRatio || a.Summary.Cache.Unverified != b.Summary.Cache.Unverified {
		t.Errorf("cache differs: %+v %+v", a.Summary.Cache, b.Summary.Cache)
	}
	if b.Run.Complete || !a.Run.Complete {
		t.Errorf("complete flags: %v %v", a.Run.Complete, b.Run.Complete)
	}
	if string(b.Config) == "" || !strings.Contains(string(b.Config), `"workload": "long-doc-qa"`) {
		t.Errorf("config.json not loaded: %s", b.Config)
	}
}

// The list's quick figures of a folder without a summary are exactly the
// collector's (Load), for every mix of phases, failures and states.
func TestQuickListMatchesCollector(t *testing.T) {
	dir := t.TempDir()
	for i, spec := range []runstest.Spec{
		{Requests: 50, Warmup: 3, FailEvery: 7, ReusedEvery: 3, Unverified: true},
		{Requests: 1, FailEvery: 1},
		{Requests: 0, Warmup: 2},
		{Requests: 200, ReusedEvery: 2, Corrupt: true, BaseTTFTms: 33.3},
	} {
		spec.Name, spec.Started = fmt.Sprintf("q%d", i), t0.Add(time.Duration(i)*time.Hour)
		runstest.Write(t, dir, spec)
	}
	rs, err := runs.List(dir)
	if err != nil || len(rs) != 4 {
		t.Fatalf("list: %d %v", len(rs), err)
	}
	for _, r := range rs {
		d, err := runs.Load(r.Dir)
		if err != nil {
			t.Fatal(err)
		}
		l := d.Run
		if r.TotalRequests != l.TotalRequests || r.FailedRequests != l.FailedRequests || !reflect.DeepEqual(r.MeanTTFTms, l.MeanTTFTms) ||
			!reflect.DeepEqual(r.P99TTFTms, l.P99TTFTms) || r.OutputThroughput != l.OutputThroughput ||
			(r.HitRatio == nil) != (l.HitRatio == nil) || r.HitRatio != nil && *r.HitRatio != *l.HitRatio ||
			!r.StartedAt.Equal(l.StartedAt) || r.Name != l.Name || r.Workload != l.Workload || r.Model != l.Model ||
			r.Corrupt != l.Corrupt || r.Complete || l.Complete {
			t.Errorf("%s:\nlist %+v\nload %+v", r.Name, r, l)
		}
	}
}

func TestUnreadableSummaryFallsBackToLines(t *testing.T) {
	dir := t.TempDir()
	p := runstest.Write(t, dir, runstest.Spec{Started: t0, Requests: 5, Summary: true})
	if err := os.WriteFile(filepath.Join(p, record.SummaryFile), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err := runs.List(dir)
	if err != nil || len(rs) != 1 {
		t.Fatalf("list: %v %v", rs, err)
	}
	if rs[0].Complete || rs[0].Err == nil || rs[0].TotalRequests != 5 {
		t.Errorf("unreadable summary: %+v", rs[0])
	}
}

func TestListMissingDir(t *testing.T) {
	rs, err := runs.List(filepath.Join(t.TempDir(), "none"))
	if err != nil || len(rs) != 0 {
		t.Errorf("missing dir: %v %v", rs, err)
	}
}

func TestResolve(t *testing.T) {
	dir, paths := fixture(t)
	id := filepath.Base(paths["complete"])
	for _, tc := range []struct{ in, want string }{
		{id, paths["complete"]},
		{paths["crashed"], paths["crashed"]},
		{id[:len("20260301-1200")], paths["complete"]}, // unique prefix
	} {
		got, err := runs.Resolve(dir, tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"nope", filepath.Join(dir, "notes"), "2026", ""} {
		_, err := runs.Resolve(dir, in)
		if !errors.Is(err, runs.ErrNotFound) {
			t.Errorf("Resolve(%q) err = %v, want ErrNotFound", in, err)
		}
		if in != "" && !strings.Contains(err.Error(), in) {
			t.Errorf("Resolve(%q) error does not name it: %v", in, err)
		}
	}
}

func TestDeleteRefusesOtherDirs(t *testing.T) {
	dir, paths := fixture(t)
	if err := runs.Delete(filepath.Join(dir, "notes")); err == nil {
		t.Error("deleted a folder that is not a run")
	}
	if err := runs.Delete(paths["crashed"]); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(paths["crashed"]); !os.IsNotExist(err) {
		t.Errorf("run still there: %v", err)
	}
}

func TestIndexAndWindow(t *testing.T) {
	dir := t.TempDir()
	p := runstest.Write(t, dir, runstest.Spec{Started: t0, Requests: 30, Warmup: 2, FailEvery: 10, ReusedEvery: 2, Unverified: true, Corrupt: true})
	x, err := runs.BuildIndex(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if x.Len() != 32 || x.Corrupt != 1 {
		t.Fatalf("len %d corrupt %d, want 32 and 1", x.Len(), x.Corrupt)
	}
	want := map[runs.Filter]int{runs.All: 32, runs.Failed: 3}
	for f, n := range want {
		if got := x.Count(f); got != n {
			t.Errorf("Count(%v) = %d, want %d", f, got, n)
		}
	}
	if x.Count(runs.Cold)+x.Count(runs.Reused)+x.Count(runs.Unverified) != 32 {
		t.Error("states do not partition the requests")
	}
	sel := x.Select(runs.Failed)
	rows, err := x.Window(sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Successful || r.Error == nil || *r.Error != "http_503" {
			t.Errorf("failed filter returned %+v", r)
		}
	}
	rows, err = x.Window([]int32{0, 2, 31})
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].Phase != sender.PhaseWarmup || rows[1].RequestID != "req-0" || rows[2].RequestID != "req-29" {
		t.Errorf("window ids: %s %s %s", rows[0].RequestID, rows[1].RequestID, rows[2].RequestID)
	}
	if len(x.TTFTs) != 32-3 || x.TTFTs[0] > x.TTFTs[len(x.TTFTs)-1] {
		t.Errorf("ttfts: %d sorted=%v", len(x.TTFTs), x.TTFTs[0] <= x.TTFTs[len(x.TTFTs)-1])
	}
	if len(x.Points) != 29 || x.Points[0].T != 0 {
		t.Errorf("points: %d first %+v", len(x.Points), x.Points[0])
	}
}

// The chart sample stays bounded and spread over the whole run.
func TestIndexPointsBounded(t *testing.T) {
	dir := t.TempDir()
	n := runs.MaxPoints*2 + 100
	p := runstest.Write(t, dir, runstest.Spec{Started: t0, Requests: n})
	x, err := runs.BuildIndex(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Points) > runs.MaxPoints || len(x.Points) < runs.MaxPoints/4 {
		t.Errorf("%d points", len(x.Points))
	}
	if last := x.Points[len(x.Points)-1].T; last < 0.9*x.Span-1 {
		t.Errorf("sample ends at %.1fs of %.1fs", last, x.Span)
	}
	if len(x.TTFTs) != n {
		t.Errorf("ttfts %d, want %d", len(x.TTFTs), n)
	}
}

func TestHead(t *testing.T) {
	dir := t.TempDir()
	p := runstest.Write(t, dir, runstest.Spec{Started: t0, Requests: 30})
	rows, err := runs.Head(p, 10)
	if err != nil || len(rows) != 10 || rows[9].RequestID != "req-9" {
		t.Fatalf("head: %d %v", len(rows), err)
	}
}

// Recent is by start time, as the explorer lists runs, not by folder
// name: a renamed folder of the newest run is still the first.
func TestRecentByStartTime(t *testing.T) {
	dir := t.TempDir()
	runstest.Write(t, dir, runstest.Spec{Name: "older", Started: t0, Requests: 2, Summary: true})
	newer := runstest.Write(t, dir, runstest.Spec{Name: "newer", Started: t0.Add(time.Hour), Requests: 2, Summary: true})
	runstest.Write(t, dir, runstest.Spec{Name: "oldest", Started: t0.Add(-time.Hour), Requests: 2, Summary: true})
	if err := os.Rename(newer, filepath.Join(dir, "0-renamed")); err != nil {
		t.Fatal(err)
	}
	got, err := runs.Recent(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "newer" || got[1].Name != "older" {
		var names []string
		for _, r := range got {
			names = append(names, r.Name)
		}
		t.Fatalf("recent runs %v, want [newer older]", names)
	}
	if none, err := runs.Recent(filepath.Join(dir, "missing"), 5); err != nil || len(none) != 0 {
		t.Errorf("missing runs dir: %v, %v", none, err)
	}
}

// TestIndexSplitsWarmups: the measured TTFTs are the summary's requests,
// the warmup's are apart, and chart points say which they are.
func TestIndexSplitsWarmups(t *testing.T) {
	dir := t.TempDir()
	p := runstest.Write(t, dir, runstest.Spec{Started: t0, Requests: 30, FailEvery: 10, Warmup: 2, Summary: true})
	x, err := runs.BuildIndex(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.MeasuredTTFTs)+len(x.WarmupTTFTs) != len(x.TTFTs) || len(x.WarmupTTFTs) == 0 || len(x.MeasuredTTFTs) != 27 {
		t.Errorf("measured %d, warmup %d, all %d", len(x.MeasuredTTFTs), len(x.WarmupTTFTs), len(x.TTFTs))
	}
	warm := 0
	for _, pt := range x.Points {
		if pt.Warmup {
			warm++
		}
	}
	if warm != len(x.WarmupTTFTs) {
		t.Errorf("%d warmup points, %d warmup TTFTs", warm, len(x.WarmupTTFTs))
	}
	if x.CountMeasured(runs.All) != 30 || x.Count(runs.All) != 32 {
		t.Errorf("measured %d of %d", x.CountMeasured(runs.All), x.Count(runs.All))
	}
	d, err := runs.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if d.Run.Verdict != nil {
		t.Errorf("a summary without an expectation has the verdict %q", *d.Run.Verdict)
	}
}
