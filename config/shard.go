package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Shard is the share of a run one process takes (spec/scale-out.md):
// shard Index (0-based) of Count. Count 1 is an ordinary run.
type Shard struct{ Index, Count int }

// Sharded reports whether the run is split over more than one process.
func (s Shard) Sharded() bool { return s.Count > 1 }

// Owns reports whether unit i (a request index, a document, a session)
// belongs to this shard: every Count-th unit, starting at Index.
func (s Shard) Owns(i int) bool { return s.Count <= 1 || i%s.Count == s.Index }

// Rate is this shard's share of a run-wide rate: rates are per run, so
// each of N shards sends R/N (an infinite rate stays infinite).
func (s Shard) Rate(r float64) float64 {
	if s.Count <= 1 {
		return r
	}
	return r / float64(s.Count)
}

// String is the flag's form, "I/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// MaxShards is the largest N of --shard I/N: far more client processes
// than one engine cluster needs, and few enough that a merge's per-shard
// bookkeeping stays small.
const MaxShards = 4096

// ParseShard reads --shard I/N with 0 <= I < N <= MaxShards.
func ParseShard(v string) (Shard, error) {
	bad := fmt.Errorf("--shard must be I/N with 0 <= I < N, e.g. 0/4 (got %q)", v)
	a, b, ok := strings.Cut(strings.TrimSpace(v), "/")
	if !ok {
		return Shard{}, bad
	}
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, bad
	}
	if n > MaxShards {
		return Shard{}, fmt.Errorf("--shard %s: at most %d shards (got N = %d)", strings.TrimSpace(v), MaxShards, n)
	}
	return Shard{Index: i, Count: n}, nil
}

// Shard is the run's --shard; {0, 1} when not given or invalid
// (Validate reports the invalid value).
func (c *Config) Shard() Shard {
	s, err := ParseShard(c.String("shard"))
	if c.String("shard") == "" || err != nil {
		return Shard{Index: 0, Count: 1}
	}
	return s
}

// StartAt is --start-at, the zero time when not given or invalid
// (Validate reports the invalid value).
func (c *Config) StartAt() time.Time {
	t, err := parseStartAt(c.String("start_at"))
	if err != nil {
		return time.Time{}
	}
	return t
}

func parseStartAt(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--start-at must be an RFC 3339 time such as 2026-01-02T15:04:05Z (got %q)", s)
	}
	return t.UTC(), nil
}

// StartAtSlack is how long ago a --start-at may be and still be accepted
// (the pods of one Job do not all start in the same second).
const StartAtSlack = 5 * time.Second

// CheckStartAt reports a --start-at that is already past by more than
// StartAtSlack at now.
func (c *Config) CheckStartAt(now time.Time) error {
	t := c.StartAt()
	if t.IsZero() {
		return nil
	}
	if late := now.Sub(t); late >= StartAtSlack {
		return fmt.Errorf("--start-at %s is %s in the past (at most %s is accepted): give a time still to come", c.String("start_at"), late.Round(time.Second), StartAtSlack)
	}
	return nil
}

// ShardRefusal is why workload cannot be sharded, "" when it can.
func ShardRefusal(workload string) string { return specs[workload].Unsplittable }

// validateShard checks --shard, --start-at and --run-key.
func (c *Config) validateShard() error {
	if _, err := parseStartAt(c.String("start_at")); err != nil {
		return err
	}
	if err := CheckRunKey(c.String("run_key")); err != nil {
		return fmt.Errorf("--run-key %v", err)
	}
	if v := c.String("shard"); v != "" {
		s, err := ParseShard(v)
		if err != nil {
			return err
		}
		if why := ShardRefusal(c.Workload()); why != "" && s.Sharded() {
			return fmt.Errorf("--shard: %s cannot be split over shards without changing what it measures: %s; run it as one process", c.Workload(), why)
		}
		if s.Sharded() && c.String("run_key") == "" && c.String("start_at") == "" {
			return fmt.Errorf("--shard %s needs --run-key or --start-at: every shard of one run carries the same run key, "+
				"and its prompts are salted with it; without either, a rerun's shards would salt like the last run's and be served from its cache", s)
		}
	}
	return nil
}

// MaxRunKey is the longest --run-key.
const MaxRunKey = 128

