// Package runs is the index of a runs directory (spec/record.md): it lists
// the run folders with the figures the explorer shows, opens one run with
// its whole summary, summarises a folder that has no summary (a crash or a
// kill -9) from its requests.jsonl, pages through a run's requests, and
// compares two runs. It reads only; it imports no UI package.
package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/stats"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/secret"
	"github.com/kvbench/kvbench/internal/textclean"
)

// Status of a run folder.
type Status string

const (
	// StatusOK: the summary is written and every measured request succeeded.
	StatusOK Status = "ok"
	// StatusFailed: the summary is written with exit code 1 (a measured
	// request failed, or a probe did not qualify).
	StatusFailed Status = "failed"
	// StatusInterrupted: the summary is written and marked interrupted.
	StatusInterrupted Status = "interrupted"
	// StatusIncomplete: there is no summary and no process holds the
	// folder's lock (it crashed or was killed); the figures come from
	// requests.jsonl.
	StatusIncomplete Status = "incomplete"
	// StatusRunning: a live process holds the folder's lock
	// (record.LockFile): the run is still being written.
	StatusRunning Status = "running"
)

// Run is one run folder as the explorer lists it. Its text is cleaned
// where it is read (textclean): the folder name, the names, the model
// and the notes can be shown as they are. Dir is the path as it is on
// disk, for opening the folder; shown, it is cleaned too (ShownDir).
type Run struct {
	ID  string // the folder name (FolderID)
	Dir string

	// Name is the display name: the one given in the explorer
	// (annotations.json), else the one the run was recorded with
	// (RecordedName). Note is the note given in the explorer.
	Name, Workload, Model, EngineURL string
	RecordedName, Note               string
	StartedAt                        time.Time // zero when unknown

	TotalRequests, FailedRequests int
	SuccessfulRequests            int
	MeanTTFTms, P99TTFTms         *float64 // nil when no request had a first token
	OutputThroughput              float64
	HitRatio                      *float64

	// Interrupted is the summary's flag; a folder without a summary is
	// interrupted too (it did not finish).
	Interrupted bool
	// Complete is false for a folder without a summary.
	Complete bool
	// Running is set while a live process holds the folder's lock: the
	// run is in progress (its figures are those recorded so far), and
	// the folder is not to be deleted.
	Running  bool
	ExitCode int
	// Corrupt counts the lines of requests.jsonl that were skipped; only
	// known for a folder summarised from its lines.
	Corrupt int
	// Err is why the summary could not be read, when a summary file exists
	// but is unreadable (the run is then summarised from its lines).
	Err error
	// Shards is how many shard folders a merged run was made of (kvbench
	// merge), 0 for the run of one process; Partial says some were
	// missing; StartSkewMs is the largest start skew over them.
	Shards      int
	Partial     bool
	StartSkewMs *float64
	// Delivered is the load block's verdict, nil when unknown (no summary,
	// or one written before the load block); DegradedReasons say why not.
	Delivered       *bool
	DegradedReasons []string
	// Verdict is the workload's verdict on its expectation (met, not_met,
	// unknown), nil when the summary has none.
	Verdict *string

	// Sweep is set when the row is a sweep folder (ListSweeps): its
	// cells are the sweep's runs, the figures above their totals.
	Sweep *Sweep
	// Series is set when the row is a series folder (ListSeries): the
	// request counts are its runs' totals, the figures their medians.
	Series *Series
}

// ShardNote says what a merged run was made of ("3 shards", "2 shards,
// partial"); "" for the run of one process.
func (r *Run) ShardNote() string {
	if r.Shards == 0 {
		return ""
	}
	note := fmt.Sprintf("%d shards", r.Shards)
	if r.Shards == 1 {
		note = "1 shard"
	}
	if r.Partial {
		note += ", partial"
	}
	return note
}

// LoadNote is a short mark for a run that did not deliver the load it
// claims, "" otherwise.
func (r *Run) LoadNote() string {
	if r.Delivered == nil || *r.Delivered {
		return ""
	}
	return "load not delivered"
}

// Status is what the explorer shows in its status column.
func (r *Run) Status() Status {
	switch {
	case r.Running:
		return StatusRunning
	case !r.Complete:
		return StatusIncomplete
	case r.Interrupted:
		return StatusInterrupted
	case r.ExitCode != 0:
		return StatusFailed
	}
	return StatusOK
}

