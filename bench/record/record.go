// Package record owns the run record on disk (spec/record.md): one folder
// per run, never overwritten, holding config.json, requests.jsonl (a line
// appended as each request finishes), bench_results.csv and
// bench_summary.json. It writes the record incrementally and reads it back
// for the results explorer. The summary's shape is here too: its types
// (summary.go), its config block (SummaryConfig) and the ordered objects
// that keep a block's keys in a fixed order (Ordered).
package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/bench/sender"
)

// File names inside a run folder.
const (
	ConfigFile   = "config.json"
	RequestsFile = "requests.jsonl"
	CSVFile      = "bench_results.csv"
	SummaryFile  = "bench_summary.json"
)

// A sweep folder (spec/load.md, written by bench/sweep): its summary, and
// the folder holding its cells' run folders.
const (
	SweepFile     = "sweep.json"
	SweepCellsDir = "cells"
)

// IsSweepDir reports whether dir is a sweep folder: it holds sweep.json
// as a regular file.
func IsSweepDir(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, SweepFile))
	return err == nil && fi.Mode().IsRegular()
}

// SweepCellDir is the run folder of a sweep cell: its run id is a folder
// name under cells/, and nothing else in it is followed.
func SweepCellDir(sweepDir, runID string) string {
	return filepath.Join(sweepDir, SweepCellsDir, filepath.Base(filepath.Clean("/"+runID)))
}

// RunsDir is the default output directory: $KVBENCH_RUNS_DIR, else
// $XDG_STATE_HOME/kvbench/runs, else ~/.local/state/kvbench/runs (and
// ./kvbench-runs when no home directory is known).
func RunsDir() string {
	if d := os.Getenv("KVBENCH_RUNS_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "kvbench", "runs")
	}
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return filepath.Join(h, ".local", "state", "kvbench", "runs")
	}
	return "kvbench-runs"
}

// Writer writes one run folder.
type Writer struct {
	dir, id string

	mu      sync.Mutex
	req     lineFile // requests.jsonl, nil once closed
	size    int64    // end of the last complete line
	written int      // lines written
	failed  error    // the first failed write; no line is written after it
	lost    int      // lines not written because of failed
	// reserve holds descriptors opened with the folder and released just
	// before the summary and CSV are written, so those never compete
	// with sockets for the last descriptors.
	reserve []*os.File
	// spare is a file of disk space held back the same way, so that a
	// disk filled by requests.jsonl still takes the summary.
	spare string
	// lock marks the folder as a run in progress (LockFile) until Close.
	lock *Lock
	// csv streams bench_results.csv's rows as their lines are written
	// (StreamCSV); nil when not asked for or once given up.
	csv       *csvStream
	streamCSV atomic.Bool // csv was set: Append formats rows
}

// SpareFile holds disk space for the summary in a run folder until the
// end of the run (a folder of a killed run may keep it).
const SpareFile = ".kvbench-spare"

// spareBytes is the disk space held back: a summary is a few KB.
const spareBytes = 64 << 10

// lineFile is what Append needs of requests.jsonl (tests inject faults).
type lineFile interface {
	Write([]byte) (int, error)
	Truncate(int64) error
	Sync() error
	Close() error
	Name() string
}

// reservedFDs is how many descriptors a Writer holds back: the summary's
// and the CSV's temporary files and requests.jsonl read for the CSV.
const reservedFDs = 3

// maxNameLen bounds the sanitised run name in the folder name.
const maxNameLen = 64

// Sanitize keeps a name to [A-Za-z0-9._-]: every run of other characters
// becomes one '-', and leading or trailing '-' and '.' are dropped.
func Sanitize(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			r == '.' || r == '_' || r == '-'
		if !ok {
			if !dash {
				b.WriteByte('-')
			}
			dash = true
			continue
		}
		b.WriteRune(r)
		dash = false
	}
	s := strings.Trim(b.String(), "-.")
	if len(s) > maxNameLen {
		s = strings.TrimRight(s[:maxNameLen], "-.")
	}
	return s
}

