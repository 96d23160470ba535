package bench

import (
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/kvbench/kvbench/internal/errs"
	"hash/fnv"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/stats"
	"github.com/kvbench/kvbench/bench/workload"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/textclean"
)

// MergeOptions say which shard folders to merge and where the merged run
// goes.
type MergeOptions struct {
	Dirs []string
	// OutputDir is where the merged run folder is created; "" is the runs
	// directory.
	OutputDir string
	// Name labels the merged run; "" keeps the shards' run name.
	Name string
	// AllowPartial merges a set with missing shards (marked partial).
	AllowPartial bool
	// Now names the merged folder; nil is time.Now.
	Now func() time.Time
	// Logf receives warnings (a shard without a summary, torn lines).
	Logf func(format string, args ...any)
}

// Merged is the result of a merge.
type Merged struct {
	Dir      string
	Summary  *record.Summary
	Sections []report.Section // the workload's rows, for the text summary
	Reasons  []string
}

// maxRecordLine is the longest requests.jsonl line a reader accepts (the
// SSE line limit); a longer one is a torn tail.
const maxRecordLine = sender.DefaultMaxLineBytes

// maxConfigBytes bounds a config.json or summary read during a merge.
const maxConfigBytes = 16 << 20

// shardFolder is one folder given to merge.
type shardFolder struct {
	dir, id string
	index   int
	count   int
	startAt string
	runKey  string
	keys    []string                   // config.json keys in order
	values  map[string]json.RawMessage // compacted values; "shard" without its index
	summary *record.Summary            // nil when the shard wrote none

	file    *os.File
	lines   shardLines // its request lines, by submit time
	info    record.ShardInfo
	corrupt int
}

// indexEntry locates one request line of a shard: merged lines are
// ordered by submit time, then shard, then position. id is a hash of
// the line's request id, to find repeated ids without keeping them.
type indexEntry struct {
	submit float64
	off    int64
	id     uint64
	length int32
	shard  int32
}

// lineRef is where one of a shard's lines is, once the index is in
// submit order: 24 bytes.
type lineRef struct {
	submit float64
	off    int64
	length int32
	shard  int32
}

// shardLines are a shard's lines in submit order, in chunks of
// lineChunk that the merge lets go of as it passes them: the index
// shrinks while the merged figures grow, so a merge's peak is not both.
type shardLines struct {
	chunks [][]lineRef
	n      int
}

const lineChunk = 1 << 14

// at is line i.
func (l *shardLines) at(i int) *lineRef { return &l.chunks[i/lineChunk][i%lineChunk] }

// passed lets go of the chunk line i follows when i starts a new one.
func (l *shardLines) passed(i int) {
	if i > 0 && i%lineChunk == 0 {
		l.chunks[i/lineChunk-1] = nil
	}
}

// linesOf copies index's entries (one shard's, in submit order) into
// chunks.
func linesOf(index []indexEntry) shardLines {
	l := shardLines{n: len(index)}
	for len(index) > 0 {
		part := index[:min(len(index), lineChunk)]
		index = index[len(part):]
		c := make([]lineRef, len(part))
		for i, e := range part {
			c[i] = lineRef{submit: e.submit, off: e.off, length: e.length, shard: e.shard}
		}
		l.chunks = append(l.chunks, c)
	}
	return l
}

// Merge turns the folders of a sharded run into one ordinary run folder
// (spec/scale-out.md): it checks the folders are the shards of one run,
// writes every request line ordered by submit time, and recomputes the
// summary from the merged lines with the code a single run uses.
// Problems with the set of folders are *UsageError.
//
// It reads each shard's lines twice: an index pass (where each line is,
// by submit time: 24 bytes a line once checked) and the merge, a k-way
// merge of the shards that decodes each line once. The lines themselves
// are never held; what grows with them is the figures the summary is
// computed from, as in a run, while the index shrinks as the merge passes
// it (docs/scale-out.md "Merging at scale").
func Merge(o MergeOptions) (*Merged, error) {
	m, err := openMerge(o)
	if err != nil {
		return nil, err
	}
	defer m.close()
	// As in a run: the figures kept per request (and here the index) get
	// no GC headroom of their own, so a merge's memory is their size, not
	// twice it.
	defer boundGCHeadroom(m.keptBytes, mergeBound)()
	if err := m.index(); err != nil {
		return nil, err
	}
	rec, err := m.create()
	if err != nil {
		return nil, err
	}
	defer rec.Close()
	if err := m.mergeLines(rec); err != nil {
		return nil, err
	}
	sum := m.summary(rec)
	if err := finishRecord(rec, sum); err != nil {
		return nil, err
	}
	return &Merged{Dir: rec.Dir(), Summary: sum, Sections: m.outcome.Sections, Reasons: m.outcome.Reasons}, nil
}

