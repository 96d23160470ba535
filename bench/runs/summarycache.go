package runs

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/textclean"
)

// SummaryCacheFile sits in a run folder without a summary (a run that
// crashed): the summary computed from its requests.jsonl and its list
// row, so that `results` and the explorer read the lines once, not at
// every listing (docs/results.md, "A crashed run's summary").
const SummaryCacheFile = ".summary-cache"

// summaryCacheVersion changes whenever what the cache holds, or how it
// is computed, changes: an older cache is then recomputed.
const summaryCacheVersion = 1

// maxSummaryCache bounds the cache file read (a summary is at most a few
// hundred kB; the file is from outside like every file of the folder).
const maxSummaryCache = 16 << 20

// cachedRow is the list's figures of a folder without a summary.
type cachedRow struct {
	Workload         string    `json:"workload"`
	Model            string    `json:"model"`
	Name             string    `json:"name"`
	StartedAt        time.Time `json:"started_at"`
	TotalRequests    int       `json:"total_requests"`
	FailedRequests   int       `json:"failed_requests"`
	Corrupt          int       `json:"corrupt"`
	MeanTTFTms       *float64  `json:"mean_ttft_ms"`
	P99TTFTms        *float64  `json:"p99_ttft_ms"`
	OutputThroughput float64   `json:"output_throughput"`
	HitRatio         *float64  `json:"hit_ratio"`
}

func (c cachedRow) run(dir string) *Run {
	return &Run{
		ID: FolderID(dir), Dir: dir, Workload: c.Workload, Model: c.Model, Name: c.Name, StartedAt: c.StartedAt.Local(),
		TotalRequests: c.TotalRequests, FailedRequests: c.FailedRequests, SuccessfulRequests: c.TotalRequests - c.FailedRequests,
		MeanTTFTms: c.MeanTTFTms, P99TTFTms: c.P99TTFTms, OutputThroughput: c.OutputThroughput, HitRatio: c.HitRatio,
		Interrupted: true, Corrupt: c.Corrupt,
	}
}

// fileStamp is what says a file has not changed: its size and mtime.
type fileStamp struct {
	Size    int64 `json:"size"`
	MtimeNs int64 `json:"mtime_ns"`
}

func stampOf(path string) (fileStamp, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return fileStamp{}, false
	}
	return fileStamp{Size: fi.Size(), MtimeNs: fi.ModTime().UnixNano()}, true
}

// summaryCache is the file's content.
type summaryCache struct {
	Version  int             `json:"version"`
	Requests fileStamp       `json:"requests"`
	Config   *fileStamp      `json:"config"` // nil: no config.json
	Row      cachedRow       `json:"row"`
	Summary  json.RawMessage `json:"summary,omitempty"` // absent until a reader needed it

	summary *record.Summary
}

// stamps are the folder's files the cache was computed from, as they are
// now; ok is false when requests.jsonl is not a regular file.
func stamps(dir string) (req fileStamp, cfg *fileStamp, ok bool) {
	req, ok = stampOf(filepath.Join(dir, record.RequestsFile))
	if c, found := stampOf(filepath.Join(dir, record.ConfigFile)); found {
		cfg = &c
	}
	return req, cfg, ok
}

// summaryOf is the list row of a folder without a summary and, with
// withSummary, its summary: the cache's when it was computed from the
// files as they are now, else computed in one pass over requests.jsonl
// and cached. The list asks for the row only (a pass that keeps 8 bytes
// a request); the explorer's detail, compare and report ask for the
// summary too (the collector's pass). A folder still being written
// (locked) is computed every time and not cached.
func summaryOf(dir string, withSummary bool) (*summaryCache, error) {
	req, cfg, ok := stamps(dir)
	live := record.Locked(dir)
	if ok && !live {
		if c := readSummaryCache(dir, req, cfg); c != nil && (c.summary != nil || !withSummary) {
			return c, nil
		}
	}
	c := &summaryCache{Version: summaryCacheVersion, Requests: req, Config: cfg}
	if withSummary {
		s, row, err := summarise(dir)
		if err != nil {
			return nil, err
		}
		if c.Summary, err = json.Marshal(s); err != nil {
			return nil, err
		}
		// What is shown is what the cache gives back next time: the
		// summary as decoded from its JSON, either way.
		if c.summary, err = record.DecodeSummary(c.Summary, filepath.Join(dir, SummaryCacheFile)); err != nil {
			return nil, err
		}
		c.Row = row
	} else {
		row, err := quickRow(dir)
		if err != nil {
			return nil, err
		}
		c.Row = row
	}
	if ok && !live {
		// The lines must not have changed while they were read.
		if now, cnow, _ := stamps(dir); now == req && sameStamp(cnow, cfg) {
			writeSummaryCache(dir, c)
		}
	}
	return c, nil
}

func sameStamp(a, b *fileStamp) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// readSummaryCache is dir's cache when it is well formed and was
// computed from the files as they are (req, cfg); nil otherwise. The file
// is from outside: a regular file, bounded, its text cleaned, and
// anything malformed means recomputing.
func readSummaryCache(dir string, req fileStamp, cfg *fileStamp) *summaryCache {
	path := filepath.Join(dir, SummaryCacheFile)
	b, err := record.ReadJSON(path, maxSummaryCache)
	if err != nil {
		return nil
	}
	var c summaryCache
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if dec.Decode(&c) != nil || dec.More() {
		return nil
	}
	if c.Version != summaryCacheVersion || c.Requests != req || !sameStamp(c.Config, cfg) {
		return nil
	}
	r := &c.Row
	r.Name, r.Workload, r.Model = textclean.Line(r.Name), textclean.Line(r.Workload), textclean.Line(r.Model)
	if r.TotalRequests < 0 || r.FailedRequests < 0 || r.FailedRequests > r.TotalRequests || r.Corrupt < 0 {
		return nil
	}
	if c.Summary != nil {
		if c.summary, err = record.DecodeSummary(c.Summary, path); err != nil {
			return nil
		}
	}
	return &c
}

// writeSummaryCache writes the cache atomically; a folder that cannot
// take it (read-only, full) is simply computed again next time.
func writeSummaryCache(dir string, c *summaryCache) {
	b, err := json.Marshal(c)
	if err != nil {
		return
	}
	_ = config.WriteFileAtomic(filepath.Join(dir, SummaryCacheFile), append(b, '\n'), 0o644)
}