// FolderName is the run folder's name before any suffix:
// <YYYYMMDD-HHMMSS>-<workload>[-<name>], in started's location.
func FolderName(workload, name string, started time.Time) string {
	id := started.Format("20060102-150405")
	if w := Sanitize(workload); w != "" {
		id += "-" + w
	}
	if n := Sanitize(name); n != "" {
		id += "-" + n
	}
	return id
}

// ErrFolderNamesTaken is NewFolder's error when base and every numbered
// variant of it exist.
var ErrFolderNamesTaken = errors.New("the folder name and its numbered variants are taken")

// maxFolderVariants is how many names NewFolder tries: base, base-2, ...
const maxFolderVariants = 10000

// NewFolder makes a new folder outputDir/base, or base-2, base-3, ...
// when that is taken: an existing folder is never reused. It returns the
// id it made, or on failure the id it last tried with os.Mkdir's error,
// or ErrFolderNamesTaken. Runs, sweeps and series are made by it.
func NewFolder(outputDir, base string) (string, error) {
	for i := 1; i <= maxFolderVariants; i++ {
		id := base
		if i > 1 {
			id += "-" + strconv.Itoa(i)
		}
		err := os.Mkdir(filepath.Join(outputDir, id), 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return id, err
	}
	return base, ErrFolderNamesTaken
}

// NewOutputFolder makes the folder of a sweep or a series of runs:
// outputDir/<stamp>-<kind>-<workload>[-<name>] (outputDir "" means
// RunsDir(), created if missing), numbered as NewFolder numbers. It
// returns the folder and its id; its errors name --output-dir, where the
// folder goes.
func NewOutputFolder(outputDir, kind, workload, name string, started time.Time) (dir, id string, err error) {
	if outputDir == "" {
		outputDir = RunsDir()
	}
	if err := os.MkdirAll(outputDir, 0o755); err != nil {
		return "", "", fmt.Errorf("--output-dir: %v", err)
	}
	base := FolderName(kind+"-"+workload, name, started)
	id, err = NewFolder(outputDir, base)
	if errors.Is(err, ErrFolderNamesTaken) {
		return "", "", fmt.Errorf("--output-dir: %s and its numbered variants are taken", base)
	}
	if err != nil {
		return "", "", fmt.Errorf("--output-dir: %v", err)
	}
	return filepath.Join(outputDir, id), id, nil
}

// Create makes a new run folder under outputDir (created if missing; ""
// means RunsDir()) and opens its requests.jsonl. An existing folder is
// never reused: the name gets -2, -3, ... instead (NewFolder). Errors
// name the directory that could not be created.
func Create(outputDir, workload, name string, started time.Time) (*Writer, error) {
	if outputDir == "" {
		outputDir = RunsDir()
	}
	if err := os.MkdirAll(outputDir, 0o755); err != nil {
		return nil, fmt.Errorf("create output directory %s: %w", outputDir, err)
	}
	base := FolderName(workload, name, started)
	id, err := NewFolder(outputDir, base)
	if errors.Is(err, ErrFolderNamesTaken) {
		return nil, fmt.Errorf("create run folder in %s: %s and its numbered variants are taken", outputDir, base)
	}
	if err != nil {
		return nil, fmt.Errorf("create run folder %s: %w", filepath.Join(outputDir, id), err)
	}
	return open(outputDir, id)
}

// CreateNamed creates the run folder outputDir/id exactly (a sweep's
// cells have fixed names); an existing folder is an error, never reused.
func CreateNamed(outputDir, id string) (*Writer, error) {
	if err := os.MkdirAll(outputDir, 0o755); err != nil {
		return nil, fmt.Errorf("create output directory %s: %w", outputDir, err)
	}
	w, err := create(outputDir, id)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create run folder %s: it exists already", filepath.Join(outputDir, id))
	}
	return w, err
}

// create makes outputDir/id and its requests file; fs.ErrExist when the
// folder is taken.
func create(outputDir, id string) (*Writer, error) {
	dir := filepath.Join(outputDir, id)
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("create run folder %s: %w", dir, err)
	}
	return open(outputDir, id)
}