// merge is one merge under way.
type merge struct {
	o       MergeOptions
	logf    func(format string, args ...any)
	shards  []*shardFolder
	missing []int
	cfg     *config.Config
	name    string

	// The workload rebuilt from the record: wl and its parts, nil when
	// it cannot be (its block is then null).
	wl      workload.Workload
	obs     workload.Observer
	owner   workload.ShardOwner
	hold    *load.HoldBack
	outcome workload.Outcome

	collector *stats.Collector
	tracker   *load.Tracker
	lines     atomic.Int64 // indexed, in every shard (read by keptBytes too)
}

// keptBytes is the memory of the index and the figures kept per request
// (the tracker of a merge keeps none), as boundGCHeadroom reads it from
// its own goroutine.
func (m *merge) keptBytes() uint64 {
	return uint64(m.lines.Load())*uint64(unsafe.Sizeof(lineRef{})) + m.collector.KeptBytes()
}

// openMerge reads the shard folders and their config, and rebuilds the
// run's workload from the record.
func openMerge(o MergeOptions) (*merge, error) {
	m := &merge{o: o, logf: func(string, ...any) {}, collector: stats.New()}
	if o.Logf != nil {
		// Warnings name the shard folders: text from outside, cleaned.
		m.logf = func(f string, a ...any) { o.Logf("%s", textclean.Line(fmt.Sprintf(f, a...))) }
	}
	set, err := readShardSet(o.Dirs, o.AllowPartial)
	if err != nil {
		return nil, err
	}
	m.shards, m.missing = set.shards, set.missing
	cfg := config.Default()
	if err := cfg.LoadRecordJSON(set.configPath, set.config); err != nil {
		m.close()
		return nil, &UsageError{Err: fmt.Errorf("merge: %v", err)}
	}
	if err := cfg.ValidateRecorded(); err != nil {
		m.close()
		return nil, &UsageError{Err: fmt.Errorf("merge: %s: %v", m.shards[0].dir, err)}
	}
	m.cfg = cfg
	m.rebuildWorkload()
	m.name = textclean.Line(o.Name)
	if m.name == "" && m.shards[0].summary != nil {
		m.name = m.shards[0].summary.Run.Name
	}
	return m, nil
}

// rebuildWorkload builds the workload's outcome from the lines, as the
// run built it: same workload, same Observe, the whole run's config;
// built from the record, it opens no file the config names (a trace) and
// asks no engine. What the lines do not hold comes from the shards'
// workload blocks, before the lines.
func (m *merge) rebuildWorkload() {
	cfg := m.cfg
	// Built from the record: nothing to wait for, so no deadline.
	given := cfg.Settings()
	wl, err := workload.New(context.Background(), workload.Params{
		Config: cfg, TokensPerGB: given.TokensPerGB, Seed: int64(given.Seed),
		Endpoint: sender.Endpoint(given.Endpoint), FromRecord: true,
	})
	obs, _ := wl.(workload.Observer)
	if err != nil || obs == nil {
		m.logf("the %s block cannot be rebuilt from the lines of %s: it is left null", "workload", cfg.Workload())
	}
	if err != nil {
		return
	}
	m.wl = wl
	m.owner, _ = wl.(workload.ShardOwner)
	if hb, ok := wl.(workload.HoldBacker); ok {
		m.hold = hb.HoldBack()
	}
	if obs == nil {
		return
	}
	m.obs = obs
	if sc, ok := wl.(workload.ShardCounter); ok {
		for _, s := range m.shards {
			if s.summary == nil {
				continue
			}
			if b, ok := s.summary.Workload.(json.RawMessage); ok {
				if err := sc.AddShardBlock(b); err != nil {
					m.logf("%s: workload block: %v", s.dir, err)
				}
			}
		}
	}
}