// ShownDir is Dir as text to show: a folder name can hold anything.
func (r *Run) ShownDir() string { return textclean.Line(r.Dir) }

// FolderID is the id of the run (or sweep) folder dir: its name, cleaned
// for one line (textclean.Line). A folder name is text from outside.
func FolderID(dir string) string { return textclean.Line(filepath.Base(dir)) }

// EngineHost is the engine URL's host:port ("builtin" kept as is).
func (r *Run) EngineHost() string { return engineHost(r.EngineURL) }

func engineHost(s string) string {
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return s
	}
	return u.Host
}

// isRunDir reports whether dir holds any file of a run record.
func isRunDir(dir string) bool {
	for _, f := range []string{record.SummaryFile, record.RequestsFile, record.ConfigFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

// Recent is the newest n runs of runsDir, in List's order (by start
// time): home's recent runs and the explorer's first rows are the same
// runs.
func Recent(runsDir string, n int) ([]Run, error) {
	all, err := List(runsDir)
	if len(all) > n {
		all = all[:n]
	}
	return all, err
}

// List reads every run folder of runsDir, newest first. A missing runsDir
// is an empty list. Folders that hold no run record file are skipped. Per
// folder only bench_summary.json is read; a folder without one is
// summarised from its requests.jsonl.
func List(runsDir string) ([]Run, error) {
	entries, err := os.ReadDir(runsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			dirs = append(dirs, e.Name())
		}
	}
	out := make([]*Run, len(dirs))
	// Reading summaries is I/O bound: a few workers hide the latency of
	// each open without holding more than one file per worker.
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(len(dirs), max(4, runtime.GOMAXPROCS(0))) {
		wg.Go(func() {
			for i := range work {
				out[i] = readRun(filepath.Join(runsDir, dirs[i]))
			}
		})
	}
	for i := range dirs {
		work <- i
	}
	close(work)
	wg.Wait()

	runs := make([]Run, 0, len(out))
	for _, r := range out {
		if r != nil {
			runs = append(runs, *r)
		}
	}
	sortNewest(runs)
	return runs, nil
}

// sortNewest orders rows newest first, then by id, descending.
func sortNewest(rows []Run) {
	sort.SliceStable(rows, func(i, j int) bool {
		if !rows[i].StartedAt.Equal(rows[j].StartedAt) {
			return rows[i].StartedAt.After(rows[j].StartedAt)
		}
		return rows[i].ID > rows[j].ID
	})
}

// Read reads one run folder as List would; an error when dir is not a run
// folder.
func Read(dir string) (*Run, error) {
	if r := readRun(dir); r != nil {
		return r, nil
	}
	return nil, fmt.Errorf("%s: not a run folder (no %s, %s or %s)", dir, record.SummaryFile, record.RequestsFile, record.ConfigFile)
}

// readRecord is nil when dir holds no run record.
func readRecord(dir string) *Run {
	s, err := record.ReadSummary(dir)
	if err == nil {
		r := fromSummary(dir, s)
		return r.markRunning()
	}
	if !isRunDir(dir) {
		return nil
	}
	r, lerr := quickRun(dir)
	if lerr != nil {
		r = &Run{ID: FolderID(dir), Dir: dir, Interrupted: true, Err: lerr}
		return r.markRunning()
	}
	if !errors.Is(err, fs.ErrNotExist) {
		r.Err = err
	}
	return r.markRunning()
}

// quickRun is the list's row of a folder without a summary: the figures
// the list shows, from the folder's summary cache or from the one pass
// that fills it (summaryOf). They are the collector's figures (Load),
// computed the same way.
func quickRun(dir string) (*Run, error) {
	c, err := summaryOf(dir, false)
	if err != nil {
		return nil, err
	}
	return c.Row.run(dir), nil
}

// quickRow reads dir's lines once, skimming, for the list's figures.
func quickRow(dir string) (cachedRow, error) {
	var q quickFigures
	corrupt, err := scanRequests(context.Background(), dir, func(_ record.LineAt, l *sender.Result) { q.add(l) })
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return cachedRow{}, err
	}
	return q.row(dir, readConfig(dir), corrupt), nil
}

// quickFigures gathers a folder's list row from its lines, one at a
// time, keeping nothing but the TTFTs (8 bytes a request).
type quickFigures struct {
	done, failed               int
	first, last                time.Time
	firstSubmit                float64
	ttfts                      []float64
	sumTTFT                    float64
	outTokens                  int
	hitPrompt, hitCached, hitN int
}