// CheckRunKey reports a run key that is not 1 to MaxRunKey letters,
// digits or "-_.:+/@" ("" is no key). A key is shown in errors and
// records, so it holds nothing a terminal would act on.
func CheckRunKey(k string) error {
	if k == "" {
		return nil
	}
	if len(k) > MaxRunKey {
		return fmt.Errorf("must be at most %d characters (got %d)", MaxRunKey, len(k))
	}
	for _, r := range k {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:+/@", r)
		if !ok {
			return errors.New("must be letters, digits and - _ . : + / @ only (e.g. nightly-2026-01-02)")
		}
	}
	return nil
}

// ShardBlock is the `shard` object of a sharded run's config.json and
// summary (spec/scale-out.md).
type ShardBlock struct {
	Index int `json:"index"`
	Count int `json:"count"`
	// StartAt is --start-at in RFC 3339, null when not given.
	StartAt *string `json:"start_at"`
	// RunKey is the run's key (RunKey), the same in every shard of one
	// run.
	RunKey string `json:"run_key"`
}

// ShardBlock is the run's `shard` object; nil for a run that is neither
// sharded nor given --start-at.
func (c *Config) ShardBlock() *ShardBlock {
	s, t := c.Shard(), c.StartAt()
	if !s.Sharded() && t.IsZero() {
		return nil
	}
	b := &ShardBlock{Index: s.Index, Count: s.Count, RunKey: c.RunKey()}
	if !t.IsZero() {
		at := t.Format(time.RFC3339Nano)
		b.StartAt = &at
	}
	return b
}

// RecordJSON is the run record's config.json: the exported config, plus
// for a sharded run the load settings (rates are per run: merge judges the
// merged run against them) and the `shard` block (also for a run given
// --start-at).
func (c *Config) RecordJSON() []byte {
	var extra []pair
	if c.Shard().Sharded() {
		extra = c.loadSettings()
	}
	if block := c.ShardBlock(); block != nil {
		extra = append(extra, pair{"shard", block})
	}
	return c.withKeys(extra)
}

// MergedJSON is the config.json of a merged run: the exported config and
// the load settings, without a shard block.
func (c *Config) MergedJSON() []byte { return c.withKeys(c.loadSettings()) }

// loadSettings are the load-shaping settings (spec/load.md) the user
// gave, as config keys and values (only those: what was not given keeps
// its meaning, e.g. --burstiness implying gamma arrivals).
func (c *Config) loadSettings() []pair {
	var o []pair
	for _, f := range Fields {
		if f.Group == "load" && c.IsSet(f.Key) {
			o = append(o, pair{f.Key, jsonValue(c.values[f.Key])})
		}
	}
	return o
}

// pair is one more key of config.json and its value.
type pair struct {
	key   string
	value any
}

// withKeys is ExportJSON with more keys after the workload's.
func (c *Config) withKeys(extra []pair) []byte {
	out := c.ExportJSON()
	if len(extra) == 0 {
		return out
	}
	i := bytes.LastIndex(out, []byte("\n}"))
	var b bytes.Buffer
	b.Write(out[:i])
	for _, p := range extra {
		v, _ := json.Marshal(p.value)
		fmt.Fprintf(&b, ",\n  %q: %s", p.key, v)
	}
	b.WriteString("\n}\n")
	return b.Bytes()
}

// RunKey names one run of a sharded run: --run-key, else derived from
// what every shard of the run shares and a rerun does not: the config
// (exported settings and load settings), the shard count and
// --start-at. Run-wide values that must agree over shards (a prompt
// salt) derive from it rather than from one process's run id, so a rerun
// with a new key or start time shares no cache with the last run.
func (c *Config) RunKey() string {
	if k := c.String("run_key"); k != "" {
		return k
	}
	h := sha256.New()
	fmt.Fprintf(h, "kvbench run key\x00%s\x00%d\x00%s", c.MergedJSON(), c.Shard().Count, c.String("start_at"))
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// LoadRecordJSON is LoadJSON of a config.json already read (kvbench
// merge reads each shard's once, as a regular file of bounded size);
// path names it in errors.
func (c *Config) LoadRecordJSON(path string, data []byte) error { return c.loadJSON(path, data) }