func (m *merge) close() {
	for _, s := range m.shards {
		if s.file != nil {
			s.file.Close()
		}
	}
}

// index is the index pass over every shard, the check that no request
// id is repeated, and each shard's lines put in submit order. Each
// shard's index is put in order and into its chunks as soon as it is
// read, so what the pass keeps is 24 bytes a line and each line's id
// hash (8 bytes, until checked).
func (m *merge) index() error {
	var ids []uint64
	for i, s := range m.shards {
		entries, err := indexShard(s, int32(i), m.owner, m.cfg.Workload())
		if err != nil {
			return err
		}
		for _, e := range entries {
			ids = append(ids, e.id)
		}
		bySubmit(entries)
		s.lines = linesOf(entries)
		m.lines.Add(int64(len(entries)))
		if s.corrupt > 0 {
			m.logf("%s: %d unreadable line(s) of %s skipped", s.dir, s.corrupt, record.RequestsFile)
		}
		if s.summary == nil {
			m.logf("%s has no %s (the shard did not finish): merged from its lines, marked interrupted", s.dir, record.SummaryFile)
		}
	}
	if dup := repeatedHashes(ids); len(dup) > 0 {
		// Lines that share an id hash: read again, to compare their ids.
		var again []indexEntry
		for i, s := range m.shards {
			e, err := linesHashed(s, int32(i), dup)
			if err != nil {
				return err
			}
			again = append(again, e...)
		}
		if err := checkRepeatedIDs(m.shards, again); err != nil {
			return err
		}
	}
	return nil
}

// repeatedHashes are the hashes ids holds more than once (ids is
// sorted in place).
func repeatedHashes(ids []uint64) map[uint64]bool {
	slices.Sort(ids)
	var dup map[uint64]bool
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			if dup == nil {
				dup = map[uint64]bool{}
			}
			dup[ids[i]] = true
		}
	}
	return dup
}

// linesHashed are the index entries of the lines of s whose request id
// hashes to one of hashes, read again from its file.
func linesHashed(s *shardFolder, shard int32, hashes map[uint64]bool) ([]indexEntry, error) {
	if s.file == nil {
		return nil, nil
	}
	var out []indexEntry
	size, err := s.file.Seek(0, io.SeekEnd)
	if err == nil {
		_, err = record.EachRequest(io.NewSectionReader(s.file, 0, size), true, func(at record.LineAt, l *sender.Result) error {
			if h := idHash(l.RequestID); hashes[h] {
				out = append(out, indexEntry{submit: l.SubmitTime, off: at.Start, id: h, length: int32(at.Len), shard: shard})
			}
			return nil
		})
	}
	if err != nil {
		return nil, fmt.Errorf("merge: read %s: %v", filepath.Join(s.dir, record.RequestsFile), err)
	}
	return out, nil
}

// create makes the merged run's folder with its config.json.
func (m *merge) create() (*record.Writer, error) {
	now := m.o.Now
	if now == nil {
		now = time.Now
	}
	rec, err := record.Create(m.o.OutputDir, m.cfg.Workload(), m.name, now())
	if err != nil {
		return nil, &UsageError{Err: fmt.Errorf("--output-dir: %v", err)}
	}
	if err := rec.WriteConfig(rawJSON(m.cfg.MergedJSON())); err != nil {
		rec.Close()
		return nil, &WriteError{Err: err}
	}
	return rec, nil
}

// mergeLines writes the merged lines (and their CSV rows) and feeds each
// to the collector, the workload and the load tracker, in submit order.
func (m *merge) mergeLines(rec *record.Writer) error {
	m.collector.Offline(int(m.lines.Load()))
	m.collector.SetPercentiles(m.cfg.Percentiles())
	ls, err := load.FromConfig(m.cfg)
	if err != nil {
		return &UsageError{Err: fmt.Errorf("merge: %s: %v", m.shards[0].dir, err)}
	}
	m.tracker = load.NewTracker(ls)
	m.tracker.LagsFrom(m.collector.SortedLags)
	if err := rec.StreamCSV(); err != nil {
		m.logf("%v (it is written from the merged lines instead)", err)
	}
	var flight inFlight
	if err := writeMerged(rec, m.shards, func(r *sender.Result) {
		// Read-back results have only the record's Unix times.
		r.Submit, r.Finish = unixTime(r.SubmitTime), unixTime(r.FinishTime)
		m.collector.Add(r)
		if m.obs != nil {
			m.obs.Observe(r)
		}
		if gated(r.Phase) {
			// Lines come in submit order: the requests that finished
			// before this one went out leave the tracker first, so it
			// sees the run's real concurrency.
			flight.finishBefore(r.SubmitTime, m.tracker)
			m.tracker.Begin()
			heap.Push(&flight, r)
		}
	}); err != nil {
		return &WriteError{Err: err}
	}
	flight.finishBefore(math.Inf(1), m.tracker)
	if m.obs != nil {
		m.outcome = m.wl.Outcome()
	}
	return nil
}

