package config

import (
	"strings"
	"testing"
)

// config.json of a sharded run: the exported config, then the load
// settings the user gave and the shard block, byte for byte; of a merged
// run: the load settings without a shard block.
func TestRecordJSONPinned(t *testing.T) {
	c := Default()
	for k, v := range map[string]string{"workload": MultiRoundChat, "model": "m", "tokens_per_gb_kvcache": "5000",
		"shard": "0/2", "run_key": "nightly-1", "request_rate": "4", "ramp_up": "90s", "slo": "ttft=500ms"} {
		if err := c.SetString(k, v); err != nil {
			t.Fatal(err)
		}
	}
	head := `{
  "workload": "multi-round-chat",
  "model": "m",
  "served_model_name": "",
  "kv_cache_volume": 100,
  "tokens_per_gb_kvcache": 5000,
  "ignore_eos": false,
  "seed": 42,
  "no_warmup": false,
  "mrc_shared_prompt_length": 2000,
  "mrc_chat_history_length": 10000,
  "mrc_user_input_length": 50,
  "mrc_output_length": 200,
  "mrc_qps": 1,
  "mrc_duration": 60,
  "mrc_arrival": "fixed",
  "request_rate": "4",
  "ramp_up": "1m30s",
  "slo": "ttft=500ms"`
	if got, want := string(c.RecordJSON()), head+`,
  "shard": {"index":0,"count":2,"start_at":null,"run_key":"nightly-1"}
}
`; got != want {
		t.Errorf("RecordJSON:\n%s\nwant\n%s", got, want)
	}
	if got, want := string(c.MergedJSON()), head+"\n}\n"; got != want {
		t.Errorf("MergedJSON:\n%s\nwant\n%s", got, want)
	}
	c.SetString("start_at", "2026-01-02T15:04:05Z")
	c.SetString("shard", "")
	if got, want := string(c.RecordJSON()), `"no_warmup": false,`; !strings.Contains(got, want) || !strings.Contains(got, `"shard": {"index":0,"count":1,"start_at":"2026-01-02T15:04:05Z","run_key":"nightly-1"}`) || strings.Contains(got, "request_rate") {
		t.Errorf("RecordJSON of an unsharded run given --start-at:\n%s", got)
	}
}
