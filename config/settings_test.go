package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestSettingsDecodeEveryTaggedField: each tagged field holds its
// setting's value (and whether it was given), read once.
func TestSettingsDecodeEveryTaggedField(t *testing.T) {
	c := Default()
	for k, v := range map[string]string{"engine_url": "http://u:p@gpu:8000", "model": "m", "served_model_name": "alias",
		"kv_cache_volume": "4.5", "seed": "7", "idle_timeout": "3s", "arrival": "gamma", "max_concurrency": "9", "quiet": "true"} {
		if err := c.SetString(k, v); err != nil {
			t.Fatal(err)
		}
	}
	s := c.Settings()
	if s.EngineURL != "http://gpu:8000" || s.Model != "m" || s.RequestModel() != "alias" || s.KVCacheGB != 4.5 || !s.KVCacheGBGiven ||
		s.Seed != 7 || s.IdleTimeout != 3*time.Second || !s.Quiet || s.Load.Arrival != "gamma" || !s.Load.ArrivalGiven ||
		s.Load.MaxConcurrency != 9 || !s.Load.MaxConcurrencyGiven || s.Load.BurstinessGiven || s.Load.RequestRateGiven {
		t.Errorf("decoded %+v", s)
	}
	// Every tag names a setting, and every general setting but the
	// shard's (Config.Shard) and the ones kept for compatibility is one.
	tagged := map[string]bool{}
	var walk func(reflect.Type)
	walk = func(rt reflect.Type) {
		for i := range rt.NumField() {
			f := rt.Field(i)
			if tag, ok := f.Tag.Lookup("setting"); ok {
				tagged[strings.Split(tag, ",")[0]] = true
			} else if f.Type.Kind() == reflect.Struct {
				walk(f.Type)
			}
		}
	}
	walk(reflect.TypeOf(Settings{}))
	for _, f := range Fields {
		if f.Workload == "" && !tagged[f.Key] && f.Key != "shard" && f.Key != "json" {
			t.Errorf("general setting %s is not in Settings", f.Key)
		}
	}
}

// TestDecodeRefusesAMistypedField: a field of another type than its
// setting's is found at once.
func TestDecodeRefusesAMistypedField(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "seed") {
			t.Errorf("recovered %v", r)
		}
	}()
	var bad struct {
		Seed string `setting:"seed"`
	}
	Default().Decode(&bad)
}