// summary is the merged run's summary: the figures recomputed from the
// lines, the run's times and engines from the shards' summaries, the
// load judged over the whole run and each shard's own verdict.
func (m *merge) summary(rec *record.Writer) *record.Summary {
	cpu := 0.0
	run := record.RunInfo{ID: rec.ID(), Name: m.name}
	var first, last time.Time
	var ids []string
	var skew *float64
	engines := map[string]bool{}
	var engineList []string
	var infos []record.ShardInfo
	for _, s := range m.shards {
		ids = append(ids, s.id)
		infos = append(infos, s.info)
		if s.info.ClientCPUSeconds != nil {
			cpu += *s.info.ClientCPUSeconds
		}
		if v := s.info.StartSkewMs; v != nil && (skew == nil || *v > *skew) {
			skew = v
		}
		if s.summary == nil {
			run.Interrupted = true
			continue
		}
		run.Interrupted = run.Interrupted || s.summary.Run.Interrupted
		if t := s.summary.Run.StartedTime(); !t.IsZero() && (first.IsZero() || t.Before(first)) {
			first = t
		}
		if t := s.summary.Run.FinishedTime(); t.After(last) {
			last = t
		}
		if u, _ := record.Field(s.summary.Config, "engine_url"); u != nil {
			if us, ok := u.(string); ok && !engines[us] {
				engines[us] = true
				engineList = append(engineList, us)
			}
		}
	}
	if !first.IsZero() {
		run.StartedAt = first.UTC().Format(time.RFC3339)
	}
	if !last.IsZero() {
		run.FinishedAt = last.UTC().Format(time.RFC3339)
	}
	run.MergedFrom = &ids

	blocks := m.collector.Final(stats.ClientInfo{CPUSeconds: cpu})
	sum := summarise(m.cfg, strings.Join(engineList, ","), rec.Dir(), blocks, m.outcome, run, false)
	var undelivered []string
	for _, s := range m.shards {
		if s.info.Delivered != nil && !*s.info.Delivered {
			undelivered = append(undelivered,
				fmt.Sprintf("shard %d did not deliver its share of the load (its own summary, %s, says why)", s.index, s.id))
		}
	}
	judgeRun(sum, blocks, m.tracker, m.hold, shardOverloads(m.shards), undelivered)
	sum.StartSkewMs = skew
	sum.Shards = infos
	sum.Partial = len(m.missing) > 0
	return sum
}

// finishRecord writes the end of a run record: the summary, the CSV,
// and closes requests.jsonl (releasing the folder's lock).
func finishRecord(rec *record.Writer, sum *record.Summary) error {
	if err := rec.WriteSummary(sum); err != nil {
		return &WriteError{Err: err}
	}
	if err := rec.WriteCSV(); err != nil {
		return &WriteError{Err: err}
	}
	if err := rec.Close(); err != nil {
		return &WriteError{Err: err}
	}
	return nil
}

// WriteError is a run record that could not be written completely (exit
// code 4).
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }
func (e *WriteError) ExitCode() int { return errs.ExitRecord }

// shardRun is the folders of one sharded run, ordered by index, with
// the indexes missing and the config.json merge loads.
type shardRun struct {
	shards     []*shardFolder
	missing    []int
	config     []byte
	configPath string
}