func (q *quickFigures) add(l *sender.Result) {
	if l.SubmitTime > 0 && (q.firstSubmit == 0 || l.SubmitTime < q.firstSubmit) {
		q.firstSubmit = l.SubmitTime
	}
	if l.Phase == sender.PhaseWarmup || l.Phase == sender.PhaseReference {
		return
	}
	submit, finish := unixTime(l.SubmitTime), unixTime(l.FinishTime)
	q.done++
	if q.first.IsZero() || submit.Before(q.first) {
		q.first = submit
	}
	if finish.After(q.last) {
		q.last = finish
	}
	if p, k := l.PromptTokens, l.CachedTokens; p != nil && k != nil && *p >= 0 && *k >= 0 && *k <= *p {
		q.hitPrompt += *p
		q.hitCached += *k
		q.hitN++
	}
	if !l.Successful {
		q.failed++
		return
	}
	if l.TTFT != nil {
		ms := finite(*l.TTFT * 1000)
		q.ttfts = append(q.ttfts, ms)
		q.sumTTFT += ms
	}
	if c := l.CompletionTokens; c != nil && *c > 0 {
		q.outTokens += *c
	} else {
		q.outTokens += l.Chunks
	}
}

// row is the list's figures of the lines added, with the folder's
// identity from its config.json (cfg) or its name.
func (q *quickFigures) row(dir string, cfg json.RawMessage, corrupt int) cachedRow {
	id := configIdentity(cfg)
	if id.Workload == "" {
		id.Workload = workloadFromFolder(filepath.Base(dir))
	}
	r := cachedRow{
		Workload: id.Workload, Model: id.Model,
		TotalRequests: q.done, FailedRequests: q.failed, Corrupt: corrupt,
	}
	r.StartedAt, r.Name = incompleteStart(dir, id.Workload, q.firstSubmit)
	if len(q.ttfts) > 0 {
		mean := q.sumTTFT / float64(len(q.ttfts))
		slices.Sort(q.ttfts)
		p99 := stats.Linear(q.ttfts, 99)
		r.MeanTTFTms, r.P99TTFTms = &mean, &p99
	}
	if q.done > 0 {
		if el := max(q.last.Sub(q.first).Seconds(), 0); el > 0 {
			r.OutputThroughput = float64(q.outTokens) / el
		}
	}
	if q.hitN > 0 && q.hitPrompt > 0 {
		h := float64(q.hitCached) / float64(q.hitPrompt)
		r.HitRatio = &h
	}
	return r
}