// open opens the record of the new, empty run folder outputDir/id.
func open(outputDir, id string) (*Writer, error) {
	dir := filepath.Join(outputDir, id)
	// The lock comes before the first record file. It is advisory and
	// best effort: on a file system that cannot lock, the run goes on and
	// reads as incomplete until its summary is written.
	lock, _ := LockDir(dir)
	f, err := os.OpenFile(filepath.Join(dir, RequestsFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND|os.O_EXCL, 0o644)
	if err != nil {
		lock.Unlock()
		return nil, fmt.Errorf("create %s: %w", filepath.Join(dir, RequestsFile), err)
	}
	w := &Writer{dir: dir, id: id, req: f, lock: lock}
	for range reservedFDs {
		r, err := os.Open(os.DevNull)
		if err != nil {
			w.release()
			f.Close()
			lock.Unlock()
			return nil, fmt.Errorf("reserve file descriptors for %s: %w", dir, err)
		}
		w.reserve = append(w.reserve, r)
	}
	// Best effort: a disk too full for the spare is full anyway.
	w.spare = filepath.Join(dir, SpareFile)
	if err := os.WriteFile(w.spare, make([]byte, spareBytes), 0o600); err != nil {
		os.Remove(w.spare)
	}
	return w, nil
}

// Dir is the run folder's path.
func (w *Writer) Dir() string { return w.dir }

// ID is the run folder's name, the run's id.
func (w *Writer) ID() string { return w.id }

// WriteConfig writes config.json: v as JSON with a 2-space indent and a
// trailing newline, atomically.
func (w *Writer) WriteConfig(v any) error {
	return writeJSON(filepath.Join(w.dir, ConfigFile), v)
}

// WriteSummary writes bench_summary.json atomically; it may be called
// again (e.g. once on interrupt, once at the end).
func (w *Writer) WriteSummary(s *Summary) error {
	w.release()
	return writeJSON(filepath.Join(w.dir, SummaryFile), s)
}

// release gives back the reserved descriptors.
func (w *Writer) release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, f := range w.reserve {
		f.Close()
	}
	w.reserve = nil
	if w.spare != "" {
		os.Remove(w.spare)
		w.spare = ""
	}
}

// Failed is the error that stopped requests.jsonl, nil while every line
// was written; lost is how many lines were not written since.
func (w *Writer) Failed() (lost int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lost, w.failed
}

// Lines is the number of lines written to requests.jsonl.
func (w *Writer) Lines() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written
}

