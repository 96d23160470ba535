package bench

import (
	"bufio"
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
	"sort"
	"strconv"
	"strings"
	"time"

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

// Merge turns the folders of a sharded run into one ordinary run folder
// (spec/scale-out.md): it checks the folders are the shards of one run,
// writes every request line ordered by submit time, and recomputes the
// summary from the merged lines with the code a single run uses.
// Problems with the set of folders are *UsageError.
func Merge(o MergeOptions) (*Merged, error) {
	logf := func(string, ...any) {}
	if o.Logf != nil {
		// Warnings name the shard folders: text from outside, cleaned.
		logf = func(f string, a ...any) { o.Logf("%s", textclean.Line(fmt.Sprintf(f, a...))) }
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	set, err := readShardSet(o.Dirs, o.AllowPartial)
	if err != nil {
		return nil, err
	}
	shards, missing := set.shards, set.missing
	defer func() {
		for _, s := range shards {
			if s.file != nil {
				s.file.Close()
			}
		}
	}()
	cfg := config.Default()
	if err := cfg.LoadRecordJSON(set.configPath, set.config); err != nil {
		return nil, &UsageError{Err: fmt.Errorf("merge: %v", err)}
	}
	if err := cfg.ValidateRecorded(); err != nil {
		return nil, &UsageError{Err: fmt.Errorf("merge: %s: %v", shards[0].dir, err)}
	}

	// The workload's outcome is rebuilt from the lines, as the run built
	// it: same workload, same Observe, the whole run's config; built
	// from the record, it opens no file the config names (a trace) and
	// asks no engine. What the lines do not hold comes from the shards'
	// workload blocks, before the lines.
	// Built from the record: nothing to wait for, so no deadline.
	given := cfg.Settings()
	wl, werr := workload.New(context.Background(), workload.Params{
		Config: cfg, TokensPerGB: given.TokensPerGB, Seed: int64(given.Seed),
		Endpoint: sender.Endpoint(given.Endpoint), FromRecord: true,
	})
	obs, _ := wl.(workload.Observer)
	if werr != nil || obs == nil {
		logf("the %s block cannot be rebuilt from the lines of %s: it is left null", "workload", cfg.Workload())
		obs = nil
	}
	if sc, ok := wl.(workload.ShardCounter); ok && obs != nil {
		for _, s := range shards {
			if s.summary == nil {
				continue
			}
			if b, ok := s.summary.Workload.(json.RawMessage); ok {
				if err := sc.AddShardBlock(b); err != nil {
					logf("%s: workload block: %v", s.dir, err)
				}
			}
		}
	}
	owner, _ := wl.(workload.ShardOwner)
	if werr != nil {
		owner = nil
	}

	// The index: where each line is, by submit time. 32 bytes a request;
	// the lines themselves stay on disk.
	var index []indexEntry
	for i, s := range shards {
		entries, err := indexShard(s, int32(i), owner, cfg.Workload())
		if err != nil {
			return nil, err
		}
		if s.corrupt > 0 {
			logf("%s: %d unreadable line(s) of %s skipped", s.dir, s.corrupt, record.RequestsFile)
		}
		if s.summary == nil {
			logf("%s has no %s (the shard did not finish): merged from its lines, marked interrupted", s.dir, record.SummaryFile)
		}
		index = append(index, entries...)
	}
	if err := checkRepeatedIDs(shards, index); err != nil {
		return nil, err
	}
	sort.Slice(index, func(a, b int) bool {
		x, y := index[a], index[b]
		if x.submit != y.submit {
			return x.submit < y.submit
		}
		if x.shard != y.shard {
			return x.shard < y.shard
		}
		return x.off < y.off
	})

	name := textclean.Line(o.Name)
	if name == "" && shards[0].summary != nil {
		name = shards[0].summary.Run.Name
	}
	rec, err := record.Create(o.OutputDir, cfg.Workload(), name, now())
	if err != nil {
		return nil, &UsageError{Err: fmt.Errorf("--output-dir: %v", err)}
	}
	defer rec.Close()
	if err := rec.WriteConfig(rawJSON(cfg.MergedJSON())); err != nil {
		return nil, &WriteError{Err: err}
	}

	collector := stats.New()
	collector.SetPercentiles(cfg.Percentiles())
	ls, lerr := load.FromConfig(cfg)
	if lerr != nil {
		return nil, &UsageError{Err: fmt.Errorf("merge: %s: %v", shards[0].dir, lerr)}
	}
	tracker := load.NewTracker(ls)
	var flight inFlight
	if err := writeMerged(rec, shards, index, func(r *sender.Result) {
		// Read-back results have only the record's Unix times.
		r.Submit, r.Finish = unixTime(r.SubmitTime), unixTime(r.FinishTime)
		collector.Add(r)
		if obs != nil {
			obs.Observe(r)
		}
		if gated(r.Phase) {
			// Lines come in submit order: the requests that finished
			// before this one went out leave the tracker first, so it
			// sees the run's real concurrency.
			flight.finishBefore(r.SubmitTime, tracker)
			tracker.Begin()
			heap.Push(&flight, r)
		}
	}); err != nil {
		return nil, &WriteError{Err: err}
	}
	flight.finishBefore(math.Inf(1), tracker)
	index = nil

	cpu := 0.0
	run := record.RunInfo{ID: rec.ID(), Name: name}
	var first, last time.Time
	var ids []string
	var skew *float64
	engines := map[string]bool{}
	var engineList []string
	var infos []record.ShardInfo
	for _, s := range shards {
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

	blocks := collector.Final(stats.ClientInfo{CPUSeconds: cpu})
	var outcome workload.Outcome
	if obs != nil {
		outcome = wl.Outcome()
	}
	sum := summarise(cfg, strings.Join(engineList, ","), rec.Dir(), blocks, outcome, run, false)
	var hold *load.HoldBack
	if hb, ok := wl.(workload.HoldBacker); ok && werr == nil {
		hold = hb.HoldBack()
	}
	loadBlock, goodput := tracker.Final(blocks.Results.ElapsedTime, hold, shardOverloads(shards))
	for _, s := range shards {
		if s.info.Delivered != nil && !*s.info.Delivered {
			loadBlock.DegradedReasons = append(loadBlock.DegradedReasons,
				fmt.Sprintf("shard %d did not deliver its share of the load (its own summary, %s, says why)", s.index, s.id))
		}
	}
	loadBlock.Delivered = len(loadBlock.DegradedReasons) == 0
	sum.Load, sum.Goodput = &loadBlock, goodput
	sum.Headline = record.NewHeadline(sum, blocks.Speedup)
	sum.StartSkewMs = skew
	sum.Shards = infos
	sum.Partial = len(missing) > 0
	if err := rec.WriteSummary(sum); err != nil {
		return nil, &WriteError{Err: err}
	}
	if err := rec.WriteCSV(); err != nil {
		return nil, &WriteError{Err: err}
	}
	if err := rec.Close(); err != nil {
		return nil, &WriteError{Err: err}
	}
	return &Merged{Dir: rec.Dir(), Summary: sum, Sections: outcome.Sections, Reasons: outcome.Reasons}, nil
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

// indexLine is what the index pass reads of a line.
type indexLine struct {
	RequestID  string  `json:"request_id"`
	Phase      string  `json:"phase"`
	Successful bool    `json:"successful"`
	SubmitTime float64 `json:"submit_time"`
}

// indexShard opens a shard's requests.jsonl, indexes its lines and fills
// the shard's figures of the `shards` block. A shard folder without the
// file merges as a shard that sent nothing. With owner, every line must
// be one this shard sends (else a *UsageError naming the folder).
func indexShard(s *shardFolder, shard int32, owner workload.ShardOwner, workloadName string) ([]indexEntry, error) {
	path := filepath.Join(s.dir, record.RequestsFile)
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	f, err := record.OpenRegular(path)
	if err != nil {
		return nil, &UsageError{Err: fmt.Errorf("merge: %v", err)}
	}
	s.file = f
	var out []indexEntry
	var firstSubmit, lastSubmit float64
	var startAt float64
	if t, err := time.Parse(time.RFC3339Nano, s.startAt); err == nil {
		startAt = float64(t.UnixNano()) / 1e9
	}
	var foreign error
	s.corrupt, err = scanLines(f, func(off int64, line []byte) bool {
		var l indexLine
		if json.Unmarshal(line, &l) != nil || l.RequestID == "" {
			return false
		}
		if owner != nil && foreign == nil && s.count > 1 {
			switch o, ok := owner.ShardOf(l.RequestID, s.count); {
			case !ok:
				foreign = fmt.Errorf("merge: %s holds request %s, which %s never sends: the folder's lines are not its run's", s.dir, shownID(l.RequestID), workloadName)
			case o != workload.AnyShard && o != s.index:
				foreign = fmt.Errorf("merge: %s is shard %d of %d, but its request %s is one shard %d sends: the folder holds another shard's lines",
					s.dir, s.index, s.count, shownID(l.RequestID), o)
			}
		}
		out = append(out, indexEntry{submit: l.SubmitTime, off: off, id: idHash(l.RequestID), length: int32(len(line)), shard: shard})
		if l.Phase == sender.PhaseWarmup || l.Phase == sender.PhaseReference {
			return true
		}
		s.info.Requests++
		if !l.Successful {
			s.info.Failed++
		}
		if firstSubmit == 0 || l.SubmitTime < firstSubmit {
			firstSubmit = l.SubmitTime
		}
		lastSubmit = max(lastSubmit, l.SubmitTime)
		return true
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

// lineID reads the request id of an indexed line again.
func lineID(s *shardFolder, e indexEntry) (string, error) {
	line := make([]byte, e.length)
	if _, err := s.file.ReadAt(line, e.off); err != nil {
		return "", fmt.Errorf("read %s: %v", filepath.Join(s.dir, record.RequestsFile), err)
	}
	var l indexLine
	if err := json.Unmarshal(line, &l); err != nil {
		return "", fmt.Errorf("read %s: line at byte %d changed during the merge", filepath.Join(s.dir, record.RequestsFile), e.off)
	}
	return l.RequestID, nil
}

// scanLines reads a requests.jsonl the way every reader of a record must
// (spec/record.md): lines up to the SSE limit, a NUL or an oversized
// line ending the file as a torn tail. fn gets each non-blank line
// (trailing newline removed) and its offset and says whether it was a
// request; corrupt counts the lines that were not, the torn tail
// included.
func scanLines(f *os.File, fn func(off int64, line []byte) bool) (corrupt int, err error) {
	br := bufio.NewReaderSize(f, 64<<10)
	var long []byte
	var off int64
	for {
		line, rerr := br.ReadSlice('\n')
		if errors.Is(rerr, bufio.ErrBufferFull) {
			if len(long)+len(line) > maxRecordLine {
				return corrupt + 1, nil
			}
			long = append(long, line...)
			continue
		}
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return corrupt, rerr
		}
		if len(long) > 0 {
			long = append(long, line...)
			line, long = long, long[:0]
		}
		n := int64(len(line))
		if len(line) > maxRecordLine || bytes.IndexByte(line, 0) >= 0 {
			return corrupt + 1, nil
		}
		content := bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(content)) > 0 && !fn(off, content) {
			corrupt++
		}
		off += n
		if rerr != nil {
			return corrupt, nil
		}
	}
}

// writeMerged copies every indexed line, in index order, into the merged
// requests.jsonl and hands each, decoded, to add.
func writeMerged(rec *record.Writer, shards []*shardFolder, index []indexEntry, add func(*sender.Result)) error {
	var batch bytes.Buffer
	var line []byte
	for _, e := range index {
		if cap(line) < int(e.length) {
			line = make([]byte, e.length)
		}
		line = line[:e.length]
		s := shards[e.shard]
		if _, err := s.file.ReadAt(line, e.off); err != nil {
			return fmt.Errorf("read %s: %v", filepath.Join(s.dir, record.RequestsFile), err)
		}
		var r sender.Result
		if err := json.Unmarshal(textclean.JSON(line), &r); err != nil {
			return fmt.Errorf("read %s: line at byte %d changed during the merge", filepath.Join(s.dir, record.RequestsFile), e.off)
		}
		add(&r)
		batch.Write(line)
		batch.WriteByte('\n')
		if batch.Len() >= 256<<10 {
			if err := rec.AppendLines(batch.Bytes()); err != nil {
				return err
			}
			batch.Reset()
		}
	}
	return rec.AppendLines(batch.Bytes())
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