// unixTime is the instant of a record's Unix-seconds float, as the
// collector reads it.
func unixTime(s float64) time.Time {
	sec := int64(s)
	if float64(sec) > s {
		sec--
	}
	return time.Unix(sec, int64((s-float64(sec))*1e9))
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// readConfig is config.json (its text cleaned), nil when absent or not
// JSON.
func readConfig(dir string) json.RawMessage {
	b, err := record.ReadJSON(filepath.Join(dir, record.ConfigFile), 16<<20)
	if err != nil || !json.Valid(b) {
		return nil
	}
	return b
}

// incompleteStart is when a run without a summary started and its name:
// from the folder name, else its first submit, else the folder's time.
// The name is cleaned (it is part of a folder name).
func incompleteStart(dir, workload string, firstSubmit float64) (time.Time, string) {
	started, name := parseFolderName(filepath.Base(dir), workload)
	name = textclean.Line(name)
	if started.IsZero() && firstSubmit > 0 {
		started = unixTime(firstSubmit)
	}
	if started.IsZero() {
		if fi, err := os.Stat(dir); err == nil {
			started = fi.ModTime()
		}
	}
	return started, name
}

func fromSummary(dir string, s *record.Summary) Run {
	r := Run{
		ID:                 FolderID(dir),
		Dir:                dir,
		Name:               textclean.Line(s.Run.Name),
		StartedAt:          s.Run.StartedTime(),
		TotalRequests:      s.Results.TotalRequests,
		FailedRequests:     s.Results.FailedRequests,
		SuccessfulRequests: s.Results.SuccessfulRequests,
		MeanTTFTms:         s.Results.MeanTTFTms,
		P99TTFTms:          s.Results.P99TTFTms,
		OutputThroughput:   s.Results.OutputThroughput,
		HitRatio:           s.Cache.HitRatio,
		Interrupted:        s.Run.Interrupted,
		ExitCode:           s.Run.ExitCode,
		Complete:           true,
		Shards:             len(s.Shards),
		Partial:            s.Partial,
	}
	if len(s.Shards) > 0 {
		r.StartSkewMs = s.StartSkewMs
	}
	c := configIdentity(s.Config)
	r.Workload, r.Model, r.EngineURL = c.Workload, c.Model, secret.Strip(c.EngineURL)
	if s.Load != nil {
		d := s.Load.Delivered
		r.Delivered = &d
		for _, why := range s.Load.DegradedReasons {
			r.DegradedReasons = append(r.DegradedReasons, textclean.Line(why))
		}
	}
	switch {
	case s.Headline != nil && s.Headline.Verdict != nil:
		v := *s.Headline.Verdict
		r.Verdict = &v
	default:
		if e := record.WorkloadExpectation(s); e != nil {
			v := e.Verdict
			r.Verdict = &v
		}
	}
	return r
}

type identity struct {
	Workload  string `json:"workload"`
	Model     string `json:"model"`
	EngineURL string `json:"engine_url"`
}

// configIdentity reads the three keys the list shows from a config block
// in one decode (record.Field would decode the block once per key), each
// on one line.
func configIdentity(v any) identity {
	id := rawIdentity(v)
	id.Workload, id.Model, id.EngineURL = textclean.Line(id.Workload), textclean.Line(id.Model), textclean.Line(id.EngineURL)
	return id
}

func rawIdentity(v any) identity {
	var id identity
	switch t := v.(type) {
	case json.RawMessage:
		json.Unmarshal(t, &id)
	case map[string]any:
		id.Workload, _ = t["workload"].(string)
		id.Model, _ = t["model"].(string)
		id.EngineURL, _ = t["engine_url"].(string)
	case nil:
	default:
		if b, err := json.Marshal(t); err == nil {
			json.Unmarshal(b, &id)
		}
	}
	return id
}

// Detail is one run opened in full.
type Detail struct {
	Run Run
	// Summary is bench_summary.json, or for an incomplete run the blocks
	// computed from requests.jsonl (ITL and round-gap figures are then
	// null: the per-chunk gaps are not in the record).
	Summary *record.Summary
	// Config is config.json as written (nil when absent).
	Config json.RawMessage
	// Corrupt counts skipped lines of requests.jsonl (incomplete runs).
	Corrupt int
}

// Load opens one run folder with its whole summary.
func Load(dir string) (*Detail, error) {
	s, err := record.ReadSummary(dir)
	var d *Detail
	switch {
	case err == nil:
		d = &Detail{Run: fromSummary(dir, s), Summary: s}
	case !isRunDir(dir):
		return nil, fmt.Errorf("%s: not a run folder", dir)
	default:
		d, err = summariseDir(dir)
		if err != nil {
			return nil, err
		}
		d.Run = fromSummary(dir, d.Summary)
		d.Run.Complete = false
		d.Run.Corrupt = d.Corrupt
	}
	d.Run.markRunning()
	d.Config = readConfig(dir)
	d.Run.annotate()
	return d, nil
}

// summariseDir is the summary of a folder without one: from its summary
// cache, or from the one pass over its requests.jsonl that fills the
// cache (summaryOf).
func summariseDir(dir string) (*Detail, error) {
	c, err := summaryOf(dir, true)
	if err != nil {
		return nil, err
	}
	return &Detail{Summary: c.summary, Config: readConfig(dir), Corrupt: c.Row.Corrupt}, nil
}

// summarise reads dir's requests.jsonl once, streamed through the core's
// own collector so the figures mean what they mean in a written summary,
// and through the list's figures (quickFigures).
func summarise(dir string) (*record.Summary, cachedRow, error) {
	id := FolderID(dir)
	cfg := readConfig(dir)
	c := stats.New()
	var q quickFigures
	corrupt, err := record.ReadRequests(dir, func(r *sender.Result) error {
		c.Add(r)
		q.add(r)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, cachedRow{}, err
	}
	b := c.Final(stats.ClientInfo{})
	s := &record.Summary{
		SchemaVersion: record.SchemaVersion,
		Results:       b.Results,
		Cache:         b.Cache,
		Latency:       b.Latency,
		Client:        b.Client,
	}
	ci := configIdentity(cfg)
	// The config block is config.json (no URL: it never holds one).
	s.Config = map[string]any{"workload": ci.Workload, "model": ci.Model}
	if cfg != nil {
		s.Config = cfg
	}
	started, name := incompleteStart(dir, ci.Workload, q.firstSubmit)
	s.Run = record.RunInfo{ID: id, Name: name, StartedAt: started.UTC().Format(time.RFC3339Nano), Interrupted: true}
	return s, q.row(dir, cfg, corrupt), nil
}

// parseFolderName reads <YYYYMMDD-HHMMSS>-<workload>[-<name>] (local
// time, as record names folders). The name is what follows the sanitised
// workload; a numeric suffix added for a taken name stays part of it.
// workloadFromFolder reads the workload from a folder name
// (YYYYMMDD-HHMMSS-<workload>[-<name>]) when config.json is missing.
func workloadFromFolder(id string) string {
	const stamp = len("20060102-150405-")
	for _, w := range config.Workloads {
		if len(id) > stamp && strings.HasPrefix(id[stamp:], w) {
			return w
		}
	}
	return ""
}

func parseFolderName(id, workload string) (time.Time, string) {
	const layout = "20060102-150405"
	if len(id) < len(layout) {
		return time.Time{}, ""
	}
	t, err := time.ParseInLocation(layout, id[:len(layout)], time.Local)
	if err != nil {
		return time.Time{}, ""
	}
	rest := strings.TrimPrefix(id[len(layout):], "-")
	if w := record.Sanitize(workload); w != "" && strings.HasPrefix(rest, w) {
		rest = strings.TrimPrefix(strings.TrimPrefix(rest, w), "-")
	} else {
		rest = ""
	}
	return t, rest
}

// ErrNotFound is what Resolve's errors are (errors.Is) when the run does
// not exist.
var ErrNotFound = errors.New("run not found")

// notFound is a Resolve error: its message names the run, and it is
// ErrNotFound.
type notFound struct{ msg string }

func (e *notFound) Error() string        { return e.msg }
func (e *notFound) Is(target error) bool { return target == ErrNotFound }

func notFoundf(format string, args ...any) error {
	return &notFound{msg: fmt.Sprintf(format, args...)}
}

// Resolve finds a run named by id (a folder name in runsDir, or a unique
// prefix of one, as FolderID shows it or as it is on disk) or by path.
// Its errors name the run and are ErrNotFound.
func Resolve(runsDir, idOrPath string) (string, error) {
	if idOrPath == "" {
		return "", notFoundf("empty run id")
	}
	isPath := strings.ContainsRune(idOrPath, os.PathSeparator) || strings.ContainsRune(idOrPath, '/')
	if !isPath {
		dir := filepath.Join(runsDir, idOrPath)
		if isRunDir(dir) {
			return dir, nil
		}
	}
	if fi, err := os.Stat(idOrPath); err == nil && fi.IsDir() {
		if isRunDir(idOrPath) {
			return idOrPath, nil
		}
		return "", notFoundf("%s is not a run folder (no %s, %s or %s)", idOrPath, record.SummaryFile, record.RequestsFile, record.ConfigFile)
	}
	if !isPath {
		entries, _ := os.ReadDir(runsDir)
		var hits []string
		var shown []string
		for _, e := range entries {
			id := textclean.Line(e.Name())
			if e.IsDir() && (strings.HasPrefix(e.Name(), idOrPath) || strings.HasPrefix(id, idOrPath)) && isRunDir(filepath.Join(runsDir, e.Name())) {
				hits, shown = append(hits, e.Name()), append(shown, id)
			}
		}
		switch len(hits) {
		case 1:
			return filepath.Join(runsDir, hits[0]), nil
		case 0:
		default:
			return "", notFoundf("run %q is ambiguous in %s: %s", idOrPath, textclean.Line(runsDir), strings.Join(shown, ", "))
		}
		return "", notFoundf("no run %q in %s", idOrPath, runsDir)
	}
	return "", notFoundf("no run folder %s", idOrPath)
}

// Delete removes a run folder. It refuses a directory that is not a run
// folder, so a wrong path cannot remove anything else, and a run in
// progress (ErrRunning).
func Delete(dir string) error {
	if !isRunDir(dir) {
		return fmt.Errorf("delete %s: not a run folder", dir)
	}
	if err := refuseRunning(dir); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("delete run: %w", err)
	}
	return nil
}