// Append adds r as one line of requests.jsonl. The line goes to the
// kernel in one write call with no buffering in the process, so it
// survives the process being killed once Append has returned; no fsync is
// made per line. Safe for concurrent use.
func (w *Writer) Append(r *sender.Result) error {
	buf := lineBufs.Get().(*bytes.Buffer)
	defer putLineBuf(buf)
	buf.Reset()
	// Encode writes what json.Marshal returns plus the newline, into a
	// reused buffer: no garbage per line when thousands finish together.
	if err := json.NewEncoder(buf).Encode(r); err != nil {
		return fmt.Errorf("encode request %s: %w", r.RequestID, err)
	}
	line := buf.Len()
	// The CSV row is formatted before the lock, after the line in the
	// same buffer, and written under it, so rows keep the lines' order.
	csvRow := w.streaming() && csvWanted(r)
	if csvRow {
		appendCSVRow(buf, r)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.req == nil {
		return fmt.Errorf("append to %s: writer closed", filepath.Join(w.dir, RequestsFile))
	}
	if w.failed != nil {
		w.lost++
		return w.failed
	}
	n, err := w.req.Write(buf.Bytes()[:line])
	if err == nil && n < line {
		err = io.ErrShortWrite
	}
	if err != nil {
		// Cut a partial line off, so the file stays valid line by line
		// and nothing later is fused with it; write nothing more.
		if n > 0 {
			if terr := w.req.Truncate(w.size); terr != nil {
				err = fmt.Errorf("%w (and truncating the partial line: %v)", err, terr)
			}
		}
		w.failed = fmt.Errorf("append to %s: %w", w.req.Name(), err)
		w.lost++
		return w.failed
	}
	w.size += int64(n)
	w.written++
	if csvRow && w.csv != nil {
		w.csv.write(buf.Bytes()[line:])
	}
	return nil
}

// FailWritesAfter makes requests.jsonl refuse writes with err once it
// holds limit bytes, writing the part of a line that still fits as a
// full disk would: for fault drills and tests.
func (w *Writer) FailWritesAfter(limit int64, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if f, ok := w.req.(*os.File); ok {
		w.req = &faultyFile{File: f, limit: limit, err: err, size: w.size}
	}
}

// faultyFile is a file that fills up at limit bytes.
type faultyFile struct {
	*os.File
	limit, size int64
	err         error
}

func (f *faultyFile) Write(b []byte) (int, error) {
	room := f.limit - f.size
	if room >= int64(len(b)) {
		n, err := f.File.Write(b)
		f.size += int64(n)
		return n, err
	}
	n := 0
	if room > 0 {
		n, _ = f.File.Write(b[:room])
		f.size += int64(n)
	}
	return n, f.err
}

func (f *faultyFile) Truncate(size int64) error {
	if err := f.File.Truncate(size); err != nil {
		return err
	}
	f.size = size
	return nil
}

// AppendLines adds complete requests.jsonl lines (each ending in a
// newline) as they are, in one write: a merge copies the shards' lines
// byte for byte. rs are the lines' results, in order, for the CSV rows
// streamed after StreamCSV.
func (w *Writer) AppendLines(b []byte, rs ...*sender.Result) error {
	if len(b) == 0 {
		return nil
	}
	if b[len(b)-1] != '\n' {
		return fmt.Errorf("append to %s: a line without its newline", filepath.Join(w.dir, RequestsFile))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.req == nil {
		return fmt.Errorf("append to %s: writer closed", filepath.Join(w.dir, RequestsFile))
	}
	if _, err := w.req.Write(b); err != nil {
		return fmt.Errorf("append to %s: %w", w.req.Name(), err)
	}
	if w.csv != nil && w.streaming() {
		buf := lineBufs.Get().(*bytes.Buffer)
		defer putLineBuf(buf)
		buf.Reset()
		for _, r := range rs {
			if csvWanted(r) {
				appendCSVRow(buf, r)
			}
		}
		w.csv.write(buf.Bytes())
	}
	return nil
}

// lineBufs holds the buffers Append encodes lines into.
var lineBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func putLineBuf(b *bytes.Buffer) {
	if b.Cap() <= 64<<10 {
		lineBufs.Put(b)
	}
}

// Close flushes requests.jsonl to disk, closes it and releases the
// folder's lock: the run is no longer in progress, so the CSV and the
// summary are written before Close (they can still be written after it,
// as a reader then sees an incomplete run until they are).
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.req == nil {
		return nil
	}
	f := w.req
	w.req = nil
	if w.csv != nil {
		// Closed before WriteCSV: the streamed rows are dropped, and a
		// WriteCSV after Close reads the lines.
		w.csv.abandon()
		w.csv = nil
	}
	for _, r := range w.reserve {
		r.Close()
	}
	w.reserve = nil
	if w.spare != "" {
		os.Remove(w.spare)
		w.spare = ""
	}
	serr := f.Sync()
	cerr := f.Close()
	// A failed unlock leaves the lock to the OS, at exit; the record is whole.
	w.lock.Unlock()
	w.lock = nil
	if cerr != nil {
		return fmt.Errorf("close %s: %w", f.Name(), cerr)
	}
	if serr != nil {
		return fmt.Errorf("sync %s: %w", f.Name(), serr)
	}
	return nil
}

// writeJSON writes v with a 2-space indent, HTML characters unescaped,
// and a trailing newline, atomically.
func writeJSON(path string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return writeAtomic(path, buf.Bytes())
}

// writeAtomic writes data to a temporary file in path's directory and
// renames it over path, so readers see the old file or the new one, never
// a part.
func writeAtomic(path string, data []byte) error {
	return writeAtomicFunc(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeAtomicFunc is writeAtomic for content produced by fill, streamed
// through a buffer.
func writeAtomicFunc(path string, fill func(io.Writer) error) error {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	bw := bufio.NewWriterSize(f, 64<<10)
	err = fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