// readShardSet reads each folder's config.json and summary and checks the
// folders are the shards of one run: the same run key, the same config
// but for the shard index, every index 0..N-1 once (missing ones allowed
// with allowPartial).
func readShardSet(dirs []string, allowPartial bool) (*shardRun, error) {
	if len(dirs) == 0 {
		return nil, &UsageError{Err: errors.New("merge: name the shard folders to merge")}
	}
	set := &shardRun{}
	for i, dir := range dirs {
		s, raw, err := readShardFolder(dir)
		if err != nil {
			return nil, &UsageError{Err: fmt.Errorf("merge: %v", err)}
		}
		if i == 0 {
			set.config, set.configPath = raw, filepath.Join(dir, record.ConfigFile)
		}
		set.shards = append(set.shards, s)
	}
	shards := set.shards
	ref := shards[0]
	for _, s := range shards[1:] {
		if s.runKey != ref.runKey {
			return nil, &UsageError{Err: fmt.Errorf("merge: %s and %s are not shards of one run: their run keys differ (%s vs %s)",
				ref.dir, s.dir, ref.runKey, s.runKey)}
		}
	}
	for _, s := range shards[1:] {
		if key := firstDifference(ref, s); key != "" {
			return nil, &UsageError{Err: fmt.Errorf("merge: %s and %s are not shards of one run: config key %s differs (%s vs %s)",
				ref.dir, s.dir, key, shown(ref.values[key]), shown(s.values[key]))}
		}
	}
	slices.SortStableFunc(shards, func(a, b *shardFolder) int { return a.index - b.index })
	byIndex := map[int][]string{}
	for _, s := range shards {
		byIndex[s.index] = append(byIndex[s.index], s.dir)
	}
	var problems []string
	for i := 0; i < ref.count; i++ {
		switch d := byIndex[i]; {
		case len(d) == 0:
			set.missing = append(set.missing, i)
		case len(d) > 1:
			problems = append(problems, fmt.Sprintf("shard %d of %d is given %d times (%s)", i, ref.count, len(d), strings.Join(d, ", ")))
		}
	}
	if len(set.missing) > 0 && !allowPartial {
		problems = append(problems, fmt.Sprintf("missing shard(s) %s of %d; merge what is there with --allow-partial", joinInts(set.missing), ref.count))
	}
	if len(problems) > 0 {
		return nil, &UsageError{Err: fmt.Errorf("merge: %s", strings.Join(problems, "; "))}
	}
	return set, nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

func shown(v json.RawMessage) string {
	if v == nil {
		return "absent"
	}
	const most = 60
	if len(v) > most {
		return string(v[:most]) + "..."
	}
	return string(v)
}

// firstDifference is the first config key (in a's order, then b's) whose
// value differs between two shard folders; "" when they agree.
func firstDifference(a, b *shardFolder) string {
	for _, k := range a.keys {
		if !bytes.Equal(a.values[k], b.values[k]) {
			if k == "shard" {
				return shardKeyDifference(a, b)
			}
			return k
		}
	}
	for _, k := range b.keys {
		if _, ok := a.values[k]; !ok {
			return k
		}
	}
	return ""
}

func shardKeyDifference(a, b *shardFolder) string {
	switch {
	case a.count != b.count:
		return "shard.count"
	case a.startAt != b.startAt:
		return "shard.start_at"
	}
	return "shard"
}

// readShardFolder reads what merge needs of one folder before its lines,
// and its config.json as read.
func readShardFolder(dir string) (*shardFolder, []byte, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", dir, unwrapPath(err))
	}
	if !fi.IsDir() {
		return nil, nil, fmt.Errorf("%s is not a run folder", dir)
	}
	if record.Locked(dir) {
		// Its lines are still being written: a merge now would miss them.
		return nil, nil, fmt.Errorf("%s is still running (its folder is locked until the shard ends)", dir)
	}
	raw, err := record.ReadJSON(filepath.Join(dir, record.ConfigFile), maxConfigBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("%s is not a shard folder: %v", dir, err)
	}
	// The folder's name is its run id in the merged summary: text from
	// outside, cleaned.
	s := &shardFolder{dir: dir, id: textclean.Line(filepath.Base(filepath.Clean(dir))), values: map[string]json.RawMessage{}}
	if s.keys, err = orderedObject(raw, s.values); err != nil {
		return nil, nil, fmt.Errorf("%s: %s is not a JSON object: %v", dir, record.ConfigFile, err)
	}
	block, ok := s.values["shard"]
	if !ok {
		return nil, nil, fmt.Errorf("%s is not a shard folder: its %s has no shard block (run the shards with --shard I/N)", dir, record.ConfigFile)
	}
	var sb struct {
		Index  *int    `json:"index"`
		Count  *int    `json:"count"`
		At     *string `json:"start_at"`
		RunKey *string `json:"run_key"`
	}
	if err := json.Unmarshal(block, &sb); err != nil || sb.Index == nil || sb.Count == nil || *sb.Count < 1 || *sb.Count > config.MaxShards ||
		*sb.Index < 0 || *sb.Index >= *sb.Count {
		return nil, nil, fmt.Errorf("%s: the shard block of %s is not {index, count, start_at, run_key} with 0 <= index < count <= %d",
			dir, record.ConfigFile, config.MaxShards)
	}
	if sb.RunKey == nil || *sb.RunKey == "" || config.CheckRunKey(*sb.RunKey) != nil {
		return nil, nil, fmt.Errorf("%s: the shard block of %s has no valid run_key (a shard of a kvbench without run keys, or edited): run the shards again", dir, record.ConfigFile)
	}
	s.index, s.count, s.runKey = *sb.Index, *sb.Count, *sb.RunKey
	if sb.At != nil {
		s.startAt = *sb.At
	}
	// The folders must agree on everything but the index.
	rest, _ := json.Marshal(map[string]any{"count": s.count, "start_at": sb.At})
	s.values["shard"] = rest
	s.info.Index = s.index
	s.info.RunID = s.id
	if _, err := record.ReadRegular(filepath.Join(dir, record.SummaryFile), maxConfigBytes); err == nil {
		if sum, err := record.ReadSummary(dir); err == nil {
			s.summary = sum
		}
	}
	if s.summary != nil {
		cpu := s.summary.Client.CPUSeconds
		s.info.ClientCPUSeconds = &cpu
		// The shard's own proof of delivered load, when it has one.
		if l := s.summary.Load; l != nil {
			d := l.Delivered
			s.info.Delivered = &d
		}
	}
	return s, raw, nil
}

