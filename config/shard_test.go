package config

import (
	"strings"
	"testing"
)

func TestParseShardBounds(t *testing.T) {
	if s, err := ParseShard("4095/4096"); err != nil || s != (Shard{Index: 4095, Count: 4096}) {
		t.Fatalf("4095/4096: %v %v", s, err)
	}
	for _, v := range []string{"0/4097", "0/1000000000", "3/3", "-1/2", "0/0", "1", "a/b"} {
		_, err := ParseShard(v)
		if err == nil || !strings.Contains(err.Error(), "--shard") {
			t.Errorf("--shard %s: %v, want an error naming --shard", v, err)
		}
	}
	if _, err := ParseShard("0/1000000000"); err == nil || !strings.Contains(err.Error(), "at most 4096") {
		t.Errorf("0/1000000000: %v, want the bound named", err)
	}
}

func shardConfig(t *testing.T, kv map[string]string) *Config {
	t.Helper()
	c := Default()
	c.SetString("workload", RandomPrefill)
	for k, v := range kv {
		if err := c.SetString(k, v); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// N > 1 needs a run key or a start time: without either, two runs of one
// config would salt alike.
func TestShardNeedsRunKeyOrStartAt(t *testing.T) {
	err := shardConfig(t, map[string]string{"shard": "1/4"}).Validate()
	if err == nil || !strings.Contains(err.Error(), "--run-key") || !strings.Contains(err.Error(), "--start-at") {
		t.Fatalf("--shard 1/4 alone: %v, want both flags named", err)
	}
	for _, kv := range []map[string]string{
		{"shard": "1/4", "run_key": "nightly-2026-01-02"},
		{"shard": "1/4", "start_at": "2030-01-01T00:00:00Z"},
		{"shard": "0/1"},
		{},
	} {
		if err := shardConfig(t, kv).Validate(); err != nil {
			t.Errorf("%v: %v", kv, err)
		}
	}
	for _, k := range []string{"a b", "x\x1b]52;c;aGk=\x07", strings.Repeat("k", MaxRunKey+1)} {
		err := shardConfig(t, map[string]string{"shard": "0/2", "run_key": k}).Validate()
		if err == nil || !strings.HasPrefix(err.Error(), "--run-key ") || strings.Contains(err.Error(), "\x1b") {
			t.Errorf("--run-key %q: %v", k, err)
		}
	}
}

// The run key is the same in every shard of one run and differs when the
// run does: another start time, shard count, config or given key.
func TestRunKey(t *testing.T) {
	at := "2030-01-01T00:00:00Z"
	key := func(kv map[string]string) string { return shardConfig(t, kv).RunKey() }
	base := key(map[string]string{"shard": "0/4", "start_at": at})
	if k := key(map[string]string{"shard": "3/4", "start_at": at}); k != base {
		t.Fatalf("two shards of one run: %s vs %s", base, k)
	}
	if err := CheckRunKey(base); err != nil || len(base) != 32 {
		t.Fatalf("derived key %q: %v", base, err)
	}
	for name, kv := range map[string]map[string]string{
		"another start":  {"shard": "0/4", "start_at": "2030-01-01T00:00:01Z"},
		"another count":  {"shard": "0/5", "start_at": at},
		"another config": {"shard": "0/4", "start_at": at, "rp_num_requests": "7"},
		"another rate":   {"shard": "0/4", "start_at": at, "request_rate": "3"},
	} {
		if k := key(kv); k == base {
			t.Errorf("%s: same run key %s", name, k)
		}
	}
	if k := key(map[string]string{"shard": "0/4", "start_at": at, "run_key": "mine"}); k != "mine" {
		t.Errorf("a given --run-key is the key: %q", k)
	}
	b := shardConfig(t, map[string]string{"shard": "2/4", "run_key": "mine"}).ShardBlock()
	if b == nil || b.RunKey != "mine" || b.Index != 2 || b.Count != 4 || b.StartAt != nil {
		t.Errorf("shard block %+v", b)
	}
}

// The workloads that do not split their requests over shards refuse
// --shard N > 1 (each shard would send the whole run), naming why.
func TestUnsplittableWorkloadsRefuseShards(t *testing.T) {
	for _, w := range []string{KVTierPressure, RAGQAQuality, LongDocPermutator, PrefixSuffixTuner, CacheProbe, ConcurrentExactness} {
		c := Default()
		for k, v := range map[string]string{"workload": w, "shard": "0/2", "run_key": "k1"} {
			if err := c.SetString(k, v); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--shard: "+w+" cannot be split") {
			t.Errorf("%s: %v", w, err)
		}
	}
}