// orderedObject reads a JSON object's keys in order, with each value
// compacted into values.
func orderedObject(raw []byte, values map[string]json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("want an object")
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		var c bytes.Buffer
		if err := json.Compact(&c, v); err != nil {
			return nil, err
		}
		keys = append(keys, k)
		values[k] = c.Bytes()
	}
	return keys, nil
}

// indexShard opens a shard's requests.jsonl, indexes its lines (in the
// file's order) and fills the shard's figures of the `shards` block. A
// shard folder without the file merges as a shard that sent nothing.
// With owner, every line must be one this shard sends (else a
// *UsageError naming the folder).
func indexShard(s *shardFolder, shard int32, owner workload.ShardOwner, workloadName string) ([]indexEntry, error) {
	path := filepath.Join(s.dir, record.RequestsFile)
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	f, err := record.OpenRegular(path)
	if err != nil {
		return nil, &UsageError{Err: fmt.Errorf("merge: %v", err)}
	}
	var out []indexEntry
	s.file = f
	var firstSubmit, lastSubmit float64
	var startAt float64
	if t, err := time.Parse(time.RFC3339Nano, s.startAt); err == nil {
		startAt = float64(t.UnixNano()) / 1e9
	}
	var foreign error
	s.corrupt, err = record.EachRequest(f, true, func(at record.LineAt, l *sender.Result) error {
		if owner != nil && foreign == nil && s.count > 1 {
			switch o, ok := owner.ShardOf(l.RequestID, s.count); {
			case !ok:
				foreign = fmt.Errorf("merge: %s holds request %s, which %s never sends: the folder's lines are not its run's", s.dir, shownID(l.RequestID), workloadName)
			case o != workload.AnyShard && o != s.index:
				foreign = fmt.Errorf("merge: %s is shard %d of %d, but its request %s is one shard %d sends: the folder holds another shard's lines",
					s.dir, s.index, s.count, shownID(l.RequestID), o)
			}
		}
		out = append(out, indexEntry{submit: l.SubmitTime, off: at.Start, id: idHash(l.RequestID), length: int32(at.Len), shard: shard})
		if !l.Measured() {
			return nil
		}
		s.info.Requests++
		if !l.Successful {
			s.info.Failed++
		}
		if firstSubmit == 0 || l.SubmitTime < firstSubmit {
			firstSubmit = l.SubmitTime
		}
		lastSubmit = max(lastSubmit, l.SubmitTime)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("merge: read %s: %v", path, err)
	}
	if foreign != nil {
		return nil, &UsageError{Err: foreign}
	}
	if span := lastSubmit - firstSubmit; s.info.Requests >= 2 && span > 0 {
		r := float64(s.info.Requests) / span
		s.info.AchievedRate = &r
	}
	if startAt > 0 && firstSubmit > 0 {
		ms := (firstSubmit - startAt) * 1000
		s.info.StartSkewMs = &ms
	}
	return out, nil
}

// idHash is the 64-bit FNV-1a hash of a request id.
func idHash(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

// shownID is a request id from a shard's line as an error shows it:
// cleaned, cut, quoted.
func shownID(id string) string {
	const most = 80
	if len(id) > most {
		id = strings.ToValidUTF8(id[:most], "") + "..."
	}
	return strconv.Quote(textclean.Line(id))
}

// checkRepeatedIDs refuses a set whose lines hold a request id more than
// once: the run sent each request once, so a repeat is a shard given
// twice under two indexes, or lines copied. Equal hashes are confirmed
// by reading both ids. It leaves index ordered by id hash.
func checkRepeatedIDs(shards []*shardFolder, index []indexEntry) error {
	byID := index
	slices.SortFunc(byID, func(a, b indexEntry) int {
		if c := cmp.Compare(a.id, b.id); c != 0 {
			return c
		}
		if c := cmp.Compare(a.shard, b.shard); c != 0 {
			return c
		}
		return cmp.Compare(a.off, b.off)
	})
	for i := 0; i+1 < len(byID); i++ {
		if byID[i].id != byID[i+1].id {
			continue
		}
		j := i + 1
		for j+1 < len(byID) && byID[j+1].id == byID[i].id {
			j++
		}
		group := byID[i : j+1]
		ids := make([]string, len(group))
		for k, e := range group {
			id, err := lineID(shards[e.shard], e)
			if err != nil {
				return err
			}
			ids[k] = id
		}
		for a := range group {
			for b := a + 1; b < len(group); b++ {
				if ids[a] != ids[b] {
					continue
				}
				x, y := shards[group[a].shard], shards[group[b].shard]
				where := fmt.Sprintf("in %s and in %s", x.dir, y.dir)
				if x == y {
					where = "twice in " + x.dir
				}
				return &UsageError{Err: fmt.Errorf("merge: request %s is %s: a run sends each request once (a shard given under two indexes, or its lines copied?)",
					shownID(ids[a]), where)}
			}
		}
		i = j
	}
	return nil
}

// bySubmit orders a shard's index by submit time (position breaking
// ties, as the file had them): a shard's file is in finish order, the
// k-way merge takes each shard's lines by submit time.
func bySubmit(index []indexEntry) {
	slices.SortFunc(index, func(x, y indexEntry) int {
		if c := cmp.Compare(x.submit, y.submit); c != 0 {
			return c
		}
		return cmp.Compare(x.off, y.off)
	})
}

// lineID reads the request id of an indexed line again.
func lineID(s *shardFolder, e indexEntry) (string, error) {
	line := make([]byte, e.length)
	if _, err := s.file.ReadAt(line, e.off); err != nil {
		return "", fmt.Errorf("read %s: %v", filepath.Join(s.dir, record.RequestsFile), err)
	}
	var d record.LineDecoder
	var r sender.Result
	if !d.Skim(line, &r) {
		return "", fmt.Errorf("read %s: line at byte %d changed during the merge", filepath.Join(s.dir, record.RequestsFile), e.off)
	}
	return r.RequestID, nil
}

// shardCursor is where the k-way merge is in one shard: its next line in
// submit order, read through a window of the file (the lines in submit
// order are nearly the file's order, so most reads are a copy).
type shardCursor struct {
	s      *shardFolder
	pos    int
	win    []byte
	winOff int64
}

// line is the cursor's line, valid until the next call.
func (c *shardCursor) line() ([]byte, error) {
	e := c.s.lines.at(c.pos)
	end := e.off + int64(e.length)
	if e.off >= c.winOff && end <= c.winOff+int64(len(c.win)) {
		return c.win[e.off-c.winOff : end-c.winOff], nil
	}
	size := max(int(e.length), mergeWindow)
	if cap(c.win) < size {
		c.win = make([]byte, size)
	}
	n, err := c.s.file.ReadAt(c.win[:cap(c.win)], e.off)
	if n < int(e.length) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("read %s: %v", filepath.Join(c.s.dir, record.RequestsFile), err)
	}
	c.win, c.winOff = c.win[:n], e.off
	return c.win[:e.length], nil
}

// mergeWindow is the bytes of a shard's file a merge reads at once.
const mergeWindow = 256 << 10

// cursorHeap orders the shards by their next line: submit time, then
// shard, as the merged file orders lines.
type cursorHeap []*shardCursor

func (h cursorHeap) Len() int { return len(h) }
func (h cursorHeap) Less(i, j int) bool {
	x, y := h[i].s.lines.at(h[i].pos), h[j].s.lines.at(h[j].pos)
	if x.submit != y.submit {
		return x.submit < y.submit
	}
	return x.shard < y.shard
}
func (h cursorHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)   { *h = append(*h, x.(*shardCursor)) }
func (h *cursorHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// writeMerged merges the shards' indexed lines by submit time (a k-way
// merge: one cursor a shard), copies each into the merged requests.jsonl
// with its CSV row, and hands each, decoded once, to add.
func writeMerged(rec *record.Writer, shards []*shardFolder, add func(*sender.Result)) error {
	var h cursorHeap
	for _, s := range shards {
		if s.lines.n > 0 {
			h = append(h, &shardCursor{s: s})
		}
	}
	heap.Init(&h)
	var batch bytes.Buffer
	var rows []*sender.Result
	var d record.LineDecoder
	for h.Len() > 0 {
		c := h[0]
		line, err := c.line()
		if err != nil {
			return err
		}
		r := new(sender.Result)
		if !d.Decode(line, r) {
			return fmt.Errorf("read %s: line at byte %d changed during the merge", filepath.Join(c.s.dir, record.RequestsFile), c.s.lines.at(c.pos).off)
		}
		add(r)
		rows = append(rows, r)
		batch.Write(line)
		batch.WriteByte('\n')
		if batch.Len() >= 256<<10 {
			if err := rec.AppendLines(batch.Bytes(), rows...); err != nil {
				return err
			}
			batch.Reset()
			clear(rows)
			rows = rows[:0]
		}
		if c.pos++; c.pos < c.s.lines.n {
			c.s.lines.passed(c.pos)
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
			c.s.lines = shardLines{}
		}
	}
	return rec.AppendLines(batch.Bytes(), rows...)
}

// shardOverloads are the client overload findings of the shards, which
// make the merged run's load undelivered as they made the shard's.
func shardOverloads(shards []*shardFolder) []string {
	const prefix, suffix = "client overloaded: ", " (latencies may be inflated)"
	var out []string
	for _, s := range shards {
		if s.summary == nil || s.summary.Load == nil {
			continue
		}
		for _, r := range s.summary.Load.DegradedReasons {
			if strings.HasPrefix(r, prefix) {
				out = append(out, fmt.Sprintf("shard %d: %s", s.index, strings.TrimSuffix(strings.TrimPrefix(r, prefix), suffix)))
			}
		}
	}
	return out
}

// inFlight holds the measured requests of a merge that have gone out but
// not yet finished, earliest finish first: at most the run's concurrency.
type inFlight []*sender.Result

func (h inFlight) Len() int           { return len(h) }
func (h inFlight) Less(i, j int) bool { return h[i].FinishTime < h[j].FinishTime }
func (h inFlight) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *inFlight) Push(x any)        { *h = append(*h, x.(*sender.Result)) }
func (h *inFlight) Pop() any {
	old := *h
	r := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return r
}

// finishBefore hands the tracker every request that finished before t.
func (h *inFlight) finishBefore(t float64, tr *load.Tracker) {
	for h.Len() > 0 && (*h)[0].FinishTime <= t {
		tr.Finish(heap.Pop(h).(*sender.Result), load.NotHeld)
	}
}

// unixTime is the instant of a record's Unix-seconds float.
func unixTime(s float64) time.Time {
	sec := math.Floor(s)
	return time.Unix(int64(sec), int64((s-sec)*1e9))
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
